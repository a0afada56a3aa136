"""The arena: a battle links two games of "The model asks" on the word one person holds; an
exclusion leaves a person's battles out of the ratings (bad-faith answers)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from webapp.core.fields import optional_user_link, public_id_field

DELETED_PREFIX = "deleted:"  # the key of a deleted account's battles (webapp.arena.deletions)


def person_name(guest_key: str) -> str:
    """How the people page and the admin name a person known only by key."""
    if guest_key.startswith(DELETED_PREFIX):
        return f"deleted account {guest_key.removeprefix(DELETED_PREFIX)}"
    return f"guest {guest_key[:8]}" if guest_key else "guest"


class BattleOutcome(models.TextChoices):
    PLAYING = "", "not finished"
    A = "a", "A won"
    B = "b", "B won"
    TIE = "tie", "tie"


class Battle(models.Model):
    public_id = public_id_field()
    game_a = models.OneToOneField("play.Game", on_delete=models.PROTECT, related_name="battle_as_a")
    game_b = models.OneToOneField("play.Game", on_delete=models.PROTECT, related_name="battle_as_b")
    guesser_a = models.ForeignKey(
        "catalog.ModelSpec", on_delete=models.PROTECT, related_name="battles_as_a"
    )
    guesser_b = models.ForeignKey(
        "catalog.ModelSpec", on_delete=models.PROTECT, related_name="battles_as_b"
    )
    player = optional_user_link("arena_battles")
    guest_key = models.CharField(max_length=64, blank=True, help_text="hashed IP of a guest")
    word_source = models.CharField(
        max_length=16, help_text="kept (typed at the end) or word_list (drawn)"
    )
    word = models.CharField(max_length=100, blank=True, help_text="the person's word")
    word_in_kb = models.BooleanField(
        null=True, blank=True, help_text="whether the knowledge base knows the word"
    )
    word_nameable = models.BooleanField(
        null=True,
        blank=True,
        help_text="whether a side could name the word (a tie on a word neither could name counts "
        "nowhere); empty: not finished, or finished before this was recorded",
    )
    outcome = models.CharField(
        max_length=4, choices=BattleOutcome.choices, default=BattleOutcome.PLAYING, blank=True
    )
    abandoned = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["outcome"]), models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"battle {self.pk} ({self.outcome or 'unfinished'})"

    @property
    def finished(self) -> bool:
        return bool(self.outcome)


class ArenaExclusion(models.Model):
    """A person whose battles count nowhere (a signed-in user, or a guest by hashed IP), with who
    excluded them and when; lifting keeps the record."""

    # a deleted account's exclusion stays, keyed like its battles (webapp.arena.deletions)
    player = optional_user_link("arena_exclusions")
    guest_key = models.CharField(max_length=64, blank=True)
    reason = models.CharField(max_length=300, blank=True)
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_by = optional_user_link("+")
    lifted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        who = self.player.get_username() if self.player_id else person_name(self.guest_key)
        return f"{who} excluded{' (lifted)' if self.lifted_at else ''}"
