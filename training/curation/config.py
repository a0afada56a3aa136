"""The curation job's config: one frozen dataclass, validated before anything is queued."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from training.common.config import check_between, check_choice

SOURCES = ("word_lists", "top_nouns", "text")
SPLIT_UNITS = ("fraction", "count")
DIFFICULTY_MODELS = ("rasch", "logit")
GUESSER_POOLS = ("candidates", "kb")
SPLIT_NAMES = ("val", "test", "sft", "rl")  # assigned in this order from one seeded ordering
ABSTRACT_LEXNAMES = (
    "noun.act",
    "noun.attribute",
    "noun.cognition",
    "noun.communication",
    "noun.event",
    "noun.feeling",
    "noun.motive",
    "noun.phenomenon",
    "noun.process",
    "noun.quantity",
    "noun.relation",
    "noun.state",
    "noun.time",
    "noun.Tops",
)
MAX_TEXT_CHARS = 2_000_000


@dataclass(frozen=True)
class CurationConfig:
    name: str = field(
        default="curated/words",
        metadata={"help": "name of the word list to create; each run adds a new version of it"},
    )
    # 1. source
    source: str = field(
        default="word_lists",
        metadata={
            "help": "word_lists: the union of existing lists (newest versions); top_nouns: "
            "the most frequent knowledge-base nouns; text: the words pasted below",
            "choices": SOURCES,
        },
    )
    word_lists: tuple[str, ...] = field(
        default=("dbrl/solved", "dbrl/unsolved"),
        metadata={"help": "source=word_lists: word list names, newest version of each"},
    )
    top_n: int = field(
        default=5000, metadata={"help": "source=top_nouns: how many frequent nouns to take"}
    )
    words: str = field(
        default="",
        metadata={
            "help": "source=text: one word per line (or comma-separated); "
            "a TSV line's last column is the word, the one before it its category",
            "multiline": True,
        },
    )
    # 2. judge filter
    judge: str = field(
        default="kb", metadata={"help": "judge of the solvability games (a judge model spec)"}
    )
    kb_filter: bool = field(
        default=True,
        metadata={
            "help": "knowledge-base fairness rules: a KB noun, not a duplicate noun, "
            "not an excluded lexical file, enough features and hypernyms"
        },
    )
    min_features: int = field(
        default=10,
        metadata={
            "help": "fewest knowledge-base features (relation:concept facts) a fair secret has"
        },
    )
    min_hypernyms: int = field(
        default=4,
        metadata={
            "help": "fewest 'isa' concepts (hypernym-closure lemmas, a proxy for hypernym depth)"
        },
    )
    exclude_lexnames: tuple[str, ...] = field(
        default=(),
        metadata={
            "help": "drop words whose most frequent sense is in these WordNet lexical files, e.g. "
            + ",".join(ABSTRACT_LEXNAMES[:4])
            + " (abstract)"
        },
    )
    fairness_judge: str = field(
        default="",
        metadata={
            "help": "optional LLM judge model spec asked "
            "'is this a fair 20Q secret?' per word (empty = none)"
        },
    )
    # 3. solvability
    guesser: str = field(
        default="infogain", metadata={"help": "reference guesser (a guesser model spec)"}
    )
    guesser_pool: str = field(
        default="candidates",
        metadata={
            "help": "candidate pool of infogain/random guessers: "
            "the words entering the games, or every KB noun",
            "choices": GUESSER_POOLS,
        },
    )
    samples: int = field(default=32, metadata={"help": "k: games per word"})
    min_solved: int = field(
        default=1, metadata={"help": "keep words solved in at least this many of the k games"}
    )
    max_turns: int = field(default=20, metadata={"help": "questions per game"})
    answer_noise: float = field(
        default=0.0,
        metadata={
            "help": "probability that a yes/no answer of the judge is flipped "
            "(seeded per game and turn); > 0 spreads the solve rates "
            "of a deterministic reference pair such as infogain + kb"
        },
    )
    batch_size: int = field(default=256, metadata={"help": "games played in lock-step"})
    # 4. difficulty
    difficulty: str = field(
        default="rasch",
        metadata={
            "help": "rasch: item difficulty of a Rasch fit "
            "(games.rating); logit: log((k-c+.5)/(c+.5)); higher is harder",
            "choices": DIFFICULTY_MODELS,
        },
    )
    # 5. splits
    split_by: str = field(
        default="fraction",
        metadata={
            "help": "whether val/test/sft/rl are fractions of the kept words or numbers of words",
            "choices": SPLIT_UNITS,
        },
    )
    val: float = field(default=0.05, metadata={"help": "validation split (fraction or count)"})
    test: float = field(default=0.10, metadata={"help": "test split (fraction or count)"})
    sft: float = field(default=0.075, metadata={"help": "SFT split (fraction or count)"})
    rl: float = field(
        default=0.775,
        metadata={"help": "RL split (fraction or count); words left over keep no split"},
    )
    seed: int = field(default=0, metadata={"help": "seed of the games and of the split assignment"})
    # 6. training subsets (stored in entries' stats["subsets"])
    rl_band_low: float = field(default=0.1, metadata={"help": "RL band: lowest solve rate"})
    rl_band_high: float = field(default=0.9, metadata={"help": "RL band: highest solve rate"})
    rl_band_size: int = field(
        default=1000, metadata={"help": "RL band: at most this many RL-split words"}
    )
    curriculum: tuple[float, ...] = field(
        default=(0.05, 0.10, 0.33, 0.50, 0.66),
        metadata={
            "help": "curriculum_<pct>: RL-split words with a solve rate of at least each threshold"
        },
    )
    subset_lists: bool = field(
        default=False,
        metadata={
            "help": "also create a word list <name>/<subset> "
            "for the RL band and each curriculum subset"
        },
    )

    def __post_init__(self) -> None:
        name = self.name.strip()
        if not name or len(name) > 80 or name != self.name:
            raise ValueError("name: 1-80 characters without surrounding spaces")
        check_choice(self, "source", SOURCES)
        if self.source == "word_lists" and not [n for n in self.word_lists if n.strip()]:
            raise ValueError("word_lists: name at least one word list")
        if self.source == "top_nouns" and not 1 <= self.top_n <= 100_000:
            raise ValueError("top_n must be between 1 and 100000")
        if self.source == "text" and not self.words.strip():
            raise ValueError("words: paste at least one word (source=text)")
        if len(self.words) > MAX_TEXT_CHARS:
            raise ValueError(f"words: at most {MAX_TEXT_CHARS} characters")
        if not self.judge.strip():
            raise ValueError("judge: name a judge model spec")
        if not self.guesser.strip():
            raise ValueError("guesser: name a guesser model spec")
        if self.min_features < 0 or self.min_hypernyms < 0:
            raise ValueError("min_features and min_hypernyms must be 0 or more")
        bad = [n for n in self.exclude_lexnames if not n.startswith("noun.")]
        if bad:
            raise ValueError(
                f"exclude_lexnames: WordNet noun lexical files look like noun.act, not {bad[0]!r}"
            )
        check_choice(self, "guesser_pool", GUESSER_POOLS)
        check_between(self, "samples", 1, 256)
        if not 0 <= self.min_solved <= self.samples:
            raise ValueError("min_solved must be between 0 and samples")
        check_between(self, "max_turns", 1, 200)
        if not 0.0 <= self.answer_noise < 0.5:
            raise ValueError("answer_noise must be in [0, 0.5)")
        check_between(self, "batch_size", 1, 4096)
        check_choice(self, "difficulty", DIFFICULTY_MODELS)
        self._check_splits()
        if not 0.0 <= self.rl_band_low <= self.rl_band_high <= 1.0:
            raise ValueError("rl_band_low/rl_band_high: need 0 <= low <= high <= 1")
        if self.rl_band_size < 0:
            raise ValueError("rl_band_size must be 0 or more")
        if any(not 0.0 < t <= 1.0 for t in self.curriculum) or len(
            set(self.curriculum_names)
        ) != len(self.curriculum):
            raise ValueError("curriculum: distinct solve-rate thresholds in (0, 1]")

    def _check_splits(self) -> None:
        check_choice(self, "split_by", SPLIT_UNITS)
        values = self.split_values
        if any(not math.isfinite(v) or v < 0 for v in values.values()):
            raise ValueError("val, test, sft and rl must be finite and 0 or more")
        if self.split_by == "fraction":
            if any(v > 1 for v in values.values()):
                raise ValueError(
                    "val, test, sft, rl: fractions must be at most 1 (or set split_by=count)"
                )
            if sum(values.values()) > 1 + 1e-9:
                raise ValueError(
                    f"val, test, sft, rl: fractions sum to {sum(values.values()):.4g} > 1"
                )
        elif any(not float(v).is_integer() for v in values.values()):
            raise ValueError("val, test, sft, rl: counts must be whole numbers (split_by=count)")

    @property
    def split_values(self) -> dict[str, float]:
        return {name: float(getattr(self, name)) for name in SPLIT_NAMES}

    @property
    def split_total_count(self) -> int:
        """split_by=count: how many words the splits need."""
        return int(sum(self.split_values.values())) if self.split_by == "count" else 0

    @property
    def curriculum_names(self) -> list[str]:
        return [curriculum_name(t) for t in self.curriculum]


def curriculum_name(threshold: float) -> str:
    return f"curriculum_{round(threshold * 100)}"
