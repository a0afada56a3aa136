"""Installs that reproduce: the locks agree with pyproject, the Dockerfiles and the Makefile
install from them on a Python that pyproject allows, and the CI gates are wired (Docker does not
run here: the files are read, and the Makefile is dry-run with `make -n`)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
LOCK = ROOT / "requirements" / "lock.txt"
GPU_LOCK = ROOT / "requirements" / "gpu-lock.txt"
# markers evaluated for the images and CI: CPython 3.11 on x86-64 Linux
ENVIRONMENT = {
    "python_version": "3.11",
    "python_full_version": "3.11.7",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "os_name": "posix",
}


def pins(path: Path) -> dict[str, Version]:
    """name -> pinned version of a compiled lock; every requirement line must be `name==version`."""
    found = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        requirement = Requirement(line)
        (spec,) = requirement.specifier  # exactly one specifier ...
        assert spec.operator == "==" and not requirement.marker, f"{path.name}: {line} is not a pin"
        found[canonicalize_name(requirement.name)] = Version(spec.version)  # ... an exact one
    return found


def requirements_in(path: Path) -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text().splitlines())
    return [Requirement(line) for line in lines if line]


def applies(requirement: Requirement, extras: tuple[str, ...] = ("",)) -> bool:
    marker = requirement.marker
    return marker is None or any(marker.evaluate({**ENVIRONMENT, "extra": e}) for e in extras)


def assert_satisfied(requirements: list[Requirement], locked: dict[str, Version], lock: str):
    for requirement in requirements:
        name = canonicalize_name(requirement.name)
        assert name in locked, f"{requirement} is missing from {lock}: run `make lock`"
        assert requirement.specifier.contains(locked[name], prereleases=True), (
            f"{lock} pins {name}=={locked[name]} outside {requirement.specifier}: run `make lock`"
        )


PROJECT_REQUIREMENTS = [Requirement(r) for r in PROJECT["dependencies"]]
TEST_REQUIREMENTS = [Requirement(r) for r in PROJECT["optional-dependencies"]["test"]]


def test_each_dependency_is_listed_once():
    for group in (PROJECT_REQUIREMENTS, TEST_REQUIREMENTS):
        names = [canonicalize_name(r.name) for r in group]
        assert sorted({n for n in names if names.count(n) > 1}) == []


def test_cpu_lock_pins_every_dependency_and_test_extra_within_its_range():
    locked = pins(LOCK)
    wanted = [r for r in PROJECT_REQUIREMENTS + TEST_REQUIREMENTS if applies(r, ("", "test"))]
    assert_satisfied(wanted + requirements_in(ROOT / "requirements" / "cpu.in"), locked, LOCK.name)
    # the CPU build by the repo's choice, and the version pyproject's torch range allows
    assert locked["torch"].local == "cpu"
    assert canonicalize_name("vllm") not in locked  # vLLM stays out of the CPU environment


def test_gpu_lock_pins_vllm_and_the_apps_dependencies_with_cuda_torch():
    locked = pins(GPU_LOCK)
    assert_satisfied(
        [r for r in PROJECT_REQUIREMENTS if applies(r)]
        + requirements_in(ROOT / "requirements" / "gpu.in"),
        locked,
        GPU_LOCK.name,
    )
    assert locked["torch"].local is None  # the default index's (CUDA) build, as vLLM pins it
    # vLLM's own transformers cap holds: no override (the trainers work on 5.18-5.20 too)
    assert locked["transformers"] < Version("5.21")
    assert "--override" not in GPU_LOCK.read_text()
    # pytest, playwright and ruff are not shipped to GPU workers
    assert not {"pytest", "playwright", "ruff"} & set(locked)


def test_the_ruff_pin_is_exact_so_lint_results_do_not_drift():
    (ruff,) = [r for r in TEST_REQUIREMENTS if r.name == "ruff"]
    assert [s.operator for s in ruff.specifier] == ["=="]
    assert PYPROJECT["tool"]["ruff"]["line-length"] == 100


def test_installed_packages_are_the_locked_ones():
    """`make setup` installed this environment from the lock (and reinstalls it when the lock
    changes); a package at another version means the environment drifted."""
    drift = {}
    for name, version in pins(LOCK).items():
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            installed = None
        if installed != version:
            drift[name] = (str(version), installed and str(installed))
    assert drift == {}, f"installed versions differ from {LOCK.name} (run `make setup`): {drift}"


def dockerfile(name: str) -> str:
    return (ROOT / name).read_text().replace("\\\n", " ")  # continuation lines joined


@pytest.mark.parametrize("name", ["Dockerfile", "Dockerfile.gpu"])
def test_dockerfile_python_satisfies_requires_python(name):
    bases = re.findall(r"^FROM\s+(\S+)", dockerfile(name), re.MULTILINE)
    assert len(bases) == 1, bases
    match = re.fullmatch(r"python:(\d+\.\d+)(?:\.\d+)?(?:-[\w.-]+)?", bases[0])
    assert match, f"{name}: {bases[0]} is not an official Python image, its Python is unknown"
    assert SpecifierSet(PROJECT["requires-python"]).contains(match[1]), (
        f"{name}: Python {match[1]} does not satisfy requires-python {PROJECT['requires-python']}"
    )


@pytest.mark.parametrize(
    "name,lock",
    [("Dockerfile", "requirements/lock.txt"), ("Dockerfile.gpu", "requirements/gpu-lock.txt")],
)
def test_dockerfiles_install_the_lock_then_the_app_without_dependencies(name, lock):
    text = dockerfile(name)
    installs = re.findall(r"pip install ([^&\n]*)", text)
    assert installs, name
    locked = [args for args in installs if f"-r {lock}" in args]
    assert len(locked) == 1, f"{name} must install {lock}: {installs}"
    assert re.search(rf"COPY {re.escape(lock)} ", text), f"{name} must copy {lock} into the image"
    for args in installs:
        # nothing else resolves dependencies: either the lock or the app itself with --no-deps
        assert args in locked or "--no-deps" in args, f"{name}: pip install {args}"
    if name == "Dockerfile":  # the lock pins torch's CPU build: PyTorch's CPU index by default
        assert re.search(r"^ARG TORCH_INDEX=https://download\.pytorch\.org/whl/cpu$", text, re.M)
        assert '--extra-index-url "$TORCH_INDEX"' in locked[0]


# --- the Makefile, dry-run on a copy -------------------------------------------------------

needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


@pytest.fixture
def checkout(tmp_path):
    """The Makefile with the files its install rule depends on, and a venv that looks installed
    (stamp newer than the lock)."""
    (tmp_path / "requirements").mkdir()
    for name in ("Makefile", "pyproject.toml", "requirements/lock.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    python = tmp_path / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    stamp = tmp_path / ".venv" / ".installed"
    stamp.touch()
    os.utime(stamp, (1_500_000_000, 1_500_000_000))  # in 2017: a touch now is newer
    for name in ("pyproject.toml", "requirements/lock.txt"):
        os.utime(tmp_path / name, (1_000_000_000, 1_000_000_000))  # in 2001: older
    return tmp_path


def make_n(directory: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_INDEX", "MAKEFLAGS")}
    done = subprocess.run(
        ["make", "-n", *args], cwd=directory, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@needs_make
def test_make_setup_reinstalls_only_when_the_lock_changes(checkout):
    assert "pip install" not in make_n(checkout, "setup")
    (checkout / "requirements" / "lock.txt").touch()  # e.g. `make lock` or a pull
    commands = make_n(checkout, "setup")
    assert "-r requirements/lock.txt" in commands
    assert "--no-deps -e ." in commands and "pip check" in commands


@needs_make
def test_torch_index_is_empty_by_default_and_overridable(checkout):
    (checkout / "requirements" / "lock.txt").touch()
    assert "--extra-index-url" not in make_n(checkout, "setup")
    index = "https://download.pytorch.org/whl/cpu"
    assert f"--extra-index-url {index} -r requirements/lock.txt" in make_n(
        checkout, "setup", f"TORCH_INDEX={index}"
    )


@needs_make
def test_make_test_checks_migrations_before_pytest_and_lint_runs_ruff(checkout):
    commands = make_n(checkout, "test").splitlines()
    gate = next(i for i, c in enumerate(commands) if "makemigrations --check --dry-run" in c)
    pytest_run = next(i for i, c in enumerate(commands) if "-m pytest" in c)
    assert gate < pytest_run
    lint = make_n(checkout, "lint")
    assert "ruff check ." in lint and "ruff format --check ." in lint


def test_ci_runs_make_test_with_ci_true():
    script = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^export CI=true$", script, re.MULTILINE)
    assert re.search(r"^make test\b", script, re.MULTILINE)


def test_browser_tests_fail_instead_of_skipping_in_ci(monkeypatch):
    from tests.browser.conftest import browser_unavailable

    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception):
        browser_unavailable("no chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no chromium"):
        browser_unavailable("no chromium")


# --- every third-party import is declared ----------------------------------------------------

FIRST_PARTY = {"webapp", "games", "training", "workers", "bench", "tests", "manage"}


def third_party_imports(paths: list[Path]) -> dict[str, set[str]]:
    """top-level module -> files importing it (absolute imports, stdlib and first party aside)."""
    found: dict[str, set[str]] = {}
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for root in {name.split(".")[0] for name in names}:
                if root not in sys.stdlib_module_names and root not in FIRST_PARTY:
                    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                    found.setdefault(root, set()).add(str(where))
    return found


def undeclared(paths: list[Path], declared: list[Requirement]) -> dict[str, list[str]]:
    names = {canonicalize_name(r.name) for r in declared}
    distributions = metadata.packages_distributions()
    missing = {}
    for module, files in third_party_imports(paths).items():
        # a module not installed here (vllm) counts as its own distribution name
        owners = {canonicalize_name(d) for d in distributions.get(module, [module])}
        if not owners & names:
            missing[module] = sorted(files)[:3]
    return missing


def test_every_third_party_import_is_declared():
    """A package the code imports must be in pyproject (or gpu.in), not merely arrive with
    another: otherwise a fresh install from the lock can miss it."""
    source = [
        p for top in sorted(FIRST_PARTY - {"tests", "manage"}) for p in (ROOT / top).rglob("*.py")
    ]
    source.append(ROOT / "manage.py")
    gpu = requirements_in(ROOT / "requirements" / "gpu.in")
    assert undeclared(source, PROJECT_REQUIREMENTS + gpu) == {}
    tests = list((ROOT / "tests").rglob("*.py"))
    assert undeclared(tests, PROJECT_REQUIREMENTS + TEST_REQUIREMENTS + gpu) == {}


def test_an_undeclared_import_is_found(tmp_path):
    module = tmp_path / "probe.py"
    module.write_text("import os\nimport yaml.loader\nfrom numpy import array\nfrom . import x\n")
    assert set(third_party_imports([module])) == {"yaml", "numpy"}
    assert set(undeclared([module], [Requirement("numpy>=1")])) == {"yaml"}  # PyYAML's module
    assert undeclared([module], [Requirement("numpy"), Requirement("PyYAML")]) == {}
