"""Words, versioned word lists and the model registry."""

from __future__ import annotations

import enum

from django.db import models

from webapp.core.fields import optional_link, optional_user_link


class Word(models.Model):
    text = models.CharField(max_length=100, unique=True)
    zipf_frequency = models.FloatField(null=True, blank=True, help_text="wordfreq Zipf frequency")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["text"]

    def __str__(self) -> str:
        return self.text


class WordList(models.Model):
    """One version of a named word list (curation runs create new versions)."""

    name = models.CharField(max_length=100)
    version = models.PositiveIntegerField(default=1)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True, help_text="where the words came from")
    license = models.CharField(max_length=200, blank=True)
    parent = optional_link("self", "children")
    curation_job = optional_link("jobs.Job", "+")
    provenance = models.JSONField(default=dict, blank=True)
    created_by = optional_user_link()
    created_at = models.DateTimeField(auto_now_add=True)
    words = models.ManyToManyField(Word, through="WordListEntry", related_name="word_lists")

    class Meta:
        ordering = ["name", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="unique_wordlist_version")
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.version}"


class Split(models.TextChoices):
    NONE = "", "none"
    SFT = "sft", "SFT"
    RL = "rl", "RL"
    VAL = "val", "validation"
    TEST = "test", "test"


class WordListEntry(models.Model):
    word_list = models.ForeignKey(WordList, on_delete=models.CASCADE, related_name="entries")
    word = models.ForeignKey(Word, on_delete=models.PROTECT, related_name="entries")
    split = models.CharField(max_length=8, choices=Split.choices, blank=True, default="")
    category = models.CharField(max_length=100, blank=True)
    difficulty = models.FloatField(
        null=True, blank=True, help_text="item difficulty (higher is harder)"
    )
    solve_rate = models.FloatField(null=True, blank=True)
    mean_questions = models.FloatField(null=True, blank=True)
    stats = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "word list entries"
        ordering = ["word_list", "word__text"]
        constraints = [
            models.UniqueConstraint(fields=["word_list", "word"], name="unique_wordlist_word")
        ]
        indexes = [models.Index(fields=["word_list", "split"])]

    def __str__(self) -> str:
        return f"{self.word_list}: {self.word}"


class ModelKind(models.TextChoices):
    KB = "kb", "knowledge-base judge"
    PRETRAINED = "pretrained", "pretrained judge (a cross-encoder fine-tuned on reference answers)"
    LEARNED = "learned", "learned judge (trained on reference answers)"
    HYBRID = "kb+learned", "knowledge base, then learned judge"
    INFOGAIN = "infogain", "information-gain guesser"
    NATURAL = "natural", "natural-question guesser (information gain over a learned answer model)"
    RANDOM = "random", "random guesser"
    TRANSFORMERS = "transformers", "transformers (local folder or hub id)"
    VLLM = "vllm", "vLLM (GPU workers)"
    OPENAI = "openai", "OpenAI-compatible server"
    ENCODER = "encoder", "pretrained encoder (a base for the pretrained judge; plays no role)"

    # Groups of kinds (not choices). HEAVY kinds load a neural network: their jobs go to the GPU
    # queue. LLM kinds are language models: slow per question, so scored as jobs, not in a request.
    # TRAINABLE kinds have local transformers weights to fine-tune. POOL_GUESSERS pick from a word
    # pool. Every kind outside HEAVY is a cheap CPU model that answers in the web process (the
    # pretrained judge's encoder too: about 15 ms an answer). ENCODER is a base for training only.
    HEAVY = enum.nonmember(frozenset({"transformers", "vllm"}))
    LLM = enum.nonmember(frozenset({"transformers", "vllm", "openai"}))
    TRAINABLE = enum.nonmember(frozenset({"transformers", "vllm"}))
    POOL_GUESSERS = enum.nonmember(frozenset({"infogain", "random"}))


class ModelRole(models.TextChoices):
    GUESSER = "guesser", "guesser"
    JUDGE = "judge", "judge"
    BOTH = "both", "guesser and judge"
    BASE = "base", "base model for training only"

    @classmethod
    def able_to(cls, role: str) -> frozenset[str]:
        """The roles of the models that can take `role` (guesser or judge); none for another."""
        return frozenset({role, cls.BOTH}) if role in (cls.GUESSER, cls.JUDGE) else frozenset()


class ModelSpec(models.Model):
    """Anything that plays or judges. Humans are users, not ModelSpecs."""

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=16, choices=ModelKind.choices)
    role = models.CharField(max_length=8, choices=ModelRole.choices, default=ModelRole.GUESSER)
    path = models.CharField(
        max_length=500,
        blank=True,
        help_text=(
            "local folder, base model name or hub id (transformers, vLLM); a learned judge's "
            "weights file or a pretrained judge's folder (empty: the shipped ones)"
        ),
    )
    endpoint = models.CharField(
        max_length=500, blank=True, help_text="base URL of an OpenAI-compatible server"
    )
    remote_model = models.CharField(
        max_length=200, blank=True, help_text="model name on the server"
    )
    adapter_path = models.CharField(max_length=500, blank=True, help_text="LoRA adapter folder")
    sampling = models.JSONField(default=dict, blank=True, help_text="default sampling parameters")
    options = models.JSONField(
        default=dict, blank=True, help_text="kind-specific options (KB: sense mode, closed)"
    )
    parent = optional_link("self", "children")
    produced_by = optional_link("jobs.Job", "+")
    description = models.TextField(blank=True)
    is_active = models.BooleanField(default=True)
    published = models.BooleanField(
        default=True,
        help_text="offered to players as an opponent (/play/ and the arena draw); a trained "
        "checkpoint starts unpublished until a researcher publishes it after an evaluation",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def can_guess(self) -> bool:
        return self.plays(ModelRole.GUESSER)

    @property
    def can_judge(self) -> bool:
        return self.plays(ModelRole.JUDGE)

    def plays(self, role: str) -> bool:
        """Whether this model can take `role` ("guesser" or "judge"; empty: any role)."""
        return not role or self.role in ModelRole.able_to(role)
