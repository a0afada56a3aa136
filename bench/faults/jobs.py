"""What the scenarios read and wait for: a job's state and games (a database that is down reads
as nothing), its outcome after a fault, and the evaluation jobs they submit."""

from __future__ import annotations

import contextlib
import time

from bench.faults.lab import Lab
from bench.faults.processes import wait_for


def db(fn, default=None):
    """Run a read; a database that is down (or a dead connection) gives `default`, not a crash."""
    from django.db import Error, connection

    try:
        return fn()
    except Error:
        connection.close()
        return default


def job_state(job_id: int) -> dict:
    from webapp.jobs.models import Job

    return (
        db(
            lambda: (
                Job.objects.filter(pk=job_id)
                .values("status", "claim", "requeues", "error", "worker", "config")
                .first()
            ),
            {},
        )
        or {}
    )


def games_of(job_id: int) -> tuple[int, int]:
    """(games stored, distinct (word, sample) pairs among them)."""
    from webapp.play.models import Game

    rows = db(
        lambda: list(Game.objects.filter(job_id=job_id).values_list("secret", "sample_index")), []
    )
    return len(rows), len(set(rows))


def outcome(
    lab: Lab,
    job_id: int,
    t_fault: float,
    t_recovered: float | None,
    extra: dict | None = None,
    timeout: float = 240,
) -> dict:
    """Wait for the job to settle; count its games against what the evaluation should play."""
    with contextlib.suppress(TimeoutError):
        wait_for(
            lambda: job_state(job_id).get("status") in ("finished", "failed", "stopped"),
            timeout,
            f"job {job_id} to settle",
        )
    state = job_state(job_id)
    stored, distinct = games_of(job_id)
    from webapp.jobs.models import Job

    result = db(lambda: Job.objects.get(pk=job_id).result, {}) or {}
    expected = (lab.words - len(result.get("skipped_words", []))) * lab.samples
    record = {
        "job": job_id,
        "final_status": state.get("status"),
        "final_status_right": state.get("status") == "finished" and not state.get("error"),
        "expected_games": expected,
        "lost": max(expected - distinct, 0),
        "duplicated": stored - distinct,
        "claims": state.get("claim"),
        "seconds_to_recover": None if t_recovered is None else round(t_recovered - t_fault, 2),
        "seconds_to_finish": round(time.monotonic() - t_fault, 2),
        **(extra or {}),
    }
    record["recovered"] = bool(
        record["final_status_right"]
        and record["lost"] == 0
        and record["duplicated"] == 0
        and t_recovered is not None
        and record.get("within_target", True)
    )
    return record


def submit_eval(lab: Lab, seed: int) -> int:
    from webapp.jobs.services import job_submit

    return job_submit(kind="evaluation", params=lab.eval_params(seed)).pk


def wait_games(job_id: int, at_least: int, timeout: float = 180) -> None:
    wait_for(
        lambda: games_of(job_id)[1] >= at_least and job_state(job_id).get("status") == "running",
        timeout,
        f"job {job_id} to store {at_least} games",
    )


def wait_reclaimed(job_id: int, claim: int, timeout: float = 120) -> float | None:
    """When the job runs again under a later claim (or is finished by one), or None."""
    try:
        wait_for(
            lambda: (
                (s := job_state(job_id)).get("claim", 0) > claim
                and s.get("status") in ("running", "finished")
            ),
            timeout,
            f"job {job_id} to be claimed again",
            interval=0.1,
        )
        return time.monotonic()
    except TimeoutError:
        return None
