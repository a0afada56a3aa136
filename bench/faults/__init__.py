"""`python -m bench.faults [--trials N] [--scenarios kill9,sigstop,...]`: faults injected into real
processes on this machine, each scenario N times, on a private Postgres cluster (under /tmp) and a
private redis-server (no persistence), on free ports taken at start, so the machine's shared
services are never touched and two runs can share a machine. Interrupted (Ctrl-C, or SIGTERM from
`timeout`), it stops everything it started and removes its folder before exiting. Processes:
Celery job workers (prefork), a housekeeping worker running the beat, and gunicorn for the submit
scenario, as in `make run` and the compose layout.

Scenarios (each trial an `evaluation` job: information-gain guesser, KB judge, a few words):
- kill9: SIGKILL of the worker (all its processes) mid-evaluation; a fresh worker is started.
- sigstop: SIGSTOP of the pool child running the job; the reaper re-queues, another worker claims
  and runs it; SIGCONT: the woken worker must stop quietly (no failure, no overwrite).
- redis_outage: the broker is down at `POST /api/jobs/` (expect 503 with the job id), then comes
  back empty; the republish sweep must send the job.
- redis_restart: a job waits in the broker's queue (no free worker) when Redis restarts without
  persistence and loses it; the sweep must publish it again, and the job must run once.
- busy_queue: every job slot busy (long jobs running, more waiting), then SIGKILL of the worker of
  the evaluation: the reaper must re-queue it within JOB_STALE_SECONDS + 10 s.
- pg_outage: the database is stopped mid-evaluation for --pg-outage-seconds, then started.

Per scenario: trials, recovered, lost and duplicated games, seconds to recover (fault, or the
service's return, to the job running again under a new claim; busy_queue: to the re-queue), final
status right. Prints JSON and writes bench/results/faults.json."""
