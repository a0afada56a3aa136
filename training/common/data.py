"""Game trajectories for training: teacher games, stored games (JSONL), selection, caching.

No torch here. Trajectories are games.types.Trajectory objects however they were made.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, TypedDict

from games.guessers.base import Guesser
from games.judges.base import Judge, playable_words
from games.rollout import rollout
from games.types import GameConfig, Outcome, Trajectory, Turn, Verdict

TURN_FIELDS = {f.name for f in fields(Turn)}


def game_seed(seed: int, word: str, sample: int) -> int:
    return zlib.crc32(f"train:{seed}:{word}:{sample}".encode()) & 0x7FFFFFFF


def pair_seed(seed: int, word: str, sample: int) -> int:
    """The game seed of (word, sample) in evaluation and curation runs."""
    return zlib.crc32(f"{seed}:{word}:{sample}".encode()) & 0x7FFFFFFF


def play_pairs(
    guesser: Guesser,
    judge: Judge,
    pairs: Sequence[tuple[str, int]],
    *,
    seed: int,
    config: GameConfig,
) -> list[Trajectory]:
    """One lock-step batch: a game per (word, sample) pair, seeded by `pair_seed`."""
    return rollout(
        guesser,
        judge,
        [w for w, _ in pairs],
        seeds=[pair_seed(seed, w, s) for w, s in pairs],
        config=config,
    )


def play_teacher(
    teacher: Guesser,
    judge: Judge,
    words: Sequence[str],
    *,
    samples: int = 1,
    max_turns: int = 20,
    seed: int = 0,
    batch_size: int = 256,
    should_stop: Callable[[], bool] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
) -> list[Trajectory]:
    """`samples` games per word in lock-step batches (seeded per word and sample)."""
    plan = [(w, s) for s in range(samples) for w in words]
    config = GameConfig(max_turns=max_turns)
    out: list[Trajectory] = []
    for start in range(0, len(plan), batch_size):
        if should_stop is not None and should_stop():
            from training.reporting import StopRequested

            raise StopRequested()
        chunk = plan[start : start + batch_size]
        out += rollout(
            teacher,
            judge,
            [w for w, _ in chunk],
            seeds=[game_seed(seed, w, s) for w, s in chunk],
            config=config,
        )
        if on_batch is not None:
            on_batch(len(out), len(plan))
    return out


def select_games(
    trajectories: Iterable[Trajectory], selection: str = "fastest"
) -> list[Trajectory]:
    """fastest: each secret's won games with the fewest turns (ties kept, as in ΔBelief-RL's SFT
    set); won: every won game; all: every finished game."""
    games = [t for t in trajectories if t.outcome is not Outcome.PLAYING and t.turns]
    if selection == "all":
        return games
    won = [t for t in games if t.won]
    if selection == "won":
        return won
    if selection != "fastest":
        raise ValueError(f"unknown selection {selection!r}")
    best: dict[str, int] = {}
    for t in won:
        best[t.secret] = min(best.get(t.secret, t.n_turns), t.n_turns)
    return [t for t in won if t.n_turns == best[t.secret]]


def trajectory_from_row(row: dict[str, Any]) -> Trajectory:
    """A Trajectory from `Trajectory.to_dict()` or a games-export `trajectories.jsonl` row."""
    turns = []
    for i, t in enumerate(row.get("turns") or []):
        data = {k: v for k, v in t.items() if k in TURN_FIELDS}
        data.setdefault("index", i)
        data.setdefault("feedback", "")
        data["reward"] = data.get("reward") or {}
        data["extra"] = data.get("extra") or {}
        turns.append(Turn.from_dict(data))
    config = row.get("config") or {}
    if isinstance(config, str):
        config = json.loads(config)
    outcome = row.get("outcome") or "playing"
    return Trajectory(
        secret=row["secret"],
        seed=int(row.get("seed") or 0),
        config=GameConfig.from_dict(config),
        turns=turns,
        outcome=Outcome(outcome) if outcome in Outcome._value2member_map_ else Outcome.PLAYING,
        guesser=str(row.get("guesser") or row.get("guesser_name") or ""),
        judge=str(row.get("judge") or row.get("judge_name") or ""),
        initial_belief=row.get("initial_belief"),
    )


def read_trajectories(path: str | Path) -> list[Trajectory]:
    return [trajectory_from_row(row) for row in read_jsonl(path)]


def write_jsonl(path: str | Path, rows: Iterable[dict]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(path)  # readers never see half a file (a resumed run reuses it)
    return path


def read_jsonl(path: str | Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def by_secret(trajectories: Iterable[Trajectory]) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = defaultdict(list)
    for t in trajectories:
        groups[t.secret].append(t)
    return dict(groups)


def is_informative(turn: Turn) -> bool:
    """A question the judge answered (a turn worth imitating or branching from)."""
    return turn.verdict in (Verdict.YES, Verdict.NO, Verdict.FINISHED)


def build_guesser_from_spec(spec: str, *, pool: Sequence[str] | None, max_turns: int) -> Guesser:
    """A teacher from a games registry spec (command line): infogain/random get the pool."""
    from games.registry import build_guesser

    if spec == "infogain":
        return build_guesser(spec, pool=pool, max_turns=max_turns)
    if spec == "random":
        return build_guesser(spec, pool=pool)
    return build_guesser(spec)


MakeGuesser = Callable[[Sequence[str] | None], Guesser]


def build_teacher(
    config: Any,
    secrets: Iterable[str],
    *,
    make_teacher: MakeGuesser | None = None,
    pool: Sequence[str] | None = None,
) -> Guesser:
    """The teacher of a GameDataConfig: `make_teacher` (web) or its games registry spec, over
    the pool (default: config.pool_word_list) plus every secret, so each secret is a candidate."""
    from games.wordlists import read_words

    if pool is None and config.pool_word_list:
        pool = read_words(config.pool_word_list)
    if pool is not None:
        pool = list(dict.fromkeys([*pool, *secrets]))
    build = make_teacher or (
        lambda p: build_guesser_from_spec(config.teacher, pool=p, max_turns=config.max_turns)
    )
    return build(pool)


def playable_or_fail(
    judge: Judge, words: Sequence[str], reporter: Any, *, limit: int, none_left: str
) -> list[str]:
    """The first `limit` (0 = all) of `words` that `judge` can play; the words it cannot play are
    logged as a warning, and none left is a ValueError saying `none_left`."""
    playable, skipped = playable_words(judge, words)
    if limit:
        playable = playable[:limit]
    if skipped:
        reporter.log(
            f"skipped {len(skipped)} words the judge cannot play: {', '.join(skipped[:20])}",
            level="warning",
        )
    if not playable:
        raise ValueError(none_left)
    return playable


class GameSources(TypedDict, total=False):
    """What the web app resolved for a game-data run (gather_games' keywords): a run takes them as
    `**sources` and passes them on."""

    trajectories: Sequence[Trajectory] | None
    make_teacher: MakeGuesser | None
    judge: Judge | None
    words: Sequence[str] | None
    pool: Sequence[str] | None


class RunInputs(GameSources, total=False):
    """A game-data run's keywords: its starting weights (`model_path`, a folder or hub id, default
    config.base_model; `adapter_path` merged into it) and the GameSources."""

    model_path: str | None
    adapter_path: str | None


def split_run_inputs(config: Any, inputs: RunInputs) -> tuple[str, str | None, GameSources]:
    """(model path, adapter path, sources) of a game-data run's keywords."""
    sources = {k: v for k, v in inputs.items() if k not in ("model_path", "adapter_path")}
    return inputs.get("model_path") or config.base_model, inputs.get("adapter_path"), sources


