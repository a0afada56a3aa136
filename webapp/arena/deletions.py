"""A deleted account's battles keep their standing. Before the account goes, its battles and its
exclusions are re-keyed to a pseudonymous key (as a guest's are keyed by hashed IP), so an excluded
person's battles stay out of the ratings and a researcher can still exclude or lift them."""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import pre_delete

from webapp.arena.models import DELETED_PREFIX, ArenaExclusion, Battle


def deleted_key(user_id: int) -> str:
    return f"{DELETED_PREFIX}{user_id}"


def battles_rekey(sender, instance, **kwargs) -> None:
    """pre_delete of a user: its battles and exclusions take the account's pseudonymous key (the
    links to the account are emptied by the deletion itself)."""
    key = deleted_key(instance.pk)
    Battle.objects.filter(player=instance).update(guest_key=key)
    ArenaExclusion.objects.filter(player=instance).update(guest_key=key)


def connect() -> None:
    pre_delete.connect(
        battles_rekey, sender=settings.AUTH_USER_MODEL, dispatch_uid="arena.battles_rekey"
    )
