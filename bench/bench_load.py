"""Load: gunicorn + two Celery workers + Redis + PostgreSQL on one machine, simulated users.

Issue 6. Starts everything itself, on loopback only: a PostgreSQL database of its own
(`incident_kb_load`, created on --postgres and dropped at the end), a Redis server on a free
port, `gunicorn -c python:config.gunicorn config.wsgi -w 4` (--web-workers), and two `celery -A config worker` processes. The database is
migrated and seeded with the catalog and the runbooks, and gets --users engineer accounts.

Each simulated user signs in through the form (with its CSRF token), then for --duration
seconds mixes, with a random pause of up to --think seconds between actions:
browsing the incident list, searching it, opening incident pages, filing an incident through
the form (with the similar-incidents fragment it asks for while typing), and submitting a real
log tail through /analyses/new/, then polling its page the way htmx does (every 0.7 s) until
the result is there. When time is up it waits for the queue to drain and prints latency
p50/p95/p99 per request type, throughput, errors (target 0), and analyses accepted vs
finished (must be equal).

    .venv/bin/python bench/bench_load.py [--users 20] [--duration 60] [--think 1.0]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

import psycopg
import requests

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.load_users import PASSWORD, POLL_EVERY, Stats, User, report, spread

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "logmatch" / "cases"
DATABASE = "incident_kb_load"
TASK_DONE = re.compile(r"Task incidents\.tasks\.(\w+)\[[^]]+\] succeeded in ([0-9.]+)s")


class Services:
    """The processes of one machine's deployment, each in its own process group."""

    def __init__(self, env: dict[str, str], var_dir: Path):
        self.env, self.var_dir = env, var_dir
        self.processes: list[subprocess.Popen] = []

    def start(self, name: str, *command: str) -> Path:
        log = self.var_dir / f"{name}.log"
        self.processes.append(
            subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env,
                stdout=log.open("wb"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        return log

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)


def wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.1)


def http_up(url: str) -> bool:
    try:
        return requests.get(url, timeout=10).status_code == 200
    except requests.RequestException:
        return False


def drop_database(server: str) -> None:
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--think", type=float, default=1.0, help="max pause between actions, s")
    parser.add_argument("--postgres", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--drain-timeout", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--web-workers", type=int, default=4, help="gunicorn's sync workers")
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="bench-load-", dir=ROOT / "var"))
    redis_port, web_port = free_port(), free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{args.postgres}/{DATABASE}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
        "CACHE_URL": f"redis://127.0.0.1:{redis_port}/1",  # as the README's production
        "VAR_DIR": str(var_dir),
        "LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    os.environ.update(env)  # this process reads and seeds the same database
    drop_database(args.postgres)
    with psycopg.connect(f"{args.postgres}/postgres", autocommit=True) as admin:
        admin.execute(
            f"CREATE DATABASE {DATABASE} ENCODING 'UTF8' LC_COLLATE 'C.UTF-8' "
            "LC_CTYPE 'C.UTF-8' TEMPLATE template0"
        )
    services = Services(env, var_dir)
    try:
        run(args, services, redis_port, web_port)
    finally:
        services.stop()
        from django.db import connections

        connections.close_all()
        drop_database(args.postgres)
        shutil.rmtree(var_dir, ignore_errors=True)


def run(args, services: Services, redis_port: int, web_port: int) -> None:
    """Set the machine up, load it for --duration seconds, let the queue drain, print it all."""
    import django

    django.setup()
    setup_started = time.perf_counter()
    usernames, slugs, tails = seed(args.users)
    base, worker_logs, web_log = start_processes(services, redis_port, web_port, args.web_workers)
    setup_seconds = time.perf_counter() - setup_started

    stats, load_seconds = drive_users(args, base, usernames, slugs, tails)
    drain_seconds = drain(args.drain_timeout)

    report(args, stats, load_seconds, drain_seconds, setup_seconds)
    print_pipeline(stats, drain_seconds, worker_logs, web_log)