def gather_games(
    config: Any,
    reporter: Any,
    *,
    trajectories: Sequence[Trajectory] | None = None,
    make_teacher: MakeGuesser | None = None,
    judge: Judge | None = None,
    words: Sequence[str] | None = None,
    pool: Sequence[str] | None = None,
) -> list[Trajectory]:
    """The games a GameDataConfig asks for. The web app passes what it resolved from the database
    (stored `trajectories`, or `words`, `pool`, a teacher factory and the judge); the command line
    passes nothing and names resolve to shipped word lists / files and games registry specs."""
    from games.registry import build_judge
    from games.wordlists import read_words

    if config.source == "games":
        if (
            trajectories is None
        ):  # the command line: a file, filtered by the word list as the web app does
            if not config.games_file:
                raise ValueError(
                    "source=games needs stored games (web) or games_file (command line)"
                )
            trajectories = read_trajectories(config.games_file)
            if words is None and config.word_list:
                words = read_words(config.word_list)
        games = list(trajectories)
        if words is not None:
            wanted = set(words)
            games = [t for t in games if t.secret in wanted]
        reporter.log(f"{len(games)} stored games")
        return games
    if words is None:
        if config.split:
            raise ValueError(
                "split needs a word list of the web app; "
                "on the command line pass a file of the split"
            )
        words = read_words(config.word_list)
    judge = judge or build_judge(config.judge)
    playable = playable_or_fail(
        judge,
        words,
        reporter,
        limit=config.limit_words,
        none_left="no word of the word list can be played with this judge",
    )
    teacher = build_teacher(config, playable, make_teacher=make_teacher, pool=pool)
    reporter.log(
        f"playing {len(playable)} words × {config.teacher_samples} "
        f"with the teacher {config.teacher}"
    )
    games = play_teacher(
        teacher,
        judge,
        playable,
        samples=config.teacher_samples,
        max_turns=config.max_turns,
        seed=config.seed,
        should_stop=reporter.should_stop,
        on_batch=lambda done, total: reporter.progress(
            0.05 * done / total, f"teacher games {done}/{total}"
        ),
    )
    won = sum(t.won for t in games)
    reporter.log(
        f"teacher won {won} of {len(games)} games "
        f"(mean {sum(t.n_turns for t in games) / len(games):.1f} turns)"
    )
    return games
