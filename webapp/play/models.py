"""Games and their turns: every game ever played, by people or models."""

from __future__ import annotations

from django.db import models

from games.types import Outcome
from webapp.core.fields import optional_link, optional_user_link, public_id_field


class GameMode(models.TextChoices):
    HUMAN_GUESSER = "human_guesser", "person asks, model judges"
    HUMAN_JUDGE = "human_judge", "model asks, person judges"
    MODEL_VS_MODEL = "model", "model asks, model judges"


class GameStatus(models.TextChoices):
    PLAYING = "playing", "playing"
    FINISHED = "finished", "finished"
    ABANDONED = "abandoned", "abandoned"


# A game's outcome is the engine's (games.types.Outcome), stored by its value and labelled by it:
# webapp.play.records turns the one into the other.
GameOutcome = models.TextChoices(
    "GameOutcome", [(o.name, (o.value, o.value)) for o in Outcome], module=__name__
)


class Game(models.Model):
    public_id = public_id_field()
    mode = models.CharField(
        max_length=16, choices=GameMode.choices, default=GameMode.MODEL_VS_MODEL
    )
    secret = models.CharField(
        max_length=100, help_text="the secret word (for human judges: as confirmed at the end)"
    )
    word = optional_link("catalog.Word", "games")
    word_list = optional_link("catalog.WordList", "games")
    guesser = optional_link("catalog.ModelSpec", "games_as_guesser", on_delete=models.PROTECT)
    judge = optional_link("catalog.ModelSpec", "games_as_judge", on_delete=models.PROTECT)
    player = optional_user_link("games")
    guest_key = models.CharField(max_length=64, blank=True, help_text="hashed IP of a guest player")
    config = models.JSONField(default=dict, blank=True, help_text="games.GameConfig as a dict")
    seed = models.BigIntegerField(default=0)
    status = models.CharField(max_length=10, choices=GameStatus.choices, default=GameStatus.PLAYING)
    outcome = models.CharField(
        max_length=10, choices=GameOutcome.choices, default=GameOutcome.PLAYING
    )
    n_turns = models.PositiveIntegerField(default=0)
    initial_belief = models.FloatField(null=True, blank=True, help_text="log b_0")
    job = optional_link("jobs.Job", "games")
    sample_index = models.PositiveIntegerField(
        default=0, help_text="which of the k samples for this word (eval jobs)"
    )
    state = models.JSONField(
        default=dict, blank=True, help_text="guesser state needed to resume a live game"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["outcome"]),
            models.Index(fields=["secret"]),
            models.Index(fields=["created_at"]),
        ]
        constraints = [
            # an evaluation job plays each (word, sample) once, even when a dead worker's job is
            # re-run
            models.UniqueConstraint(
                fields=["job", "secret", "sample_index"],
                condition=models.Q(job__isnull=False),
                name="unique_job_game_sample",
            ),
        ]

    def __str__(self) -> str:
        return f"game {self.pk} ({self.secret}, {self.outcome})"

    @property
    def won(self) -> bool:
        return self.outcome == GameOutcome.WON


class Turn(models.Model):
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="turns")
    index = models.PositiveIntegerField()
    question = models.TextField()
    verdict = models.CharField(max_length=10)
    feedback = models.CharField(max_length=300, blank=True)
    judge_raw = models.TextField(blank=True, help_text="the judge's own text")
    judged_by = optional_user_link(
        "judged_turns", help_text="the person who answered (human judge games)"
    )
    reward = models.JSONField(default=dict, blank=True, help_text="named reward parts")
    total_reward = models.FloatField(default=0.0)
    belief = models.FloatField(null=True, blank=True, help_text="log b_t")
    delta_belief = models.FloatField(null=True, blank=True)
    advantage = models.FloatField(null=True, blank=True)
    candidates_left = models.IntegerField(null=True, blank=True)
    top_candidates = models.JSONField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "index"]
        constraints = [
            models.UniqueConstraint(fields=["game", "index"], name="unique_game_turn_index")
        ]

    def __str__(self) -> str:
        return f"{self.game_id}#{self.index}: {self.question[:40]} -> {self.verdict}"

    @property
    def decided_by_rules(self) -> bool:
        """The game's rules answered (a guess, a repeat, an invalid question: judge_raw
        "rule: <reason>", games.engine), not the judge."""
        return self.judge_raw.startswith("rule: ")
