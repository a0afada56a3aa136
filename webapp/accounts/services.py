from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.db import transaction
from django.db.models import Q
from rest_framework.throttling import BaseThrottle

from webapp.accounts.roles import PLAYER, RESEARCHER, ROLES

PROJECT_APPS = ("catalog", "play", "jobs", "labelling", "leaderboards")
# The arena's admin for researchers: see battles and exclusions and exclude a person (the battles
# admin's action adds an exclusion). Not change/delete: battles are results and an exclusion's
# record stays (lifting, on /arena/people/, keeps who and when).
ARENA_PERMISSIONS = ("view_battle", "view_arenaexclusion", "add_arenaexclusion")


def roles_ensure() -> None:
    """Create the role groups; researchers get every permission on the project's models and the
    arena's ARENA_PERMISSIONS (for the admin)."""
    for name in ROLES:
        Group.objects.get_or_create(name=name)
    researcher = Group.objects.get(name=RESEARCHER)
    arena = Q(content_type__app_label="arena", codename__in=ARENA_PERMISSIONS)
    researcher.permissions.set(
        Permission.objects.filter(Q(content_type__app_label__in=PROJECT_APPS) | arena)
    )


@transaction.atomic
def user_create(
    *, username: str, password: str, email: str = "", roles: tuple[str, ...] = (PLAYER,)
):
    roles_ensure()
    user = get_user_model()(username=username, email=email, is_staff=RESEARCHER in roles)
    user.set_password(password)
    user.full_clean()
    user.save()
    user.groups.set(Group.objects.filter(name__in=roles))
    return user


def user_grant_role(*, user, role: str) -> None:
    roles_ensure()
    user.groups.add(Group.objects.get(name=role))
    if role == RESEARCHER and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    user.__dict__.pop("_role_cache", None)


def client_ip(request) -> str:
    """The client's address as the guest limit sees it: REMOTE_ADDR, or behind TRUSTED_PROXIES
    proxies the address the nearest trusted one saw (DRF's NUM_PROXIES); used by django-axes."""
    return BaseThrottle().get_ident(request)


USERNAME_MAX = 150  # Django's username length; the login form does not enforce it server-side


def login_attempt_username(request, credentials: dict | None) -> str | None:
    """The username django-axes records for a login attempt, cut to a length a username can have
    (axes' column holds 255 characters: a longer one would be a database error on Postgres)."""
    data = credentials or getattr(request, "data", None) or request.POST
    username = data.get("username")
    return username[:USERNAME_MAX] if isinstance(username, str) else None
