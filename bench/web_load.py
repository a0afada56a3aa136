"""Load on the play API: simulated guest players against gunicorn. `python -m bench.web_load`
prints one JSON object.

It creates, migrates and seeds a bench database (Postgres `twentyq_bench` on 127.0.0.1 with the
`twentyq` role; SQLite in var/bench-web when Postgres is unreachable, with a note), starts
gunicorn (webapp.wsgi:application, settings webapp.settings.local, GUEST_PLAY_RATE set high) on a
free 127.0.0.1 port, warms every worker up, then runs `--players` threads: each plays guesser
games against the `kb` judge through the API (POST /api/games/, then POST
/api/games/{id}/turns/ with questions in the judge's forms) until it has sent `--turns-per-player`
questions or `--max-seconds` have passed. Reported: turn requests per second, p50/p95/p99
latency of the turn endpoint, errors (non-2xx or connection failures). gunicorn is stopped at
the end. Local traffic only.

    python -m bench.web_load [--players 32] [--turns-per-player 40] [--workers 4] [--think-ms 1000]

`--think-ms 0` turns the players into a closed-loop stress test (requests back to back). The
JSON reports the load average too: on a shared 2-core machine other processes skew latencies.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "var" / "bench-web"
PG_ADMIN_URL = "postgres://twentyq:twentyq@127.0.0.1:5432/postgres"
PG_BENCH_DB = "twentyq_bench"
TARGET_P95_MS = 100.0


def bench_database(admin_url: str = PG_ADMIN_URL) -> tuple[str, str]:
    """(DATABASE_URL, note): the bench Postgres database, created if missing; else SQLite."""
    try:
        import psycopg

        with psycopg.connect(
            admin_url.replace("postgres://", "postgresql://"), autocommit=True, connect_timeout=3
        ) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (PG_BENCH_DB,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{PG_BENCH_DB}"')
        return admin_url.rsplit("/", 1)[0] + f"/{PG_BENCH_DB}", ""
    except Exception as err:  # no server, no role, no CREATEDB: the embedded default still works
        return (
            f"sqlite:///{BENCH_DIR / 'bench.sqlite3'}",
            f"Postgres unreachable ({type(err).__name__}): SQLite used",
        )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(database_url: str) -> dict:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="webapp.settings.local",
        DATABASE_URL=database_url,
        DEBUG="false",
        GUEST_PLAY_RATE="1000000/minute",
        DATA_DIR=str(BENCH_DIR),
        LOG_LEVEL="WARNING",
    )
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    return env


def prepare(env: dict) -> None:
    for command in (["migrate", "--noinput", "-v", "0"], ["seed"]):
        subprocess.run(
            [sys.executable, "manage.py", *command],
            cwd=ROOT,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )


def start_gunicorn(env: dict, port: int, workers: int, log_path: Path) -> subprocess.Popen:
    # the child gets its own copy of the descriptor, so this process's handle can close at once
    with open(log_path, "w") as log:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "webapp.wsgi:application",
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{port}",
                "--backlog",
                "256",
                "--timeout",
                "60",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_until_up(base: str, server: subprocess.Popen, timeout: float = 60.0) -> None:
    import requests

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"gunicorn exited with status {server.returncode}")
        try:
            if requests.get(f"{base}/", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.3)
    raise RuntimeError("gunicorn did not answer in time")


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def question_bank(size: int = 400) -> list[str]:
    """Questions in the KB judge's forms over its most widely applicable concepts."""
    from games.judges.kb import KBJudge

    judge = KBJudge()
    concepts = judge.vocabulary("", limit=size)
    forms = [f for f in judge.forms() if " a {x}" not in f]  # avoid "a" before vowels
    return [form.replace("{x}", concept) for concept in concepts for form in forms]


