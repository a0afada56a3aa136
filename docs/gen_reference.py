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

Each page is built by a module of docs/reference_gen/ (configs, cli, api, specs); this file lists
the pages, hooks them into MkDocs and writes them as a script.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

BUILDERS = "reference_gen"  # the package of the page builders, docs/reference_gen/
_FOLDER = Path(__file__).resolve().parent / BUILDERS


def _load_builders() -> None:
    """Import docs/reference_gen by its path, as MkDocs and the tests import this file: docs/ is
    on no import path (and the package name stays one of its own, not `docs.…`)."""
    if BUILDERS in sys.modules:
        return
    spec = importlib.util.spec_from_file_location(
        BUILDERS, _FOLDER / "__init__.py", submodule_search_locations=[str(_FOLDER)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[BUILDERS] = package
    spec.loader.exec_module(package)


_load_builders()
common = importlib.import_module(f"{BUILDERS}.common")
configs = importlib.import_module(f"{BUILDERS}.configs")
cli = importlib.import_module(f"{BUILDERS}.cli")
api = importlib.import_module(f"{BUILDERS}.api")
specs = importlib.import_module(f"{BUILDERS}.specs")

# what the tests (tests/test_docs.py) and readers call on this module
ROOT, setup_django, cell = common.ROOT, common.setup_django, common.cell
config_rows, config_page = configs.config_rows, configs.config_page
cli_modules, parser_of, cli_flags = cli.cli_modules, cli.parser_of, cli.cli_flags
management_commands, cli_page = cli.management_commands, cli.cli_page
api_schema, api_page = api.api_schema, api.api_page
SPEC_KINDS, specs_page = specs.SPEC_KINDS, specs.specs_page

PAGES = {
    "reference/configs.md": config_page,
    "reference/cli.md": cli_page,
    "reference/api.md": api_page,
    "reference/specs.md": specs_page,
}


def pages() -> dict[str, str]:
    """Path under docs/ -> Markdown of every generated page."""
    return {path: builder() for path, builder in PAGES.items()}


# --- the MkDocs hook ------------------------------------------------------------------------


def on_files(files, config):
    from mkdocs.structure.files import File, InclusionLevel

    for file in files:  # the builders' code is not part of the site (as mkdocs.yml leaves out
        if file.src_uri.startswith(f"{BUILDERS}/"):  # this file with exclude_docs)
            file.inclusion = InclusionLevel.EXCLUDED
    for path, content in pages().items():
        files.append(File.generated(config, path, content=content))
    return files


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "var/reference")
    for path, content in pages().items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(content + "\n")
        print(target / path)
