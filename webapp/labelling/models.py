"""Judge votes, disagreement items and the labels people give them."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from webapp.core.fields import optional_link, optional_user_link


class LabelVerdict(models.TextChoices):
    YES = "yes", "yes"
    NO = "no", "no"
    UNCLEAR = "unclear", "unclear"
    INVALID = "invalid", "invalid"


class JudgeVote(models.Model):
    """One judge's (or one person's) verdict on a (secret, question, history)."""

    item = optional_link("DisagreementItem", "votes", on_delete=models.CASCADE)
    turn = optional_link("play.Turn", "votes")
    secret = models.CharField(max_length=100)
    question = models.TextField()
    judge_name = models.CharField(max_length=100, help_text="model spec name, or human:<username>")
    judge_spec = optional_link("catalog.ModelSpec", "votes")
    user = optional_user_link("votes")
    verdict = models.CharField(max_length=10)
    raw = models.TextField(blank=True)
    p_yes = models.FloatField(
        null=True, blank=True, help_text="a probabilistic judge's probability of yes"
    )
    job = optional_link("jobs.Job", "votes")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["secret"]), models.Index(fields=["judge_name"])]


class DisagreementItem(models.Model):
    secret = models.CharField(max_length=100)
    question = models.TextField()
    history = models.JSONField(default=list, blank=True, help_text="earlier turns as dicts")
    source_turn = optional_link("play.Turn", "+")
    job = optional_link("jobs.Job", "disagreement_items")
    is_control = models.BooleanField(
        default=False, help_text="an item the judges agreed on, kept as a control"
    )
    uncertainty = models.FloatField(
        null=True,
        blank=True,
        help_text=(
            "1 − 2·|p_yes − 0.5| of the least sure probabilistic judge's vote "
            "(1: a coin flip, 0: certain); the queue serves the most uncertain items first"
        ),
    )
    labels_needed = models.PositiveSmallIntegerField(default=3)
    labels_count = models.PositiveSmallIntegerField(default=0)
    gold = models.CharField(max_length=10, choices=LabelVerdict.choices, blank=True)
    adjudicated_by = optional_user_link("+")
    adjudicated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["labels_count", "labels_needed"])]
        constraints = [
            # one item per game turn, whichever disagreement job found it first
            models.UniqueConstraint(
                fields=["source_turn"],
                condition=models.Q(source_turn__isnull=False),
                name="unique_item_per_turn",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.secret}: {self.question[:50]}"


class Label(models.Model):
    item = models.ForeignKey(DisagreementItem, on_delete=models.CASCADE, related_name="labels")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="labels"
    )
    verdict = models.CharField(max_length=10, choices=LabelVerdict.choices)
    seconds = models.FloatField(null=True, blank=True, help_text="time to answer")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="unique_label_per_annotator")
        ]


class Assignment(models.Model):
    """An item handed to an annotator: a reserved slot until `expires_at`, or a skip (kept for
    good).

    Allocation counts live reservations, so concurrent annotators are never all shown the last
    free slot of an item; the Label row itself is the record of a finished assignment.
    """

    item = models.ForeignKey(DisagreementItem, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_assignments"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    skipped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["item", "annotator"], name="unique_assignment_per_annotator"
            )
        ]
        indexes = [models.Index(fields=["item", "expires_at"])]
