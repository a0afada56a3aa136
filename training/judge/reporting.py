"""The end of a judge training run, the same for both judges: the held-out figures as the final
metrics, the checkpoint and the `judge-weights` artifact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from training.reporting import Reporter


def report_weights(
    reporter: Reporter,
    steps: int,
    path: str | Path,
    held_out: dict[str, dict[str, Any]],
    *,
    config: Any,
    name: str,
    size: int,
    is_adapter: bool = False,
) -> None:
    """Report the written weights at `path` (`size` bytes; the artifact `name`) after `steps`
    optimizer steps: each split's numeric figures become the metrics `split/figure`."""
    final = {
        f"{split}/{k}": v
        for split, figures in held_out.items()
        for k, v in figures.items()
        if isinstance(v, (int, float)) and v is not None
    }
    reporter.metrics(steps, final)
    reporter.checkpoint(steps, path, metrics=final, config=config.to_dict(), is_adapter=is_adapter)
    reporter.artifact("judge-weights", name, path, meta={"bytes": size, **final})
    reporter.progress(1.0, "done")
