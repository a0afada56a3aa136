"""Roles are Django groups: player, annotator, researcher (researchers are also staff)."""

from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

PLAYER, ANNOTATOR, RESEARCHER = "player", "annotator", "researcher"
ROLES = (PLAYER, ANNOTATOR, RESEARCHER)


def has_role(user, role: str) -> bool:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    if role == RESEARCHER and user.is_staff:
        return True
    cache = getattr(user, "_role_cache", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._role_cache = cache
    if role == ANNOTATOR and RESEARCHER in cache:
        return True  # researchers may label too
    return role in cache


def is_researcher(user) -> bool:
    return has_role(user, RESEARCHER)


def is_annotator(user) -> bool:
    return has_role(user, ANNOTATOR)


def require_role(user, role: str) -> None:
    if not has_role(user, role):
        raise PermissionDenied(f"this needs the {role} role")


def role_required(role: str):
    """A function view decorator: guests go to log-in, signed-in users without `role` get 403."""

    def decorate(view):
        @login_required
        @functools.wraps(view)
        def wrapped(request, *args, **kwargs):
            require_role(request.user, role)
            return view(request, *args, **kwargs)

        return wrapped

    return decorate


class IsResearcher(BasePermission):
    message = "Only researchers may do this."

    def has_permission(self, request, view) -> bool:
        return is_researcher(request.user)


class IsAnnotator(BasePermission):
    message = "Only annotators may do this."

    def has_permission(self, request, view) -> bool:
        return is_annotator(request.user)
