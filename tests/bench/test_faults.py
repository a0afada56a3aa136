"""The fault benchmark's package entry point and the worker harness it shares with tests/workers."""

from __future__ import annotations

import subprocess
import sys
from itertools import count
from pathlib import Path

import pytest

from bench.faults.processes import celery_worker_command, wait_for

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_runs_as_python_m_bench_faults_and_rejects_unknown_scenarios():
    help_text = subprocess.run(
        [sys.executable, "-m", "bench.faults", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert help_text.startswith("usage: python -m bench.faults")
    assert "--pg-outage-seconds" in help_text and "--no-save" in help_text
    refused = subprocess.run(
        [sys.executable, "-m", "bench.faults", "--scenarios", "kill9,bogus", "--no-save"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 2
    assert "unknown scenarios ['bogus']" in refused.stderr


def test_a_celery_worker_command_consumes_the_queues_with_the_options_given():
    argv = celery_worker_command("cpu,gpu", "w1@%h", "--pool", "solo")
    assert argv[:6] == [sys.executable, "-m", "celery", "-A", "workers.celery:app", "worker"]
    assert argv[argv.index("-Q") + 1] == "cpu,gpu"
    assert argv[argv.index("--pool") + 1] == "solo"
    assert argv[argv.index("--hostname") + 1] == "w1@%h"


def test_wait_for_returns_the_first_true_value_and_times_out_naming_what_it_waited_for():
    calls = count()
    assert wait_for(lambda: next(calls) >= 2 and "ready", timeout=5, interval=0) == "ready"
    with pytest.raises(TimeoutError, match="waiting for the moon"):
        wait_for(lambda: False, timeout=0.05, what="the moon", interval=0.01)
