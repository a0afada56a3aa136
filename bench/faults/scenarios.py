"""The faults, one function a scenario: each submits an evaluation job, injects its fault and
returns the trial's record (bench.faults.jobs.outcome)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
import urllib.request

from bench.faults.jobs import games_of, job_state, outcome, submit_eval, wait_games, wait_reclaimed
from bench.faults.lab import REPUBLISH, STALE, Lab
from bench.faults.processes import wait_for
from bench.faults.web import api_post

SCENARIOS = ("kill9", "sigstop", "redis_outage", "redis_restart", "busy_queue", "pg_outage")


def scenario_kill9(lab: Lab, trial: int) -> dict:
    job_id = submit_eval(lab, 1000 + trial)
    wait_games(job_id, lab.words * lab.samples // 3)
    claim = job_state(job_id)["claim"]
    t_fault = time.monotonic()
    lab.kill("jobs-a", signal.SIGKILL)
    lab.worker("jobs-a")  # what a supervisor (compose restart, systemd) does
    return outcome(lab, job_id, t_fault, wait_reclaimed(job_id, claim))


def scenario_sigstop(lab: Lab, trial: int) -> dict:
    job_id = submit_eval(lab, 2000 + trial)
    wait_games(job_id, lab.words * lab.samples // 3)
    state = job_state(job_id)
    pid = int(
        state["worker"].rsplit(":", 1)[1]
    )  # worker_name(): host:native thread id = the pool child
    t_fault = time.monotonic()
    os.kill(pid, signal.SIGSTOP)
    try:
        t_back = wait_reclaimed(job_id, state["claim"], timeout=STALE + 60)
        # let the new claim store a batch (or finish) before the old one wakes
        if t_back is not None:
            played = games_of(job_id)[1]
            with contextlib.suppress(TimeoutError):
                wait_for(
                    lambda: (
                        games_of(job_id)[1] > played
                        or job_state(job_id).get("status") == "finished"
                    ),
                    60,
                    "the new claim to store games",
                )
    finally:
        os.kill(pid, signal.SIGCONT)
    record = outcome(lab, job_id, t_fault, t_back)
    try:  # the woken task ends with "superseded", not a failure
        wait_for(
            lambda: (
                f"job {job_id}: claim {state['claim']} was superseded"
                in lab.log_text("jobs-a") + lab.log_text("jobs-b")
            ),
            60,
            "the stale task to stop",
        )
        record["stale_worker_stopped_quietly"] = True
    except TimeoutError:
        record["stale_worker_stopped_quietly"] = False
    record["recovered"] = record["recovered"] and record["stale_worker_stopped_quietly"]
    return record


def scenario_redis_outage(
    lab: Lab, trial: int, session: urllib.request.OpenerDirector, csrf: str
) -> dict:
    lab.redis_stop()
    t_down = time.monotonic()
    status, body = api_post(
        session,
        csrf,
        lab.web_url,
        "/api/jobs/",
        {"kind": "evaluation", "config": lab.eval_params(3000 + trial)},
    )
    seconds_to_answer = round(time.monotonic() - t_down, 2)
    job_id = body.get("id")
    state = job_state(job_id) if job_id else {}
    time.sleep(2)
    lab.redis_start()  # back, empty: nothing was persisted
    t_back = time.monotonic()
    extra = {
        "http_status": status,
        "seconds_to_answer": seconds_to_answer,
        "queued_after_503": state.get("status") == "queued",
    }
    if job_id is None:
        return {
            "recovered": False,
            "lost": lab.words * lab.samples,
            "duplicated": 0,
            "final_status_right": False,
            **extra,
            "body": body,
        }
    record = outcome(lab, job_id, t_back, wait_reclaimed(job_id, 0, timeout=120), extra)
    record["recovered"] = record["recovered"] and status == 503 and extra["queued_after_503"]
    return record


def scenario_busy_queue(lab: Lab, trial: int) -> dict:
    """jobs-busy's two slots run long jobs, the evaluation runs on jobs-a, two more long jobs wait:
    every job slot is busy and the queue has a backlog when jobs-a is killed."""
    from webapp.jobs.models import Job
    from webapp.jobs.services import job_cancel, job_submit

    def long_job() -> int:
        return job_submit(kind="smoke", params={"steps": 10_000, "seconds_per_step": 0.05}).pk

    lab.kill("jobs-a", signal.SIGTERM)  # idle: the long jobs must land on jobs-busy only
    if "jobs-busy" not in lab.procs:
        lab.worker("jobs-busy", concurrency=2)
    busy = [long_job(), long_job()]
    wait_for(
        lambda: Job.objects.filter(pk__in=busy, status="running").count() == 2,
        90,
        "jobs-busy's slots",
    )
    job_id = submit_eval(lab, 4000 + trial)
    lab.worker("jobs-a")
    wait_games(job_id, lab.words * lab.samples // 4)
    busy += [long_job(), long_job()]  # the backlog
    state = job_state(job_id)
    t_fault = time.monotonic()
    lab.kill("jobs-a", signal.SIGKILL)
    try:
        wait_for(
            lambda: job_state(job_id).get("requeues", 0) > state["requeues"],
            STALE + 60,
            "the reaper to re-queue",
            interval=0.1,
        )
        t_requeued = time.monotonic()
    except TimeoutError:
        t_requeued = None
    slots = Job.objects.filter(pk__in=busy, status="running").count()
    backlog = Job.objects.filter(pk__in=busy, status="queued").count()
    for pk in busy:  # free the slots so the evaluation can finish
        job_cancel(job=Job.objects.get(pk=pk))
    lab.worker("jobs-a")
    seconds = None if t_requeued is None else t_requeued - t_fault
    extra = {
        "busy_slots_at_requeue": slots,
        "backlog_at_requeue": backlog,
        "target_seconds": STALE + 10,
        "within_target": seconds is not None and seconds <= STALE + 10,
    }
    record = outcome(lab, job_id, t_fault, t_requeued, extra)
    wait_for(
        lambda: not Job.objects.filter(pk__in=busy, status__in=["running", "stopping"]).exists(),
        60,
        "the long jobs to stop",
    )
    return record


def scenario_redis_restart(lab: Lab, trial: int) -> dict:
    from webapp.jobs.models import Job
    from webapp.jobs.services import broker_holds

    lab.kill("jobs-a", signal.SIGTERM)  # no worker: the message waits in Redis
    job_id = submit_eval(lab, 6000 + trial)
    job = Job.objects.get(pk=job_id)
    held_before = broker_holds(job.queue, job.task_id)
    lab.redis_stop()
    lab.redis_start()  # empty: the waiting message is gone
    t_fault = time.monotonic()
    held_after = broker_holds(job.queue, job.task_id)
    lab.worker("jobs-a")
    t_claimed = wait_reclaimed(job_id, 0, timeout=REPUBLISH + 90)
    extra = {"message_held_before": held_before, "message_held_after_restart": held_after}
    record = outcome(lab, job_id, t_fault, t_claimed, extra)
    record["recovered"] = record["recovered"] and held_before and not held_after
    return record


def scenario_pg_outage(lab: Lab, trial: int, outage: float) -> dict:
    job_id = submit_eval(lab, 5000 + trial)
    wait_games(job_id, lab.words * lab.samples // 3)
    claim = job_state(job_id)["claim"]
    t_fault = time.monotonic()
    lab.postgres_stop()
    time.sleep(outage)
    lab.postgres_start()
    t_back = time.monotonic()
    record = outcome(
        lab,
        job_id,
        t_back,
        wait_reclaimed(job_id, claim, timeout=STALE + 90),
        {"outage_seconds": round(t_back - t_fault, 2)},
    )
    return record