def seed(users: int) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """Migrate and seed the database, and give it the engineer accounts; return their
    usernames, the seeded incidents' slugs, and the log tails the users will submit."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from accounts.roles import ENGINEER, user_set_role
    from incidents.models import Incident
    from incidents.seeding import catalog_seed
    from runbooks.seeding import runbook_catalog_seed

    call_command("migrate", verbosity=0)
    catalog_seed(language="en")
    runbook_catalog_seed(language="en")
    usernames = [f"load{n:02d}" for n in range(1, users + 1)]
    for username in usernames:
        user = get_user_model().objects.create_user(username=username, password=PASSWORD)
        user_set_role(user=user, role=ENGINEER)
    slugs = list(Incident.objects.values_list("slug", flat=True))
    tails = [(f"exp/{p.stem}/log/run.1.log", p.read_text()) for p in sorted(CASES.glob("*.log"))]
    return usernames, slugs, tails


def start_processes(
    services: Services, redis_port: int, web_port: int, web_workers: int
) -> tuple[str, list[Path], Path]:
    """Start Redis, two Celery workers and gunicorn, and wait until they all serve; return
    the site's base URL, the workers' logs and gunicorn's log."""
    python = sys.executable
    services.start(
        "redis",
        *("redis-server", "--port", str(redis_port), "--bind", "127.0.0.1"),
        *("--save", "", "--appendonly", "no"),
    )
    worker_logs = [
        services.start(
            f"worker-{n}",
            *(python, "-m", "celery", "-A", "config", "worker", "--loglevel", "INFO"),
            *("--concurrency", "1", "--hostname", f"load{n}@%h"),
            *("--without-gossip", "--without-mingle", "--without-heartbeat"),
        )
        for n in (1, 2)
    ]
    web_log = services.start(
        "gunicorn",
        *(python, "-m", "gunicorn", "-c", "python:config.gunicorn", "config.wsgi"),
        *("-w", str(web_workers)),
        *("--bind", f"127.0.0.1:{web_port}", "--log-level", "warning"),
    )
    base = f"http://127.0.0.1:{web_port}"
    wait_for(lambda: http_up(base + "/healthz"), 60, "gunicorn")
    wait_for(lambda: all(b"ready." in log.read_bytes() for log in worker_logs), 60, "workers")
    return base, worker_logs, web_log


def drive_users(
    args, base: str, usernames: list[str], slugs: list[str], tails
) -> tuple[Stats, float]:
    """Sign every user in, then let them all act at once for --duration seconds; return what
    they recorded and how long the load really lasted."""
    stats = Stats()
    rng = random.Random(args.seed)
    users = [User(base, name, stats, slugs, random.Random(rng.random())) for name in usernames]
    deadline_box = [0.0]

    def set_deadline() -> None:  # once everyone is signed in, before anyone goes on
        deadline_box[0] = time.perf_counter() + args.duration

    start = threading.Barrier(len(users) + 1, action=set_deadline)
    threads = [
        threading.Thread(
            target=user.run, args=(tails, start, deadline_box, args.think), daemon=True
        )
        for user in users
    ]
    for thread in threads:
        thread.start()
    start.wait(timeout=600)
    began = deadline_box[0] - args.duration
    for thread in threads:
        thread.join(args.duration + 120)
    return stats, time.perf_counter() - began


def drain(timeout: float) -> float:
    """Wait, up to `timeout` seconds, until no analysis is queued or running; return the wait."""
    from incidents.models import Analysis

    unfinished = Analysis.objects.filter(status__in=["queued", "running"])
    drain_started = time.perf_counter()
    deadline = drain_started + timeout
    while unfinished.exists() and time.perf_counter() < deadline:
        time.sleep(0.5)
    return time.perf_counter() - drain_started


def print_pipeline(stats: Stats, drain_seconds: float, worker_logs: list[Path], web_log: Path):
    """Print the analyses accepted vs finished, how long a result took to reach the page and
    the queue, the workers' run times, and the errors each process logged."""
    from django.db.models import Count

    from incidents.models import Analysis

    counts = dict(Analysis.objects.order_by().values_list("status").annotate(n=Count("id")))
    claimed = Analysis.objects.exclude(started_at=None).values_list("created_at", "started_at")
    waits = [(started - created).total_seconds() * 1000 for created, started in claimed]
    accepted = len(stats.accepted)
    finished = counts.get("done", 0) + counts.get("failed", 0)
    print(
        f"analyses: accepted {accepted} (rows {sum(counts.values())}), finished {finished} "
        f"(done {counts.get('done', 0)}, failed {counts.get('failed', 0)}), "
        f"still queued/running {counts.get('queued', 0) + counts.get('running', 0)} "
        f"after {drain_seconds:.1f} s of drain → {'EQUAL' if accepted == finished else 'NOT EQUAL'}"
    )
    if stats.seen_done:
        print(
            f"{'submit → result on the page':34s} {spread(stats.seen_done)}  (as users saw it, polling every {POLL_EVERY} s)"
        )
    if waits:
        print(f"{'queue wait, submit → claimed':34s} {spread(waits)}  (server clock)")
    runs: dict[str, list[float]] = defaultdict(list)
    for log in worker_logs:
        for task, seconds in TASK_DONE.findall(log.read_text(errors="replace")):
            runs[task].append(float(seconds) * 1000)
    for task, values in sorted(runs.items()):
        print(f"{'worker run time, ' + task:34s} {spread(values)}  ({len(values)} tasks)")
    for log in [*worker_logs, web_log]:
        text = log.read_text(errors="replace")
        print(f"{log.stem}: {text.count('ERROR') + text.count('Traceback')} errors logged")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


if __name__ == "__main__":
    main()
