"""Model fields the apps declare alike, each rule in one place. Every helper returns a plain Django
field (the same deconstruct() as writing it out), so migrations do not see them."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


def optional_link(
    to, related_name: str | None = None, *, on_delete=models.SET_NULL, **options
) -> models.ForeignKey:
    """A link that may be empty (null, blank in forms); by default it outlives its target and is
    emptied when the target is deleted. Pass `on_delete` for another rule (PROTECT, CASCADE)."""
    return models.ForeignKey(
        to, null=True, blank=True, on_delete=on_delete, related_name=related_name, **options
    )


def optional_user_link(related_name: str | None = None, **options) -> models.ForeignKey:
    """An optional link to a person (the user model): a player, an author, a reviewer."""
    return optional_link(settings.AUTH_USER_MODEL, related_name, **options)


def public_id_field() -> models.UUIDField:
    """The random id a row is addressed by in URLs and the API, its integer key kept inside."""
    return models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