class Player(threading.Thread):
    """One guest: plays guesser games over one HTTP session until its budget or the deadline."""

    def __init__(
        self,
        base: str,
        questions: list[str],
        turns: int,
        deadline: float,
        think_s: float,
        seed: int,
    ):
        super().__init__(daemon=True)
        self.base, self.questions, self.turns, self.deadline, self.think_s = (
            base,
            questions,
            turns,
            deadline,
            think_s,
        )
        self.rng = random.Random(seed)
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.games = self.wins = 0

    def run(self) -> None:
        import requests

        session = requests.Session()
        while len(self.latencies) < self.turns and time.monotonic() < self.deadline:
            try:
                self.play_one(session)
            except requests.RequestException as err:
                self.errors.append(type(err).__name__)

    def play_one(self, session) -> None:
        created = session.post(
            f"{self.base}/api/games/", json={"role": "guesser", "judge": "kb"}, timeout=30
        )
        if created.status_code != 201:
            self.errors.append(f"create {created.status_code}")
            return
        game, self.games = created.json(), self.games + 1
        for index, question in enumerate(self.rng.sample(self.questions, len(self.questions))):
            if len(self.latencies) >= self.turns or time.monotonic() >= self.deadline:
                return
            time.sleep(self.rng.uniform(0.5, 1.5) * self.think_s)
            started = time.perf_counter()
            response = session.post(
                f"{self.base}/api/games/{game['id']}/turns/",
                json={"question": question, "expected_index": index},
                timeout=30,
            )
            self.latencies.append((time.perf_counter() - started) * 1000)
            if response.status_code != 201:
                self.errors.append(f"turn {response.status_code}")
                return
            state = response.json()["game"]
            if state["status"] != "playing":
                self.wins += state["outcome"] == "won"
                return


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, int(round(q / 100 * len(ordered) + 0.5)) - 1))
    return round(ordered[k], 2)


def run_players(
    base: str, questions: list[str], n: int, turns: int, seconds: float, think_s: float, seed: int
) -> tuple[list[Player], float]:
    deadline = time.monotonic() + seconds
    players = [Player(base, questions, turns, deadline, think_s, seed + i) for i in range(n)]
    started = time.perf_counter()
    for p in players:
        p.start()
    for p in players:
        p.join(timeout=seconds + 60)
    return players, time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=32)
    parser.add_argument("--turns-per-player", type=int, default=40)
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument(
        "--think-ms",
        type=float,
        default=1000.0,
        help="mean pause between a player's questions (uniform 0.5x-1.5x; a person takes 5-10 s)",
    )
    parser.add_argument("--max-seconds", type=float, default=90.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--pg-admin-url", default=PG_ADMIN_URL, help="where to create the bench database"
    )
    args = parser.parse_args(argv)

    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    load_before = round(os.getloadavg()[0], 2)
    database_url, note = bench_database(args.pg_admin_url)
    env = server_env(database_url)
    prepare(env)
    questions = question_bank()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = start_gunicorn(env, port, args.workers, BENCH_DIR / "gunicorn.log")
    try:
        wait_until_up(base, server)
        # Warm-up (not measured): every worker loads the knowledge base on its first game.
        run_players(
            base, questions, n=args.workers * 3, turns=3, seconds=60, think_s=0, seed=10_000
        )
        players, elapsed = run_players(
            base,
            questions,
            args.players,
            args.turns_per_player,
            args.max_seconds,
            args.think_ms / 1000,
            args.seed,
        )
    finally:
        stop(server)
    latencies = [ms for p in players for ms in p.latencies]
    errors = [e for p in players for e in p.errors]
    p95 = percentile(latencies, 95)
    result = {
        "bench": "web_load",
        "load_average_1min": {"before": load_before, "after": round(os.getloadavg()[0], 2)},
        "database": "postgresql" if database_url.startswith("postgres") else "sqlite",
        "note": note,
        "server": f"gunicorn, {args.workers} sync workers, webapp.settings.local, DEBUG=false",
        "cpus": os.cpu_count(),
        "players": args.players,
        "think_ms_mean": args.think_ms,
        "seconds": round(elapsed, 2),
        "games": sum(p.games for p in players),
        "games_won": sum(p.wins for p in players),
        "turn_requests": len(latencies),
        "requests_per_s": round(len(latencies) / elapsed, 1) if elapsed else None,
        "latency_ms": {
            "p50": percentile(latencies, 50),
            "p95": p95,
            "p99": percentile(latencies, 99),
            "mean": round(statistics.fmean(latencies), 2) if latencies else None,
            "max": round(max(latencies), 2) if latencies else None,
        },
        "errors": len(errors),
        "error_kinds": sorted(set(errors)),
        "target": {
            "p95_ms_below": TARGET_P95_MS,
            "met": p95 is not None and p95 < TARGET_P95_MS and not errors,
        },
    }
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
