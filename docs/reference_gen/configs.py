"""The job configs page (reference/configs.md): every job kind of webapp.jobs.registry with its
config dataclass's fields (`knob(...)` metadata: help, choices, bounds, the paper's value)."""

from __future__ import annotations

import dataclasses
import typing

from .common import cell, setup_django


def type_name(hint: object) -> str:
    if typing.get_origin(hint) is typing.Union:  # Optional[float] reads "float or None"
        return " or ".join(type_name(arg) for arg in typing.get_args(hint))
    if isinstance(hint, type):
        return hint.__name__ if hint is not type(None) else "None"
    return str(hint).replace("typing.", "").replace("NoneType", "None")


def default_of(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        return f"`{field.default!r}`"
    if field.default_factory is not dataclasses.MISSING:
        return f"`{field.default_factory()!r}`"
    return "*required*"


def bounds_of(metadata: typing.Mapping) -> str:
    """The knob's bounds as they read: "min"/"max", exclusive where "min_open"/"max_open" are
    set (as check_between reads them), and its choices."""
    parts = []
    if "min" in metadata:
        parts.append(("> {}" if metadata.get("min_open") else "≥ {}").format(metadata["min"]))
    if "max" in metadata:
        parts.append(("< {}" if metadata.get("max_open") else "≤ {}").format(metadata["max"]))
    if metadata.get("choices"):
        parts.append("one of " + ", ".join(f"`{c}`" for c in metadata["choices"]))
    return "; ".join(parts)


def paper_value(paper: object) -> str:
    """The paper's setting as the Paper column shows it: a value, or per run ({"CIA": 3e-05,
    "StarPO": 1e-05} reads "CIA `3e-05`, StarPO `1e-05`"); empty where the paper fixes none."""
    if paper == "":
        return ""
    if isinstance(paper, dict):
        return ", ".join(f"{run} `{value!r}`" for run, value in paper.items())
    return f"`{paper!r}`"


def config_rows(cls: type) -> list[dict[str, str]]:
    """One row per field of a config dataclass: name, type, default, bounds, paper, help."""
    hints = typing.get_type_hints(cls)
    rows = []
    for field in dataclasses.fields(cls):
        if not field.init:
            continue
        meta = field.metadata
        paper = meta.get("paper", "")
        rows.append(
            {
                "name": field.name,
                "type": type_name(hints.get(field.name, field.type)),
                "default": default_of(field),
                "bounds": bounds_of(meta),
                "paper": paper_value(paper),
                "help": meta.get("help", ""),
            }
        )
    return rows


def config_page() -> str:
    setup_django()
    from webapp.jobs.registry import REGISTRY

    out = [
        "# Job configs",
        "",
        "Every job kind the REST API and the dashboard accept (`POST /api/jobs/` with "
        '`{"kind": ..., "config": {...}}`), with each config field\'s type, default, bounds and '
        "help. Generated from the config dataclasses (`knob(...)` metadata) by "
        "`docs/gen_reference.py`: edit the code, not this page. The command line of a training "
        "kind takes the same fields as `--flags` (see [Command lines](cli.md)).",
        "",
        "A *Paper* column shows the ΔBelief-RL paper's setting where its training scripts and "
        "config (`delta_belief_rl/scripts/train/*/qwen1.7b.sh`, `config/base_multiturn.yaml`) "
        "fix one, per run where its CIA and StarPO runs differ; it is recorded in the field's "
        "metadata (`knob(..., paper=...)`). The `grpo` defaults are the paper's (240 secrets × 16 "
        "games a step, validation on `dbrl/paper_val`); its named setting `cpu` (the launch form's "
        "`?preset=cpu`, `python -m training.grpo --preset cpu`) sizes a step for a CPU.",
        "",
    ]
    for name in sorted(REGISTRY):
        kind = REGISTRY[name]
        cls = kind.config_class()
        out += [f"## `{name}`", "", kind.description, ""]
        facts = [f"Config: `{kind.config.replace(':', '.')}`", f"runner: `{kind.runner}`"]
        if kind.gpu:
            facts.append("runs on the GPU queue")
        elif kind.models:
            facts.append(f"GPU queue when a heavy model is named in {', '.join(kind.models)}")
        out += ["; ".join(facts) + ".", ""]
        rows = config_rows(cls)
        if not rows:
            out += ["No fields.", ""]
            continue
        show_paper = any(r["paper"] for r in rows)
        head = ["Field", "Type", "Default", "Bounds"] + (["Paper"] if show_paper else []) + ["Help"]
        out += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in rows:
            values = [f"`{r['name']}`", f"`{r['type']}`", r["default"], r["bounds"]]
            values += [r["paper"]] if show_paper else []
            values += [r["help"]]
            out.append("| " + " | ".join(cell(v) for v in values) + " |")
        out.append("")
    return "\n".join(out)
