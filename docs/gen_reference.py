"""The generated reference pages: job configs, command lines and the REST API, from the code.

Used two ways:

* as an MkDocs hook (mkdocs.yml `hooks:`): `on_files` adds the pages to every build and serve,
  so they are never stored in the repository and cannot go stale;
* as a script, `python docs/gen_reference.py OUT_DIR`, which writes the same pages to OUT_DIR
  (to read them without building the site).

Sources: the job kinds of webapp.jobs.registry and their config dataclasses (`knob(...)`
metadata: help, choices, bounds, the paper's value), every `python -m ...` entry point under
games/, bench/ and training/ (its argparse parser, captured when `main` parses), the project's
`manage.py` commands, the OpenAPI schema drf-spectacular serves at /api/schema/, and the judge
and guesser spec kinds of games.registry with the web app's model kinds (webapp.catalog).
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
PAGES = {
    "reference/configs.md": "config_page",
    "reference/cli.md": "cli_page",
    "reference/api.md": "api_page",
    "reference/specs.md": "specs_page",
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


# --- judge and guesser specs --------------------------------------------------------------------

# What each spec kind of games.registry (GUESSER_KINDS, JUDGE_KINDS) accepts and is. The page lists
# the registry's kinds, so a kind added there without a line here fails the build (and a line for
# a kind the registry lost fails it too).
SPEC_KINDS = {
    "kb": (
        "`kb`, `kb:SENSE`, `kb:closed`, `kb:SENSE:closed`",
        "The knowledge-base judge (WordNet facts about the secret's senses). Open world by "
        "default: a fact it does not store is `unknown`, except categories (hypernyms) outside "
        "WordNet's known gaps, which it answers No; `closed` answers No to every absent fact "
        "(the world the information-gain guesser models).",
    ),
    "pretrained": (
        "`pretrained`, `pretrained:PATH`",
        "The pretrained judge: a LoRA cross-encoder on `minilm-l6` combined with the learned "
        "judge, calibrated (answers carry P(yes)). Without PATH the shipped folder "
        "`games/data/judges/pretrained/`; PATH is a folder a `pretrained_judge` job wrote.",
    ),
    "learned": (
        "`learned`, `learned:PATH`",
        "The learned judge: a small numpy network over the knowledge base's facts and the "
        "question's words. Without PATH the shipped `games/data/judges/learned.npz`; PATH is a "
        "weights file a `judge` job wrote.",
    ),
    "kb+learned": (
        "`kb+learned`, `kb+learned:PATH`",
        "The knowledge-base judge where it vouches for a yes or no, the learned judge (PATH: "
        "its weights) for the rest.",
    ),
    "ensemble": (
        "`ensemble:SPEC,SPEC,...`",
        "Several judges (at least two specs, each without commas) answering by majority (a tie "
        "is `unknown`), with a disagreement flag.",
    ),
    "infogain": (
        "`infogain`",
        "The information-gain guesser: asks the knowledge-base question with the most expected "
        "information over its pool (`--pool`, a job's `pool_word_list`; default every KB noun) "
        "and eliminates candidates on each answer.",
    ),
    "natural": (
        "`natural`, `natural:PATH`, `natural:KEY=VALUE,KEY=VALUE`",
        "The natural guesser: natural questions from a bank, a soft posterior over 13,139 "
        "frequent nouns from P(yes | word, question). PATH is another `natural.npz`; the "
        "settings below tune it.",
    ),
    "random": (
        "`random`",
        "A floor baseline: a random question in the knowledge-base judge's forms, or (a quarter "
        "of the turns) a guess of a random pool word; never the same question twice.",
    ),
    "hf": (
        "`hf:PATH`",
        "A transformers model that asks (a guesser) or answers (an LLM judge): a local folder, a "
        "pretrained base's name (`hf:smollm2-135m-instruct`, see "
        "[Install](../how-to/install.md#pretrained-bases)) or a hub id where a hub is reachable. "
        "A folder a training job wrote plays with the prompt it was trained on, a shipped "
        "guesser's folder with its recorded sampling.",
    ),
    "openai": (
        "`openai:URL#MODEL`",
        "Any OpenAI-compatible chat-completions server (vLLM serve, llama.cpp server, a hosted "
        "API): URL is the API root (`http://host:8000/v1`), MODEL the server's model name; the "
        "key comes from `$OPENAI_API_KEY`. It generates but cannot score given text, so no "
        "ΔBelief and no training.",
    ),
    "vllm": (
        "`vllm:PATH`",
        "A model served by an in-process vLLM engine (GPU workers only; imported lazily).",
    ),
}


def _natural_defaults() -> dict[str, object]:
    import inspect

    from games.guessers.natural import NaturalGuesser

    parameters = inspect.signature(NaturalGuesser.__init__).parameters
    return {name: p.default for name, p in parameters.items()}


def _setting_type(parse: object) -> str:
    return parse.__name__ if isinstance(parse, type) else "bool (1/true/yes)"


def spec_kinds() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The games registry's (guesser kinds, judge kinds)."""
    from games.registry import GUESSER_KINDS, JUDGE_KINDS

    return GUESSER_KINDS, JUDGE_KINDS


