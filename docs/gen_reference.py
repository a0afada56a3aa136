"""The generated reference pages: job configs, command lines and the REST API, from the code.

Used two ways:

* as an MkDocs hook (mkdocs.yml `hooks:`): `on_files` adds the pages to every build and serve,
  so they are never stored in the repository and cannot go stale;
* as a script, `python docs/gen_reference.py OUT_DIR`, which writes the same pages to OUT_DIR
  (to read them without building the site).

Sources: the job kinds of webapp.jobs.registry and their config dataclasses (`knob(...)`
metadata: help, choices, bounds), every `python -m ...` entry point under games/, bench/ and
training/ (its argparse parser, captured when `main` parses), the project's `manage.py`
commands, and the OpenAPI schema drf-spectacular serves at /api/schema/.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import importlib.util
import io
import os
import sys
import typing
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLI_PACKAGES = ("games", "bench", "training")
# metadata keys of knob(...) rendered in the Bounds column, with how they read
BOUNDS = {"min": "≥ {}", "max": "≤ {}", "min_open": "> {}", "max_open": "< {}", "high": "≤ {}"}
PAGES = {
    "reference/configs.md": "config_page",
    "reference/cli.md": "cli_page",
    "reference/api.md": "api_page",
}


def setup_django() -> None:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings.test")
    import django

    django.setup()


def cell(value: object) -> str:
    """Text safe inside a Markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ").strip()


def type_name(hint: object) -> str:
    if isinstance(hint, type):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("NoneType", "None")


def default_of(field: dataclasses.Field) -> str:
    if field.default is not dataclasses.MISSING:
        return f"`{field.default!r}`"
    if field.default_factory is not dataclasses.MISSING:
        return f"`{field.default_factory()!r}`"
    return "*required*"


def bounds_of(metadata: typing.Mapping) -> str:
    parts = [form.format(metadata[key]) for key, form in BOUNDS.items() if key in metadata]
    if metadata.get("choices"):
        parts.append("one of " + ", ".join(f"`{c}`" for c in metadata["choices"]))
    return "; ".join(parts)


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
                "paper": f"`{paper!r}`" if paper != "" else "",
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
        "A *Paper* value is shown where the field's metadata records the paper's setting; "
        "otherwise the help text says when the default differs from the paper.",
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


# --- command lines ------------------------------------------------------------------------


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser):
        self.parser = parser


def cli_modules() -> dict[str, str]:
    """`python -m` name -> the module that runs, for every one under games/, bench/ and
    training/."""
    found = {}
    for package in CLI_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if 'if __name__ == "__main__"' not in path.read_text():
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            name = ".".join(parts[:-1] if parts[-1] == "__main__" else parts)
            found[name] = ".".join(parts)
    return found


@contextlib.contextmanager
def _capturing() -> Iterator[None]:
    original = argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args

    def capture(self, *args, **kwargs):
        raise _Captured(self)

    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[method-assign]
    try:
        yield
    finally:
        argparse.ArgumentParser.parse_args, argparse.ArgumentParser.parse_known_args = original


def parser_of(module: str) -> argparse.ArgumentParser | None:
    """The parser `module.main` builds, captured when it parses (nothing else of main runs);
    None for a module without a `main` that parses arguments."""
    source = importlib.util.find_spec(module).origin
    if "argparse" not in Path(source).read_text() and "main_for" not in Path(source).read_text():
        return None  # main would run the module, not parse arguments
    main = getattr(importlib.import_module(module), "main", None)
    if main is None:
        return None
    argv = sys.argv
    sys.argv = [f"python -m {module}"]
    try:
        with _capturing(), contextlib.redirect_stdout(io.StringIO()):
            try:
                main([]) if main.__code__.co_argcount else main()
            except _Captured as captured:
                return captured.parser
    finally:
        sys.argv = argv
    return None


def parser_help(parser: argparse.ArgumentParser, prog: str) -> list[str]:
    parser.prog = prog
    os.environ["COLUMNS"] = "100"  # the same wrapping on every machine
    out = ["```text", parser.format_help().rstrip(), "```", ""]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [f"#### `{prog} {name}`", ""] + parser_help(sub, f"{prog} {name}")
    return out


def cli_flags(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of a parser and its subcommands (for completeness tests)."""
    flags = set()
    for action in parser._actions:
        if action.help != argparse.SUPPRESS:  # hidden on purpose: not in --help either
            flags.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                flags |= cli_flags(sub)
    return flags


def management_commands() -> dict[str, argparse.ArgumentParser]:
    setup_django()
    from django.core.management import get_commands, load_command_class

    parsers = {}
    for name, app in sorted(get_commands().items()):
        if app.startswith("webapp."):
            command = load_command_class(app, name)
            parsers[name] = command.create_parser("manage.py", name)
    return parsers


def cli_page() -> str:
    out = [
        "# Command lines",
        "",
        "Every `python -m ...` entry point under `games/`, `bench/` and `training/`, and the "
        "project's own `manage.py` commands, with the help their argparse parsers print. "
        "Generated by `docs/gen_reference.py`. The training commands take one `--flag` per "
        "config field: see [Job configs](configs.md) for types, bounds and defaults.",
        "",
        "## `python -m` modules",
        "",
    ]
    for name, module in cli_modules().items():
        parser = parser_of(module)
        out += [f"### `python -m {name}`", ""]
        if parser is None:
            out += ["Takes no command-line options.", ""]
            continue
        out += parser_help(parser, f"python -m {name}")
    out += ["## `manage.py` commands", ""]
    for name, parser in management_commands().items():
        out += [f"### `manage.py {name}`", ""] + parser_help(parser, f"python manage.py {name}")
    return "\n".join(out)


# --- the REST API ---------------------------------------------------------------------------


def api_schema() -> dict:
    setup_django()
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def api_page() -> str:
    schema = api_schema()
    info = schema["info"]
    out = [
        "# REST API",
        "",
        f"{info['title']} {info['version']}: {info.get('description', '')}",
        "",
        "Generated by `docs/gen_reference.py` from the OpenAPI schema the app serves at "
        "`/api/schema/` (drf-spectacular); a running app also shows it interactively at "
        "`/api/docs/`. Authenticate with a session or a token from `POST /api/auth/token/` "
        "(header `Authorization: Token <key>`); see "
        "[Launch and script jobs through the REST API](../how-to/rest-api.md).",
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict]]] = {}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                tag = (operation.get("tags") or ["other"])[0]
                by_tag.setdefault(tag, []).append((path, method.upper(), operation))
    for tag in sorted(by_tag):
        out += [f"## {tag}", "", "| Method | Path | Summary |", "|---|---|---|"]
        for path, method, operation in by_tag[tag]:
            summary = operation.get("summary") or operation.get("description", "").split("\n")[0]
            out.append(f"| {method} | `{path}` | {cell(summary or operation['operationId'])} |")
        out.append("")
    return "\n".join(out)


def pages() -> dict[str, str]:
    """Path under docs/ -> Markdown of every generated page."""
    return {path: globals()[builder]() for path, builder in PAGES.items()}


# --- the MkDocs hook ------------------------------------------------------------------------


def on_files(files, config):
    from mkdocs.structure.files import File

    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "var/reference")
    for path, content in pages().items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(content + "\n")
        print(target / path)
