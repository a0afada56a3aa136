# 20Q Lab. `make run` and `make test` do all the set-up on a fresh machine.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
TORCH  := torch==2.13.0

.PHONY: setup run test test-fast migrate seed bench clean browser-deps

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# Reinstall only when the dependency list changes. torch is pinned in the same pip command so
# that nothing pulls a multi-GB CUDA build.
$(STAMP): pyproject.toml | $(VENV)/bin/python
	$(PY) -m pip install -q "$(TORCH)" -e ".[test]"
	touch $(STAMP)

setup: $(STAMP)

migrate: setup
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed --tiny-model

# The embedded default: SQLite, the file-system broker, one worker (with the beat that reaps
# dead jobs) and the web app on 127.0.0.1:8000. Ctrl-C stops both.
run: seed
	$(PY) manage.py collectstatic --noinput -v 0
	$(PY) manage.py devrun

# Browser tests drive Debian's Chromium; install it when missing (never a Playwright download).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium is missing: sudo apt-get install chromium"; fi; }

test: setup browser-deps
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: setup
	$(PY) -m pytest -m "not browser and not slow" $(PYTEST_ARGS)

bench: setup
	$(PY) -m bench.kb
	$(PY) -m bench.rollout
	$(PY) -m bench.judge

clean:
	rm -rf $(VENV) var .pytest_cache test-artifacts
