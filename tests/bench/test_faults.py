"""The fault benchmark's package entry point and the worker harness it shares with tests/workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
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


def test_the_lab_setup_leaves_stdout_to_the_results_json(monkeypatch, capsys):
    """`seed` and `create_user` write a line whatever the verbosity: it goes to stderr, so
    `python -m bench.faults > out.json` holds the JSON alone."""
    import django
    from django.core import management
    from django.core.management.base import OutputWrapper

    from bench.faults.__main__ import setup

    class FakeLab:
        env: dict = {}

        def postgres_init(self):
            pass

        def redis_start(self):
            pass

    def call_command(name, *args, stdout=None, **options):  # as a command's self.stdout.write
        OutputWrapper(stdout or sys.stdout).write(f"{name}: a message at any verbosity")

    monkeypatch.setattr(django, "setup", lambda: None)
    monkeypatch.setattr(management, "call_command", call_command)
    setup(FakeLab())
    out, err = capsys.readouterr()
    assert out == "" and err.count("a message at any verbosity") == 3


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


def test_every_lab_takes_its_own_free_ports(tmp_path):
    from bench.faults.lab import Lab, port_free

    a, b = Lab(tmp_path / "a", 1, 1), Lab(tmp_path / "b", 1, 1)
    ports = {a.pg_port, a.redis_port, a.web_port, b.pg_port, b.redis_port, b.web_port}
    assert all(port_free(p) for p in ports)
    assert (
        f":{a.pg_port}/" in a.env["DATABASE_URL"]
        and f":{a.redis_port}/" in a.env["CELERY_BROKER_URL"]
    )


def test_a_busy_port_is_named_plainly(tmp_path):
    import socket

    from bench.faults.lab import Lab

    lab = Lab(tmp_path, 1, 1)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", lab.redis_port))
        sock.listen()
        with pytest.raises(RuntimeError, match=f"port {lab.redis_port} .*redis-server.* is busy"):
            lab.redis_start()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_interrupting_a_run_closes_the_lab(sig):
    from bench.faults.__main__ import Interrupted, interruptible

    class FakeLab:
        closed = 0

        def close(self, keep=False):
            FakeLab.closed += 1

    expected = KeyboardInterrupt if sig == signal.SIGINT else Interrupted
    with pytest.raises(expected), interruptible(FakeLab()):
        os.kill(os.getpid(), sig)
        time.sleep(5)  # the signal arrives before this ends
    assert FakeLab.closed == 1
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers put back


LAB_SCRIPT = """
import sys, time
from pathlib import Path
from bench.faults.__main__ import interruptible
from bench.faults.lab import Lab
lab = Lab(Path(sys.argv[1]), words=1, samples=1)
with interruptible(lab):
    lab.postgres_init()
    lab.redis_start()
    lab.housekeeping()
    lab.worker("jobs-a")
    print("up", *[p.pid for p in lab.procs.values()], flush=True)
    time.sleep(300)
"""


def left_behind(workdir: str, groups: list[int]) -> list[str]:
    """Processes whose command line names the work folder, or in a group the lab started."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            pgid = os.getpgid(int(entry.name))
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, ProcessLookupError):
            continue
        if state != "Z" and (workdir in cmdline or pgid in groups):
            found.append(f"{entry.name}: {cmdline[:120]}")
    return found


@pytest.mark.slow
def test_a_run_stopped_by_sigterm_leaves_nothing_running():
    """`timeout` sends SIGTERM: the job worker, housekeeping worker, redis-server and the private
    Postgres cluster must all be gone, and the folder removed."""
    import shutil
    import tempfile

    if os.geteuid() != 0 or not shutil.which("runuser") or not shutil.which("redis-server"):
        pytest.skip("needs root (runuser -u postgres), Postgres binaries and redis-server")
    from bench.faults.lab import PG_BIN

    if not (PG_BIN / "initdb").exists():
        pytest.skip("no Postgres binaries")
    workdir = tempfile.mkdtemp(prefix="twentyq-faults-test-", dir="/tmp")
    os.chmod(workdir, 0o755)
    proc = subprocess.Popen(
        [sys.executable, "-c", LAB_SCRIPT, workdir],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("up"), line + proc.stderr.read()[-3000:]
        groups = [int(pid) for pid in line.split()[1:]]
        assert left_behind(workdir, groups)  # the cluster and the workers run
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=90) == 128 + signal.SIGTERM
        assert left_behind(workdir, groups) == []
        assert not Path(workdir).exists()
    finally:
        if proc.poll() is None:
            proc.kill()