def model_kind_specs() -> list[tuple[str, str, str]]:
    """(kind, label, the games spec a ModelSpec of that kind becomes) for every web model kind,
    through webapp.catalog.builders.spec_string on an unsaved example row."""
    setup_django()
    from games.registry import SpecError
    from webapp.catalog.builders import spec_string
    from webapp.catalog.models import ModelKind, ModelSpec

    rows = []
    for kind, label in ModelKind.choices:
        example = ModelSpec(
            name="example", kind=kind, path="PATH", endpoint="URL", remote_model="MODEL"
        )
        try:
            spec = f"`{spec_string(example)}`"
            if kind in (ModelKind.PRETRAINED, ModelKind.LEARNED, ModelKind.HYBRID):
                spec += f" (path empty: `{kind}`, the shipped one)"
            elif kind == ModelKind.NATURAL:
                spec += " (path empty: `natural`)"
            elif kind == ModelKind.KB:
                example.options = {"sense": "any", "closed": True}
                options = '{"sense": "any", "closed": true}'
                spec += f"; options `{options}`: `{spec_string(example)}`"
        except SpecError:
            spec = "none: a base for training only, it neither asks nor answers"
        rows.append((kind, label, spec))
    return rows


def specs_page() -> str:
    from games.kb.knowledge import DEFAULT_SENSE, SENSE_MODES
    from games.llm import BACKEND_KINDS
    from games.llm.chat import JUDGE_PROMPT, JUDGE_SYSTEM_PROMPT
    from games.registry import NATURAL_SETTINGS

    guessers, judges = spec_kinds()
    kinds = list(dict.fromkeys(judges + guessers))
    undocumented = [k for k in kinds if k not in SPEC_KINDS]
    stale = [k for k in SPEC_KINDS if k not in kinds]
    if undocumented or stale:
        raise RuntimeError(
            f"docs/gen_reference.py SPEC_KINDS is out of date with games.registry: "
            f"undocumented {undocumented}, no longer registered {stale}"
        )
    out = [
        "# Judge and guesser specs",
        "",
        "A *spec* is the short string that names a judge or a guesser wherever one is chosen: "
        "`python -m games eval --guesser SPEC --judge SPEC`, the training commands' `--teacher` "
        "and `--judge`, and, in the web app, the model specs of the catalog (each row "
        "becomes a spec, below). Grammar: `KIND` or `KIND:TARGET`; the kind is case-insensitive. "
        "Generated from `games/registry.py` and `webapp/catalog` by `docs/gen_reference.py`. "
        "[Add a judge or guesser backend](../how-to/backends.md) shows them in use.",
        "",
        "## Kinds",
        "",
        "| Kind | Forms | Guesser | Judge | What it is |",
        "|---|---|---|---|---|",
    ]
    for kind in kinds:
        forms, what = SPEC_KINDS[kind]
        roles = ["yes" if kind in guessers else "", "yes" if kind in judges else ""]
        out.append(f"| `{kind}` | {forms} | " + " | ".join(roles) + f" | {cell(what)} |")
    out += [
        "",
        "An unknown kind is refused with the list above (`SpecError`); in the web app before a "
        "job is queued.",
        "",
        "## Knowledge-base senses",
        "",
        "`kb:SENSE` chooses which WordNet senses of the secret the facts come from: "
        + ", ".join(f"`{m}`" for m in SENSE_MODES)
        + f" (default `{DEFAULT_SENSE}`: the senses tagged, add-one smoothed, at least a third as "
        "often as the first in SemCor; `first`: the most frequent only; `any`: every noun "
        "sense). `closed` may follow, e.g. `kb:any:closed`.",
        "",
        "## Natural guesser settings",
        "",
        "`natural:KEY=VALUE,KEY=VALUE` (e.g. `natural:noise=0.1,guess_threshold=0.3`):",
        "",
        "| Setting | Type | Default |",
        "|---|---|---|",
    ]
    defaults = _natural_defaults()
    for key, parse in NATURAL_SETTINGS.items():
        out.append(f"| `{key}` | {_setting_type(parse)} | `{defaults.get(key)!r}` |")
    out += [
        "",
        "## Language-model backends",
        "",
        "`hf`, `vllm` and `openai` specs run through one backend interface (`games/llm`, "
        "`generate` and `score`), whose kinds are "
        + ", ".join(f"`{k}`" for k in BACKEND_KINDS)
        + " (`hf` is `transformers`; `vllm-server` is the GRPO trainer's generation server, "
        "not a spec). An LLM judge is prompted as the ΔBelief-RL paper's judge was and its "
        "verdict read from the last `<answer>…</answer>` (yes, no, finished, invalid, repeated; "
        "anything else is `unknown`):",
        "",
        "```text",
        JUDGE_SYSTEM_PROMPT,
        "",
        JUDGE_PROMPT,
        "```",
        "",
        "## Model specs in the web app",
        "",
        "A catalog row (admin → Model specs, or registered by a job) has a kind, a role "
        "(guesser, judge, both, or base for training only) and the fields its kind reads; "
        "`webapp/catalog/builders.py` turns it into a spec. `path`, `endpoint` and "
        "`remote_model` below stand for the row's fields; an `adapter_path` is loaded on top of "
        "a `transformers` or `vllm` model.",
        "",
        "| Model kind | What | Spec it becomes |",
        "|---|---|---|",
    ]
    for kind, label, spec in model_kind_specs():
        out.append(f"| `{kind}` | {cell(label)} | {cell(spec)} |")
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
