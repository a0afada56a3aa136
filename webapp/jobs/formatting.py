"""Job results and timings as people read them: rates as percentages with their 95% interval,
counts with thousands separators, floats rounded, lists and dicts as small tables, durations and
the time left; never a Python repr."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

MAX_TABLE_ROWS = 50  # a longer list or dict shows its first rows and says how many it left out
MAX_LIST_ITEMS = 30  # a list of words, ids, ... shows its first items as text
RATE_NAMES = {"pass_at_k", "accuracy", "agreement"}  # a kappa is not a rate
NOT_RATES = ("learning_rate",)  # a step size (1e-5), not a fraction: "0.0%" would hide it


def is_rate(key: str, value: Any) -> bool:
    """A fraction in [0, 1] by its name: *_rate, frac_*, *_fraction, pass@k, accuracy."""
    name = key.lower()
    if name.endswith(NOT_RATES):
        return False
    named = (
        name.endswith(("_rate", "_fraction", "_accuracy", "_share"))
        or name.startswith("frac_")
        or name in RATE_NAMES
    )
    return (
        named and isinstance(value, float | int) and not isinstance(value, bool) and 0 <= value <= 1
    )


def percent(value: float, digits: int = 1) -> str:
    return f"{100 * value:.{digits}f}%"


def rate_text(value: float, interval: Any = None) -> str:
    """0.9242, (0.901, 0.945) → "92.4% [90.1, 94.5]"."""
    text = percent(value)
    if isinstance(interval, list | tuple) and len(interval) == 2 and None not in interval:
        low, high = (100 * float(v) for v in interval)
        text += f" [{low:.1f}, {high:.1f}]"
    return text


def number_text(value: float | int) -> str:
    """Counts with thousands separators; floats to a few significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    size = abs(value)
    if size >= 100:
        return f"{value:,.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def scalar_text(key: str, value: Any, interval: Any = None) -> str:
    if value is None or value == "":
        return "—"
    if isinstance(value, str):
        return value
    if is_rate(key, value):
        return rate_text(value, interval)
    if isinstance(value, bool | int | float):
        return number_text(value)
    if isinstance(value, list | tuple):
        shown = ", ".join(scalar_text(key, v) for v in value[:MAX_LIST_ITEMS]) or "—"
        more = len(value) - MAX_LIST_ITEMS
        return f"{shown}, … ({more:,} more)" if more > 0 else shown
    if isinstance(value, dict):
        return "; ".join(f"{k}: {scalar_text(str(k), v)}" for k, v in value.items()) or "—"
    return str(value)


def interval_of(result: dict, key: str) -> Any:
    """The 95% interval stored beside a rate: success_rate → success_ci95 (or success_rate_ci95)."""
    base = key.removesuffix("_rate")
    return result.get(f"{base}_ci95", result.get(f"{key}_ci95"))


def _is_interval_key(result: dict, key: str) -> bool:
    base = key.removesuffix("_ci95")
    return key.endswith("_ci95") and (f"{base}_rate" in result or base in result)


def _columns(rows: list[dict]) -> list[str]:
    """The keys of a table's rows, in first-seen order, intervals folded into their rates."""
    keys = dict.fromkeys(c for row in rows for c in row)
    return [c for c in keys if not _is_interval_key(keys, c)]


def value_table(key: str, value: Any) -> dict | None:
    """A list or dict as {"head": [...], "rows": [[...]], "more": n}; None for a scalar or a plain
    list of scalars (shown as text)."""
    if isinstance(value, dict) and value:
        items = list(value.items())
        if all(isinstance(v, dict) for _, v in items):  # {row: {column: value}}
            columns = _columns([v for _, v in items])
            rows = [
                [str(name), *(scalar_text(c, v.get(c), interval_of(v, c)) for c in columns)]
                for name, v in items
            ]
            head = ["", *(c.replace("_", " ") for c in columns)]
        else:
            rows = [[str(k), scalar_text(str(k), v, interval_of(value, str(k)))] for k, v in items]
            head = ["", key.replace("_", " ")]
    elif isinstance(value, list | tuple) and value and all(isinstance(v, dict) for v in value):
        columns = _columns(value)
        rows = [[scalar_text(c, v.get(c), interval_of(v, c)) for c in columns] for v in value]
        head = [c.replace("_", " ") for c in columns]
    else:
        return None
    return {"head": head, "rows": rows[:MAX_TABLE_ROWS], "more": max(0, len(rows) - MAX_TABLE_ROWS)}


def result_rows(result: dict, skip: tuple[str, ...] = ()) -> list[dict]:
    """One row per result key: {"key", "label", "text"} or {"key", "label", "table"}."""
    rows = []
    for key, value in result.items():
        if key in skip or _is_interval_key(result, key):
            continue
        label = key.replace("_", " ")
        table = value_table(key, value)
        if table:
            rows.append({"key": key, "label": label, "table": table})
        else:
            rows.append(
                {
                    "key": key,
                    "label": label,
                    "text": scalar_text(key, value, interval_of(result, key)),
                }
            )
    return rows


def final_metrics(jobs: list, results: dict | None = None) -> dict:
    """The compare page's table: the scalar results of each job side by side, one row per job.
    `results` maps a job's id to (results, partial) (see selectors.jobs_results); without it, each
    job's stored result."""
    results = results or {}
    shown = {job.pk: results.get(job.pk, (job.result or {}, False)) for job in jobs}
    columns = list(
        dict.fromkeys(
            key
            for result, _ in shown.values()
            for key, value in result.items()
            if not isinstance(value, dict | list | tuple) and not _is_interval_key(result, key)
        )
    )
    rows = [
        {
            "job": job,
            "partial": shown[job.pk][1],
            "cells": [
                scalar_text(c, shown[job.pk][0].get(c), interval_of(shown[job.pk][0], c))
                for c in columns
            ],
        }
        for job in jobs
    ]
    return {
        "head": [c.replace("_", " ") for c in columns],
        "rows": rows,
        "partial": any(r["partial"] for r in rows),
    }


def duration_text(delta: timedelta) -> str:
    """3725 s → "1 h 2 min"; 65 s → "1 min 5 s"."""
    seconds = max(0, int(delta.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours:,} h {minutes} min"
    if minutes:
        return f"{minutes} min {secs} s"
    return f"{secs} s"


def job_timing(job, now: datetime) -> dict:
    """How long the job ran (started → finished, or → now while it runs) and, while running with
    some progress, the time left at its pace so far."""
    if job.started_at is None:
        waited = duration_text(now - job.created_at) if job.is_active else None
        return {"duration": None, "left": None, "waited": waited}
    end = job.finished_at or now
    elapsed = end - job.started_at
    left = None
    if job.finished_at is None and job.is_active and 0 < job.progress < 1:
        left = duration_text(elapsed * ((1 - job.progress) / job.progress))
    return {"duration": duration_text(elapsed), "left": left, "waited": None}
