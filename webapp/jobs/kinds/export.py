"""Export jobs: games, turns and whole trajectories as JSONL and Parquet (loadable with `datasets`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError

from training.reporting import StopRequested
from webapp.play.models import Game, Turn

FORMATS = ("jsonl", "parquet")
CHUNK = 1000
GAME_FIELDS = ("id", "public_id", "mode", "secret", "word_list__name", "word_list__version", "guesser__name",
               "judge__name", "player__username", "job_id", "sample_index", "seed", "outcome", "n_turns",
               "initial_belief", "config", "created_at", "finished_at")
TURN_FIELDS = ("game_id", "index", "question", "verdict", "feedback", "judge_raw", "reward", "total_reward", "belief",
               "delta_belief", "advantage", "candidates_left", "top_candidates", "latency_ms", "judged_by__username")


@dataclass(frozen=True)
class ExportConfig:
    job: int = field(default=0, metadata={"help": "only games of this job (0 = any)"})
    word_list: str = field(default="", metadata={"help": "only games on this word list"})
    guesser: str = field(default="", metadata={"help": "only games with this guesser model spec"})
    judge: str = field(default="", metadata={"help": "only games with this judge model spec"})
    mode: str = field(default="", metadata={"help": "model, human_guesser or human_judge (empty = all)",
                                            "choices": ("", "model", "human_guesser", "human_judge")})
    finished_only: bool = field(default=True, metadata={"help": "skip games still being played"})
    formats: str = field(default="jsonl,parquet", metadata={"help": "jsonl and/or parquet, comma-separated"})
    limit: int = field(default=0, metadata={"help": "at most this many games (0 = all)"})

    def __post_init__(self) -> None:
        wanted = [f.strip() for f in self.formats.split(",") if f.strip()]
        if not wanted or any(f not in FORMATS for f in wanted):
            raise ValueError(f"formats must be a comma-separated subset of {', '.join(FORMATS)}")
        if self.job < 0 or self.limit < 0:
            raise ValueError("job and limit must be 0 or positive")
        if self.mode not in ("", "model", "human_guesser", "human_judge"):
            raise ValueError("mode must be model, human_guesser, human_judge or empty")

    @property
    def format_list(self) -> list[str]:
        return [f.strip() for f in self.formats.split(",") if f.strip()]


def selection(config: ExportConfig):
    games = Game.objects.all()
    if config.job:
        games = games.filter(job_id=config.job)
    if config.word_list:
        games = games.filter(word_list__name=config.word_list)
    if config.guesser:
        games = games.filter(guesser__name=config.guesser)
    if config.judge:
        games = games.filter(judge__name=config.judge)
    if config.mode:
        games = games.filter(mode=config.mode)
    if config.finished_only:
        games = games.exclude(outcome="playing")
    return games.order_by("id")


def check(config: ExportConfig) -> None:
    if not selection(config).exists():
        raise ValidationError({"__all__": ["no games match this selection"]})


def _jsonable(row: dict) -> dict:
    return {k.replace("__", "_"): (v.isoformat() if hasattr(v, "isoformat") else str(v) if k == "public_id" else v)
            for k, v in row.items()}


class _Writers:
    """Appends rows to JSONL files and (in chunks) to Parquet files."""

    def __init__(self, out_dir: Path, formats: list[str]):
        self.out_dir, self.formats = out_dir, formats
        self.jsonl = {name: open(out_dir / f"{name}.jsonl", "w", encoding="utf-8") for name in ("games", "turns", "trajectories")} \
            if "jsonl" in formats else {}
        self.parquet: dict = {}

    def write(self, name: str, rows: list[dict]) -> None:
        if not rows:
            return
        if name in self.jsonl:
            self.jsonl[name].writelines(json.dumps(r, default=str) + "\n" for r in rows)
        if "parquet" in self.formats and name != "trajectories":
            import pyarrow as pa
            import pyarrow.parquet as pq

            flat = [{k: (json.dumps(v) if isinstance(v, (dict, list)) else v) for k, v in r.items()} for r in rows]
            table = pa.Table.from_pylist(flat)
            if name not in self.parquet:
                self.parquet[name] = pq.ParquetWriter(self.out_dir / f"{name}.parquet", table.schema)
            self.parquet[name].write_table(table.cast(self.parquet[name].schema))

    def close(self) -> list[Path]:
        for f in self.jsonl.values():
            f.close()
        for w in self.parquet.values():
            w.close()
        return sorted(p for p in self.out_dir.iterdir() if p.suffix in (".jsonl", ".parquet"))


def run(config: ExportConfig, reporter) -> dict:
    out_dir = Path(settings.EXPORTS_DIR) / f"job-{reporter.job_id}"
    out_dir.mkdir(parents=True, exist_ok=True)
    ids = list(selection(config).values_list("id", flat=True))
    if config.limit:
        ids = ids[: config.limit]
    writers = _Writers(out_dir, config.format_list)
    n_turns = 0
    try:
        for offset in range(0, len(ids), CHUNK):
            if reporter.should_stop():
                raise StopRequested()
            chunk = ids[offset : offset + CHUNK]
            games = [_jsonable(g) for g in Game.objects.filter(id__in=chunk).order_by("id").values(*GAME_FIELDS)]
            turns = [_jsonable(t) for t in Turn.objects.filter(game_id__in=chunk).order_by("game_id", "index").values(*TURN_FIELDS)]
            by_game: dict[int, list[dict]] = {}
            for t in turns:
                by_game.setdefault(t["game_id"], []).append(t)
            writers.write("games", games)
            writers.write("turns", turns)
            writers.write("trajectories", [{**g, "turns": by_game.get(g["id"], [])} for g in games])
            n_turns += len(turns)
            reporter.progress((offset + len(chunk)) / max(len(ids), 1), f"{offset + len(chunk)}/{len(ids)} games")
    finally:
        files = writers.close()
    for path in files:
        reporter.artifact(f"export-{path.suffix.lstrip('.')}", path.name, path, meta={"games": len(ids)})
    return {"games": len(ids), "turns": n_turns, "files": [p.name for p in files], "directory": str(out_dir)}
