"""JSON-serialisable game state shared by the engine, the web app and training."""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass, field, fields
from typing import Any


class Verdict(enum.StrEnum):
    YES = "yes"
    NO = "no"
    FINISHED = "finished"  # the question named the secret: a win
    INVALID = "invalid"  # not a single yes/no question, too short or too long
    REPEATED = "repeated"  # already asked (after normalisation)
    UNKNOWN = "unknown"  # the judge cannot ground the question; it still costs a turn

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.value


WIN_RULES = ("reference", "strict", "lemma")  # see games.rules.rule_verdict
# the rules every summary and board reports success under, whichever rule a game was played under
REPORTED_WIN_RULES = ("reference", "strict")


class Outcome(str, enum.Enum):  # noqa: UP042 - str() stays "Outcome.WON"; StrEnum gives "won"
    PLAYING = "playing"
    WON = "won"
    LOST = "lost"  # ran out of turns
    ABANDONED = "abandoned"


@dataclass(frozen=True)
class GameConfig:
    """Rules and rewards of one game (defaults follow the ΔBelief-RL paper).

    `win_rule` decides which questions name the secret (games.rules): "reference", the paper's
    scripts' exact match anywhere in the question, "strict", a guess of one thing ("Is it a
    rowboat?") that is the secret or the same thing, or "lemma", the reference's exact and
    lemma/stem match (this project's "reference" before issue 32). Stored configs without it
    load as "reference".
    """

    max_turns: int = 20
    win_reward: float = 2.0
    invalid_penalty: float = -5.0
    repeated_penalty: float = -1.0
    unknown_penalty: float = (
        0.0  # a question the judge cannot ground costs only its turn by default
    )
    turn_penalty: float = -0.05
    min_question_chars: int = 2
    max_question_chars: int = 500
    win_rule: str = "reference"

    def __post_init__(self) -> None:
        if not 1 <= self.max_turns <= 200:
            raise ValueError(f"max_turns must be between 1 and 200, got {self.max_turns}")
        if not 1 <= self.min_question_chars <= self.max_question_chars:
            raise ValueError("min_question_chars must be >= 1 and <= max_question_chars")
        if self.win_rule not in WIN_RULES:
            raise ValueError(
                f"win_rule must be one of {', '.join(WIN_RULES)}, got {self.win_rule!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> GameConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data or {}) - known
        if unknown:
            raise ValueError(f"unknown game config keys: {sorted(unknown)}")
        return cls(**(data or {}))


@dataclass
class JudgeAnswer:
    """What a judge said about one question, before the engine's rule checks."""

    verdict: Verdict
    raw: str = ""  # the judge's own text (LLM output, KB feature used, ...)
    votes: dict[str, str] | None = None  # ensemble members' verdicts, by judge name
    disagreement: bool = False
    p_yes: float | None = None  # a probabilistic judge's probability of yes (how sure it is)


@dataclass
class Turn:
    """One question and its answer. Optional fields are filled where known."""

    index: int  # 0-based
    question: str
    verdict: Verdict
    feedback: str
    judge_raw: str = ""
    reward: dict[str, float] = field(default_factory=dict)  # named reward parts
    belief: float | None = None  # log b_t: log-prob of the secret after this turn
    delta_belief: float | None = None
    advantage: float | None = None
    candidates_left: int | None = None
    top_candidates: list[tuple[str, float]] | None = None  # guesser posterior after the turn
    latency_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def total_reward(self) -> float:
        return float(sum(self.reward.values()))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["verdict"] = self.verdict.value
        if self.top_candidates is not None:
            data["top_candidates"] = [[w, float(p)] for w, p in self.top_candidates]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Turn:
        data = dict(data)
        data["verdict"] = Verdict(data["verdict"])
        if data.get("top_candidates") is not None:
            data["top_candidates"] = [(w, float(p)) for w, p in data["top_candidates"]]
        return cls(**data)


@dataclass
class StepResult:
    turn: Turn
    done: bool
    won: bool


@dataclass
class Trajectory:
    secret: str
    seed: int
    config: GameConfig = field(default_factory=GameConfig)
    turns: list[Turn] = field(default_factory=list)
    outcome: Outcome = Outcome.PLAYING
    guesser: str = ""
    judge: str = ""
    initial_belief: float | None = None  # log b_0

    @property
    def won(self) -> bool:
        return self.outcome is Outcome.WON

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    def to_dict(self) -> dict[str, Any]:
        return {
            "secret": self.secret,
            "seed": self.seed,
            "config": self.config.to_dict(),
            "turns": [t.to_dict() for t in self.turns],
            "outcome": self.outcome.value,
            "guesser": self.guesser,
            "judge": self.judge,
            "initial_belief": self.initial_belief,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        return cls(
            secret=data["secret"],
            seed=int(data["seed"]),
            config=GameConfig.from_dict(data.get("config")),
            turns=[Turn.from_dict(t) for t in data.get("turns", [])],
            outcome=Outcome(data.get("outcome", "playing")),
            guesser=data.get("guesser", ""),
            judge=data.get("judge", ""),
            initial_belief=data.get("initial_belief"),
        )
