"""Benchmarks, each run as `python -m bench.<name>`; bench/results/ keeps the numbers they saved."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def argument_parser(module: str, doc: str) -> argparse.ArgumentParser:
    """The command line of `python -m <module>`, described by the first line of its docstring."""
    return argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n")[0])


def report(result: Any, save_as: Path | None = None) -> None:
    """Print `result` as JSON and, given `save_as`, write the same text there."""
    text = json.dumps(result, indent=1)
    print(text)
    if save_as is not None:
        save_as.parent.mkdir(parents=True, exist_ok=True)
        save_as.write_text(text + "\n", encoding="utf-8")
