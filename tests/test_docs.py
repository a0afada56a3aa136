"""The docs site builds with --strict (broken links, missing or unlisted pages fail), and its
generated Reference pages list every job kind's config fields, every command-line flag and every
REST API route (docs/gen_reference.py, run by MkDocs as a hook)."""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# about 25 s on two cores: the strict build (13 s, the generator included) and the configs'
# imports (torch, transformers)
pytestmark = pytest.mark.slow


def generator():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs/gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def page(site: Path, name: str) -> str:
    return html.unescape((site / name / "index.html").read_text())


def test_the_config_reference_shows_a_field_with_its_type_default_and_bounds(site):
    text = page(site, "reference/configs")
    row = re.search(r"<tr>\s*<td><code>belief_coef</code></td>.*?</tr>", text, re.S)
    assert row, "GRPO's belief_coef is missing from the config reference"
    cells = re.findall(r"<td>(.*?)</td>", row[0], re.S)
    assert cells[:4] == [
        "<code>belief_coef</code>",
        "<code>float</code>",
        "<code>0.1</code>",
        "≥ 0; ≤ 100",
    ]


def test_every_config_field_route_and_flag_is_in_the_generated_reference(site):
    gen = generator()
    from webapp.jobs.registry import REGISTRY

    configs = page(site, "reference/configs")
    missing = [
        f"{name}.{field.name}"
        for name, kind in REGISTRY.items()
        for field in dataclasses.fields(kind.config_class())
        if field.init and f"<code>{field.name}</code>" not in configs
    ]
    missing += [name for name in REGISTRY if f'id="{name}"' not in configs]
    assert missing == []

    api = page(site, "reference/api")
    routes = gen.api_schema()["paths"]
    assert len(routes) > 10 and "/api/jobs/" in routes
    assert [path for path in routes if f"<code>{path}</code>" not in api] == []

    cli = page(site, "reference/cli")
    flags = []
    for name, module in gen.cli_modules().items():
        assert f"python -m {name}" in cli
        parser = gen.parser_of(module)
        flags += [(name, flag) for flag in sorted(gen.cli_flags(parser) if parser else [])]
    for name, parser in gen.management_commands().items():
        assert f"manage.py {name}" in cli
        flags += [(name, flag) for flag in sorted(gen.cli_flags(parser))]
    assert ("training.grpo", "--belief-coef") in flags
    assert [(name, flag) for name, flag in flags if flag not in cli] == []


def test_the_readme_is_short_starts_with_the_two_commands_and_links_only_to_files_that_exist():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("```\nmake run\nmake test\n```\n")
    assert len(readme.splitlines()) <= 150
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t)]
    assert any(t.startswith("docs/") for t in local)
    assert [t for t in local if not (ROOT / t).exists()] == []
