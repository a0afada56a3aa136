"""Command lines built from a job config dataclass (one flag per field, like trl/scripts)."""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from training.reporting import ConsoleReporter, StopRequested

TRUE = ("1", "true", "yes", "on")


def config_parser(cls: type, prog: str, description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description=description, formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        flags = ["--" + f.name.replace("_", "-")]
        if f.name == "base_model":
            flags.insert(0, "--base")
        kind = hints[f.name]
        if type(None) in typing.get_args(kind):  # `float | None`: the flag gives the value
            kind = next(a for a in typing.get_args(kind) if a is not type(None))
        convert = (lambda v: v.lower() in TRUE) if kind is bool else kind
        parser.add_argument(
            *flags,
            dest=f.name,
            type=convert,
            default=None,
            choices=f.metadata.get("choices"),
            # argparse formats help with %: a literal % in the text must be doubled
            help=f"{f.metadata.get('help', '')} (default: {f.default!r})".replace("%", "%%"),
        )
    if getattr(cls, "PRESETS", None):  # read before parsing (main_for): listed for --help
        parser.add_argument(
            "--preset",
            choices=list(cls.PRESETS),
            help="start from this named setting; the other flags change it",
        )
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        help="output folder for checkpoints and data; running again with it resumes",
    )
    return parser


def take_preset(
    argv: list[str], presets: dict[str, dict[str, Any]]
) -> tuple[list[str], dict[str, Any] | None]:
    """`argv` without its `--preset NAME` (or `--preset=NAME`) and the fields of that named
    setting ({} without one); None (after printing the error) for a name not in `presets`."""
    argv = list(argv)
    for i, arg in enumerate(argv):
        name = arg.split("=", 1)[1] if arg.startswith("--preset=") else None
        if arg == "--preset" and i + 1 < len(argv):
            name = argv[i + 1]
            del argv[i : i + 2]
        elif name is not None:
            del argv[i]
        if name is not None:
            if name not in presets:
                print(f"error: no preset {name!r} (presets: {', '.join(presets)})", file=sys.stderr)
                return argv, None
            return argv, presets[name]
    return argv, {}


def main_for(
    cls: type,
    run: Callable[..., dict],
    prog: str,
    description: str,
    argv: list[str] | None = None,
    *,
    defaults: dict[str, Any] | None = None,
) -> int:
    """Parse flags into `cls` (over `defaults`, else over the named setting of `--preset NAME`
    when `cls` has PRESETS), call `run(config, ConsoleReporter(out))`, print the result as
    JSON."""
    argv = list(sys.argv[1:] if argv is None else argv)
    presets = getattr(cls, "PRESETS", None)
    if presets and defaults is None:
        argv, defaults = take_preset(argv, presets)
        if defaults is None:
            return 2
    args = vars(config_parser(cls, prog, description).parse_args(argv))
    out = args.pop("out")
    args.pop("preset", None)
    try:
        config = cls(**{**(defaults or {}), **{k: v for k, v in args.items() if v is not None}})
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    main_process = (
        int(os.environ.get("RANK", "0")) == 0
    )  # torchrun / accelerate launch: rank 0 reports
    reporter = ConsoleReporter(out, stream=None if main_process else io.StringIO())
    try:
        result: dict[str, Any] = run(config, reporter)
    except StopRequested:
        print(json.dumps({"stopped": True}))
        return 1
    if main_process:
        print(json.dumps(result, indent=1, default=str))
    return 0
