"""Command line: `python -m training.curation --source word_lists --word-lists dbrl/solved,dbrl/unsolved
--samples 4 --out var/curation`. Names resolve without a database: judges and guessers are
games.registry specs (kb, infogain, hf:PATH, openai:URL#MODEL), word lists are shipped lists
(dbrl/solved) or files. Writes curated.jsonl, dropped.jsonl and funnel.json to --out and
prints the summary and funnel as JSON."""  # noqa: E501 (the first line is the --help description)

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import typing
from pathlib import Path

from training.curation.config import CurationConfig
from training.curation.runner import Inputs, run
from training.reporting import ConsoleReporter


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m training.curation", description=__doc__.split("\n")[0]
    )
    hints = typing.get_type_hints(CurationConfig)
    for f in dataclasses.fields(CurationConfig):
        kind = hints[f.name]
        flag = "--" + f.name.replace("_", "-")
        help_text = f.metadata.get("help", "")
        if kind is bool:
            parser.add_argument(
                flag, type=lambda v: v.lower() in ("1", "true", "yes", "on"), help=help_text
            )
        elif typing.get_origin(kind) is tuple:
            inner = typing.get_args(kind)[0]
            parser.add_argument(
                flag,
                type=lambda v, t=inner: tuple(t(x.strip()) for x in v.split(",") if x.strip()),
                help=help_text + " (comma-separated)",
            )
        else:
            parser.add_argument(flag, type=kind, choices=f.metadata.get("choices"), help=help_text)
    parser.add_argument(
        "--words-file", type=Path, help="source=text: read the words from this file"
    )
    parser.add_argument("--out", type=Path, default=Path("var/curation"), help="output folder")
    return parser


def read_list(name: str) -> list[tuple[str, str]]:
    """A shipped list or a file as (word, category) pairs (games.wordlists.parse_entry)."""
    from games.wordlists import parse_entry, resolve

    return [
        (word, category)
        for word, _, category in map(
            parse_entry, resolve(name).read_text(encoding="utf-8").splitlines()
        )
    ]


def cli_inputs(config: CurationConfig) -> Inputs:
    from games.registry import build_guesser, build_judge, precision_options

    def judge(spec: str):
        return build_judge(spec, **precision_options(spec, config.precision))

    fairness = judge(config.fairness_judge).backend if config.fairness_judge else None
    lists = {n: read_list(n) for n in config.word_lists} if config.source == "word_lists" else None

    def make_guesser(pool):
        if config.guesser == "infogain":
            return build_guesser(config.guesser, pool=pool, max_turns=config.max_turns)
        return (
            build_guesser(config.guesser, pool=pool)
            if config.guesser == "random"
            else build_guesser(
                config.guesser, **precision_options(config.guesser, config.precision)
            )
        )

    return Inputs(
        judge=judge(config.judge), lists=lists, fairness=fairness, make_guesser=make_guesser
    )


def main(argv: list[str] | None = None) -> int:
    args = vars(_parser().parse_args(argv))
    out, words_file = args.pop("out"), args.pop("words_file")
    params = {k: v for k, v in args.items() if v is not None}
    if words_file is not None:
        params.setdefault("source", "text")
        params["words"] = words_file.read_text(encoding="utf-8")
    try:
        config = CurationConfig(**params)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    result = run(config, ConsoleReporter(out), inputs=cli_inputs(config))
    print(json.dumps({"summary": result.summary, "funnel": result.funnel}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
