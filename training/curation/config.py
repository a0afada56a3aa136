"""The curation job's config: one frozen dataclass, validated before anything is queued."""

from __future__ import annotations

import math
from dataclasses import dataclass

from training.common.config import (
    _check,
    check_between,
    check_choice,
    check_interval,
    check_named,
    check_precision,
    guesser_knob,
    judge_knob,
    knob,
    lockstep_batch_knob,
    max_turns_knob,
    precision_knob,
)

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
    name: str = knob(
        "curated/words", "name of the word list to create; each run adds a new version of it"
    )
    # 1. source
    source: str = knob(
        "word_lists",
        (
            "word_lists: the union of existing lists (newest versions); top_nouns: "
            "the most frequent knowledge-base nouns; text: the words pasted below"
        ),
        choices=SOURCES,
    )
    word_lists: tuple[str, ...] = knob(
        ("dbrl/solved", "dbrl/unsolved"),
        "source=word_lists: word list names, newest version of each",
    )
    top_n: int = knob(5000, "source=top_nouns: how many frequent nouns to take", min=1, max=100_000)
    words: str = knob(
        "",
        (
            "source=text: one word per line (or comma-separated); "
            "a TSV line's last column is the word, the one before it its category"
        ),
        multiline=True,
    )
    # 2. judge filter
    judge: str = judge_knob("judge of the solvability games (a judge model spec)")
    kb_filter: bool = knob(
        True,
        (
            "knowledge-base fairness rules: a KB noun, not a duplicate noun, "
            "not an excluded lexical file, enough features and hypernyms"
        ),
    )
    min_features: int = knob(
        10, "fewest knowledge-base features (relation:concept facts) a fair secret has", min=0
    )
    min_hypernyms: int = knob(
        4, "fewest 'isa' concepts (hypernym-closure lemmas, a proxy for hypernym depth)", min=0
    )
    exclude_lexnames: tuple[str, ...] = knob(
        (),
        (
            "drop words whose most frequent sense is in these WordNet lexical files, e.g. "
            + ",".join(ABSTRACT_LEXNAMES[:4])
            + " (abstract)"
        ),
    )
    fairness_judge: str = knob(
        "",
        (
            "optional LLM judge model spec asked "
            "'is this a fair 20Q secret?' per word (empty = none)"
        ),
    )
    # 3. solvability
    guesser: str = guesser_knob("reference guesser (a guesser model spec)")
    guesser_pool: str = knob(
        "candidates",
        (
            "candidate pool of infogain/random guessers: "
            "the words entering the games, or every KB noun"
        ),
        choices=GUESSER_POOLS,
    )
    samples: int = knob(32, "k: games per word", min=1, max=256)
    min_solved: int = knob(1, "keep words solved in at least this many of the k games", min=0)
    max_turns: int = max_turns_knob()
    answer_noise: float = knob(
        0.0,
        (
            "probability that a yes/no answer of the judge is flipped "
            "(seeded per game and turn); > 0 spreads the solve rates "
            "of a deterministic reference pair such as infogain + kb"
        ),
        min=0,
        max=0.5,
        max_open=True,
    )
    batch_size: int = lockstep_batch_knob(256)
    precision: str = precision_knob()  # of the judges' and guesser's models, where they run one
    # 4. difficulty
    difficulty: str = knob(
        "rasch",
        (
            "rasch: item difficulty of a Rasch fit "
            "(games.rating); logit: log((k-c+.5)/(c+.5)); higher is harder"
        ),
        choices=DIFFICULTY_MODELS,
    )
    # 5. splits
    split_by: str = knob(
        "fraction",
        "whether val/test/sft/rl are fractions of the kept words or numbers of words",
        choices=SPLIT_UNITS,
    )
    val: float = knob(0.05, "validation split (fraction or count)", min=0)
    test: float = knob(0.10, "test split (fraction or count)", min=0)
    sft: float = knob(0.075, "SFT split (fraction or count)", min=0)
    rl: float = knob(0.775, "RL split (fraction or count); words left over keep no split", min=0)
    seed: int = knob(0, "seed of the games and of the split assignment")
    # 6. training subsets (stored in entries' stats["subsets"])
    rl_band_low: float = knob(0.1, "RL band: lowest solve rate", min=0, max=1)
    rl_band_high: float = knob(0.9, "RL band: highest solve rate", min=0, max=1)
    rl_band_size: int = knob(1000, "RL band: at most this many RL-split words", min=0)
    curriculum: tuple[float, ...] = knob(
        (0.05, 0.10, 0.33, 0.50, 0.66),
        "curriculum_<pct>: RL-split words with a solve rate of at least each threshold",
    )
    subset_lists: bool = knob(
        False,
        ("also create a word list <name>/<subset> for the RL band and each curriculum subset"),
    )

    def __post_init__(self) -> None:
        name = self.name.strip()
        _check(
            bool(name) and len(name) <= 80 and name == self.name,
            "name: 1-80 characters without surrounding spaces",
        )
        check_choice(self, "source", SOURCES)
        _check(
            self.source != "word_lists" or any(n.strip() for n in self.word_lists),
            "word_lists: name at least one word list",
        )
        if self.source == "top_nouns":
            check_between(self, "top_n")
        _check(
            self.source != "text" or bool(self.words.strip()),
            "words: paste at least one word (source=text)",
        )
        _check(len(self.words) <= MAX_TEXT_CHARS, f"words: at most {MAX_TEXT_CHARS} characters")
        check_named(self, "judge", "a judge model spec")
        check_named(self, "guesser", "a guesser model spec")
        for minimum in ("min_features", "min_hypernyms"):
            check_between(self, minimum, message="min_features and min_hypernyms must be 0 or more")
        bad = [n for n in self.exclude_lexnames if not n.startswith("noun.")]
        if bad:
            raise ValueError(
                f"exclude_lexnames: WordNet noun lexical files look like noun.act, not {bad[0]!r}"
            )
        check_choice(self, "guesser_pool", GUESSER_POOLS)
        check_between(self, "samples")
        check_between(
            self, "min_solved", 0, self.samples, "min_solved must be between 0 and samples"
        )
        check_between(self, "max_turns")
        check_interval(self, "answer_noise")
        check_between(self, "batch_size")
        check_choice(self, "difficulty", DIFFICULTY_MODELS)
        self._check_splits()
        for band in ("rl_band_low", "rl_band_high"):
            check_between(
                self, band, message="rl_band_low/rl_band_high: need 0 <= low <= high <= 1"
            )
        _check(
            self.rl_band_low <= self.rl_band_high,
            "rl_band_low/rl_band_high: need 0 <= low <= high <= 1",
        )
        check_between(self, "rl_band_size", message="rl_band_size must be 0 or more")
        check_precision(self)
        if any(not 0.0 < t <= 1.0 for t in self.curriculum) or len(
            set(self.curriculum_names)
        ) != len(self.curriculum):
            raise ValueError("curriculum: distinct solve-rate thresholds in (0, 1]")

    def _check_splits(self) -> None:
        check_choice(self, "split_by", SPLIT_UNITS)
        values = self.split_values
        for name, value in values.items():  # bounds: the fields' metadata min (0)
            check_between(self, name, message="val, test, sft and rl must be finite and 0 or more")
            _check(value != math.inf, "val, test, sft and rl must be finite and 0 or more", name)
        if self.split_by == "fraction":
            _check(
                all(v <= 1 for v in values.values()),
                "val, test, sft, rl: fractions must be at most 1 (or set split_by=count)",
            )
            _check(
                sum(values.values()) <= 1 + 1e-9,
                f"val, test, sft, rl: fractions sum to {sum(values.values()):.4g} > 1",
            )
        else:
            _check(
                all(float(v).is_integer() for v in values.values() if math.isfinite(v)),
                "val, test, sft, rl: counts must be whole numbers (split_by=count)",
            )

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
