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


def test_the_site_loads_nothing_from_outside(site):
    # the docs are read offline (the web app serves them at /docs/): no web fonts, no CDN
    for built in site.rglob("*.html"):
        text = built.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, built
        assert not re.search(r'<(?:link|script)[^>]+(?:href|src)="https?://', text), built


def page(site: Path, name: str) -> str:
    return html.unescape((site / name / "index.html").read_text())


def test_the_config_reference_shows_a_field_with_its_type_default_and_bounds(site):
    text = page(site, "reference/configs")
    row = re.search(r"<tr>\s*<td><code>belief_coef</code></td>.*?</tr>", text, re.S)
    assert row, "GRPO's belief_coef is missing from the config reference"
    cells = re.findall(r"<td>(.*?)</td>", row[0], re.S)
    assert cells[:4] == [
        "<code>belief_coef</code>",
        "<code>float or None</code>",
        "<code>None</code>",  # empty: the paper's λ for the advantage
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


def test_the_readme_starts_with_its_title_then_the_two_commands_and_links_only_inside_the_repo():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.startswith("# 20Q Lab\n\n```\nmake run\nmake test\n```\n")
    assert len(readme.splitlines()) <= 150
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    local = [t.split("#")[0] for t in targets if not re.match(r"[a-z]+:", t)]
    assert any(t.startswith("docs/") for t in local)
    assert [t for t in local if not (ROOT / t).exists()] == []
    assert re.findall(r"\.\./[\w./-]+", readme) == []  # nothing outside the repository


def test_every_judge_and_guesser_spec_kind_is_in_the_generated_spec_reference(site):
    from games.kb.knowledge import SENSE_MODES
    from games.registry import GUESSER_KINDS, JUDGE_KINDS, NATURAL_SETTINGS
    from webapp.catalog.models import ModelKind

    specs = page(site, "reference/specs")
    names = [*GUESSER_KINDS, *JUDGE_KINDS, *SENSE_MODES, *NATURAL_SETTINGS, *ModelKind.values]
    assert [n for n in names if f"<code>{n}</code>" not in specs] == []
    assert "<code>openai:URL#MODEL</code>" in specs and "<code>kb:any:closed</code>" in specs


def test_a_kind_added_to_the_registry_without_a_description_fails_the_build(monkeypatch):
    import games.registry

    gen = generator()
    monkeypatch.setattr(games.registry, "JUDGE_KINDS", (*games.registry.JUDGE_KINDS, "oracle"))
    with pytest.raises(RuntimeError, match="undocumented \\['oracle'\\]"):
        gen.specs_page()


def test_the_config_reference_shows_the_papers_values(site):
    text = page(site, "reference/configs")

    def cells(field: str) -> list[str]:
        grpo = text[text.index('id="grpo"') :]
        row = re.search(rf"<tr>\s*<td><code>{field}</code></td>.*?</tr>", grpo, re.S)
        return re.findall(r"<td>(.*?)</td>", row[0], re.S)

    assert cells("num_generations")[4] == "<code>16</code>"  # the paper's group, the default
    assert cells("learning_rate")[4] == "CIA <code>3e-05</code>, StarPO <code>1e-05</code>"
    assert cells("steps")[4] == ""  # the paper's epochs are not steps: no value claimed


def glossary() -> str:
    return (ROOT / "docs/reference/metrics.md").read_text(encoding="utf-8")


def source_metric_names() -> set[str]:
    """The metric names the runners report, read from their source: "group/name" strings, and
    the keys of the dicts that hold one (GRPO's step metrics, DPO's candidate statistics)."""
    import ast

    files = [
        *sorted((ROOT / "training/grpo").glob("*.py")),
        ROOT / "training/dpo/pairs.py",
        ROOT / "training/dpo/trainer.py",
        ROOT / "training/evaluation/runner.py",
        ROOT / "training/curation/stages.py",
        ROOT / "webapp/jobs/kinds/disagreements.py",
    ]
    slash = re.compile(r"^[a-z_]+/[a-z_0-9]+$")
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.update([node.value] if slash.match(node.value) else [])
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                if any(isinstance(k, str) and slash.match(k) for k in keys):
                    names.update(k for k in keys if isinstance(k, str))
    from training.grpo.rollouts import VALIDATION_METRICS

    names.update(f"val/{k}" for k in VALIDATION_METRICS)  # GRPO's f"val/{k}"
    not_metrics = ("dbrl/", "lmrl/", "everyday/", "application/", "text/")  # word lists, MIME types
    return {n for n in names if not n.startswith(not_metrics)}


def test_the_metrics_glossary_defines_every_metric_the_code_shows():
    from games.agreement import TAXONOMY
    from games.judge_eval import agreement
    from games.metrics import EvalSummary
    from webapp.arena.api import ArenaRowSerializer
    from webapp.leaderboards.serializers import (
        AbilityRowSerializer,
        HumanRowSerializer,
        ModelRowSerializer,
    )

    text = glossary()
    names = source_metric_names()
    assert {"reward", "loss", "clip_ratio/dual_mean", "candidates/win_rate", "eval/mean_turns"} <= (
        names
    )
    names |= {f.name for f in dataclasses.fields(EvalSummary)}
    names |= set(agreement(["yes", "no"], ["yes", "yes"])) | set(TAXONOMY)
    for serializer in (ModelRowSerializer, HumanRowSerializer, AbilityRowSerializer):
        names |= set(serializer().fields) - {
            "rank",
            "id",
            "guesser_id",
            "player_id",
            "name",
            "kind",
        }
        names -= {"word_list", "word_list_version", "word_list_key"}
    names |= set(ArenaRowSerializer().fields) - {"rank", "name"}
    assert sorted(n for n in names if f"`{n}`" not in text) == []
