"""Leaderboard snapshots: computed by a task from games, read by views."""

from __future__ import annotations

from django.db import models


class LeaderboardSnapshot(models.Model):
    board = models.CharField(max_length=32, help_text="models | humans | ability | judges")
    key = models.CharField(
        max_length=300, blank=True, help_text="e.g. word list / judge / max turns"
    )
    rows = models.JSONField(default=list)
    meta = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-computed_at"]
        indexes = [models.Index(fields=["board", "key", "computed_at"])]

    def __str__(self) -> str:
        return f"{self.board} {self.key} @ {self.computed_at:%Y-%m-%d %H:%M}"


class RefreshPending(models.Model):
    """A queued "Recompute now" not yet started: at most one row per refresh, so clicks while one
    waits queue nothing more (the worker deletes the row when the refresh starts)."""

    key = models.CharField(max_length=32, unique=True)
    queued_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.key} refresh queued at {self.queued_at:%Y-%m-%d %H:%M:%S}"
