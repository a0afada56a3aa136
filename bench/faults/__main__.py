"""`python -m bench.faults`: runs the scenarios, prints JSON and writes bench/results/faults.json
(see the package's docstring)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench import faults
from bench.faults import scenarios
from bench.faults.lab import (
    HEARTBEAT,
    PASSWORD,
    REAP,
    REPUBLISH,
    ROOT,
    STALE,
    USER,
    Lab,
)
from bench.faults.scenarios import SCENARIOS
from bench.faults.web import login

RESULTS = ROOT / "bench" / "results" / "faults.json"


def summarise(records: list[dict]) -> dict:
    seconds = [r["seconds_to_recover"] for r in records if r.get("seconds_to_recover") is not None]
    return {
        "trials": len(records),
        "recovered": sum(bool(r.get("recovered")) for r in records),
        "lost": sum(r.get("lost", 0) for r in records),
        "duplicated": sum(r.get("duplicated", 0) for r in records),
        "final_status_right": sum(bool(r.get("final_status_right")) for r in records),
        "seconds_to_recover": {
            "median": round(statistics.median(seconds), 2) if seconds else None,
            "max": max(seconds) if seconds else None,
        },
        "runs": records,
    }


def setup(lab: Lab) -> None:
    lab.postgres_init()
    lab.redis_start()
    os.environ.update(lab.env)
    import django

    django.setup()
    from django.core.management import call_command

    # the commands' messages ("seed: 12 word lists imported ...", "created ...") are written
    # whatever the verbosity: on stderr, with the trials' lines, so stdout is the JSON alone
    log = {"stdout": sys.stderr, "stderr": sys.stderr}
    call_command("migrate", verbosity=0, interactive=False, **log)
    call_command("seed", verbosity=0, **log)
    call_command("create_user", USER, password=PASSWORD, role=["researcher"], verbosity=0, **log)


class Interrupted(SystemExit):
    """SIGTERM or SIGHUP (`timeout`, a closed terminal): unwinds like Ctrl-C, so the lab closes."""


@contextlib.contextmanager
def interruptible(lab: Lab, keep: bool = False):
    """Close the lab on any exit: normal, an exception, Ctrl-C, SIGTERM or SIGHUP (by default the
    last two end Python without running `finally`, leaving workers and Postgres behind). Further
    signals are ignored while it closes."""

    def interrupt(signum, _frame):
        raise Interrupted(128 + signum)

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield lab
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        try:
            lab.close(keep=keep)
        finally:
            signal.signal(signal.SIGINT, signal.default_int_handler)
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def run(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="twentyq-faults-", dir="/tmp"))
    os.chmod(workdir, 0o755)
    lab = Lab(workdir, words=args.words, samples=args.samples)
    results: dict = {
        "settings": {
            "JOB_STALE_SECONDS": STALE,
            "JOB_HEARTBEAT_SECONDS": HEARTBEAT,
            "JOB_REAP_SECONDS": REAP,
            "JOB_REPUBLISH_SECONDS": REPUBLISH,
            "games_per_job": args.words * args.samples,
        }
    }
    with interruptible(lab, keep=args.keep):
        setup(lab)
        lab.housekeeping()
        lab.worker("jobs-a")
        for name in args.scenarios:
            t0 = time.monotonic()
            records = []
            if name == "sigstop":
                lab.worker("jobs-b")
            session = None
            if name == "redis_outage":
                lab.web()
                session = login(lab.web_url)
            for trial in range(args.trials):
                try:
                    if name == "redis_outage":
                        record = scenarios.scenario_redis_outage(lab, trial, *session)
                    elif name == "pg_outage":
                        record = scenarios.scenario_pg_outage(lab, trial, args.pg_outage_seconds)
                    else:
                        record = getattr(scenarios, f"scenario_{name}")(lab, trial)
                except (
                    Exception
                ) as exc:  # a trial that could not even be set up counts as not recovered
                    record = {"recovered": False, "error": f"{type(exc).__name__}: {exc}"[:500]}
                records.append(record)
                print(
                    json.dumps({"scenario": name, "trial": trial, **record}),
                    file=sys.stderr,
                    flush=True,
                )
            for extra in ("jobs-b", "jobs-busy", "web"):
                lab.kill(extra, signal.SIGTERM)
            if "jobs-a" not in lab.procs:
                lab.worker("jobs-a")
            results[name] = {**summarise(records), "seconds": round(time.monotonic() - t0, 1)}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.faults", description=faults.__doc__.split("\n\n")[0]
    )
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument(
        "--scenarios", default=",".join(SCENARIOS), type=lambda s: [x for x in s.split(",") if x]
    )
    parser.add_argument("--words", type=int, default=30, help="words per evaluation job")
    parser.add_argument("--samples", type=int, default=2, help="games per word")
    parser.add_argument("--pg-outage-seconds", type=float, default=15.0)
    parser.add_argument(
        "--keep", action="store_true", help="keep the work folder (logs) under /tmp"
    )
    parser.add_argument(
        "--no-save", action="store_true", help="print only; do not write bench/results/faults.json"
    )
    args = parser.parse_args()
    unknown = set(args.scenarios) - set(SCENARIOS)
    if unknown:
        parser.error(f"unknown scenarios {sorted(unknown)}; known: {', '.join(SCENARIOS)}")
    results = run(args)
    print(json.dumps(results, indent=2))
    if not args.no_save:  # scenarios not run this time keep their earlier results
        saved = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
        settings = {**saved.get("settings", {}), **results.pop("settings")}
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps({**saved, **results, "settings": settings}, indent=2) + "\n")


if __name__ == "__main__":
    main()
