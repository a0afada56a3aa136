"""Export jobs: games, turns and whole trajectories as JSONL and Parquet (loadable with
`datasets`), through webapp.play.exports."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError

from training.common.config import _check, check_between, knob
from training.reporting import StopRequested
from webapp.core.exports import TABLE_FORMATS
from webapp.play.exports import export_games, games_selection

FORMATS = TABLE_FORMATS
MODES = ("", "model", "human_guesser", "human_judge")


@dataclass(frozen=True)
class ExportConfig:
    job: int = knob(0, "only games of this job (0 = any)", min=0)
    word_list: str = knob("", "only games on this word list")
    guesser: str = knob("", "only games with this guesser model spec")
    judge: str = knob("", "only games with this judge model spec")
    mode: str = knob("", "model, human_guesser or human_judge (empty = all)", choices=MODES)
    finished_only: bool = knob(True, "skip games still being played")
    formats: str = knob("jsonl,parquet", "jsonl and/or parquet, comma-separated")
    limit: int = knob(0, "at most this many games (0 = all)", min=0)

    def __post_init__(self) -> None:
        wanted = [f.strip() for f in self.formats.split(",") if f.strip()]
        _check(
            bool(wanted) and all(f in FORMATS for f in wanted),
            f"formats must be a comma-separated subset of {', '.join(FORMATS)}",
        )
        for name in ("job", "limit"):
            check_between(self, name, message="job and limit must be 0 or positive")
        _check(
            self.mode in MODES, "mode must be model, human_guesser, human_judge or empty", "mode"
        )

    @property
    def format_list(self) -> list[str]:
        return [f.strip() for f in self.formats.split(",") if f.strip()]


def selection(config: ExportConfig):
    return games_selection(
        job=config.job,
        word_list=config.word_list,
        guesser=config.guesser,
        judge=config.judge,
        mode=config.mode,
        finished_only=config.finished_only,
    )


def check(config: ExportConfig) -> None:
    if not selection(config).exists():
        raise ValidationError({"__all__": ["no games match this selection"]})


def run(config: ExportConfig, reporter) -> dict:
    out_dir = Path(settings.EXPORTS_DIR) / f"job-{reporter.job_id}"
    out_dir.mkdir(parents=True, exist_ok=True)
    ids = list(selection(config).values_list("id", flat=True))
    if config.limit:
        ids = ids[: config.limit]

    def on_chunk(done: int) -> None:
        reporter.progress(done / max(len(ids), 1), f"{done}/{len(ids)} games")
        if done < len(ids) and reporter.should_stop():
            raise StopRequested()

    n_turns, files = export_games(ids, out_dir, config.format_list, on_chunk=on_chunk)
    for path in files:
        reporter.artifact(
            f"export-{path.suffix.lstrip('.')}", path.name, path, meta={"games": len(ids)}
        )
    return {
        "games": len(ids),
        "turns": n_turns,
        "files": [p.name for p in files],
        "directory": str(out_dir),
    }
