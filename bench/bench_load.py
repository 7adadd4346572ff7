"""Load: gunicorn + two Celery workers + Redis + PostgreSQL on one machine, simulated users.

Issue 6. Starts everything itself, on loopback only: a PostgreSQL database of its own
(`incident_kb_load`, created on --postgres and dropped at the end), a Redis server on a free
port, `gunicorn config.wsgi -w 4`, and two `celery -A config worker` processes. The database is
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CASES = ROOT / "tests" / "logmatch" / "cases"
DATABASE = "incident_kb_load"
PASSWORD = "load-pw-5417"
POLL_EVERY = 0.7  # the analysis page's hx-trigger
TASK_DONE = re.compile(r"Task incidents\.tasks\.(\w+)\[[^]]+\] succeeded in ([0-9.]+)s")
SEARCHES = [
    "out of memory",
    "nccl",
    "timeout",
    "显存",
    "disk",
    "checkpoint",
    "NaN",
    "tokenizer",
    "cuda",
    "kaldi",
]
ACTIONS = {  # weight of each action in a user's mix
    "browse": 30,
    "search": 25,
    "incident": 25,
    "file": 5,
    "analyse": 15,
}


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.samples: list[str] = []
        self.accepted: list[int] = []
        self.seen_done: list[float] = []
        self.filed: list[str] = []

    def record(self, kind: str, seconds: float, ok: bool, detail: str = "") -> None:
        with self.lock:
            self.latency[kind].append(seconds * 1000)
            if not ok:
                self.errors[kind] += 1
                if len(self.samples) < 10:
                    self.samples.append(f"{kind}: {detail}")


class User:
    """One engineer in a browser: a session, and the requests a page visit makes."""

    def __init__(self, base: str, username: str, stats: Stats, slugs: list[str], rng):
        self.base, self.username, self.stats, self.slugs, self.rng = (
            base,
            username,
            stats,
            slugs,
            rng,
        )
        self.session = requests.Session()

    def request(self, kind: str, method: str, path: str, expect: int, **kwargs):
        started = time.perf_counter()
        try:
            response = self.session.request(
                method, self.base + path, allow_redirects=False, timeout=30, **kwargs
            )
        except requests.RequestException as error:
            self.stats.record(kind, time.perf_counter() - started, False, repr(error))
            return None
        ok = response.status_code == expect
        detail = f"{method} {path} → {response.status_code}"
        self.stats.record(kind, time.perf_counter() - started, ok, detail)
        return response if ok else None

    def sign_in(self) -> None:
        page = self.request("sign in: form", "GET", "/login/", 200)
        response = self.request(
            "sign in: post",
            "POST",
            "/login/",
            302,
            data={
                "username": self.username,
                "password": PASSWORD,
                "csrfmiddlewaretoken": csrf(page),
            },
        )
        if response is None:
            raise SystemExit(f"{self.username} could not sign in")

    def browse(self) -> None:
        params = self.rng.choice(
            [{}, {}, {"page": "2"}, {"stage": "train"}, {"sort": "-recurrences"}]
        )
        self.request("browse /incidents/", "GET", "/incidents/", 200, params=params)

    def search(self) -> None:
        self.request(
            "search ?q=", "GET", "/incidents/", 200, params={"q": self.rng.choice(SEARCHES)}
        )

    def incident(self) -> None:
        with self.stats.lock:
            slug = self.rng.choice(self.slugs + self.stats.filed)
        self.request("incident page", "GET", f"/incidents/{slug}/", 200)

    def file(self) -> None:
        page = self.request("file: form", "GET", "/incidents/new/", 200)
        if page is None:
            return
        n = self.rng.randrange(10**6)
        symptom = f"ERROR shard-loader[{n}]: manifest checksum mismatch for shard {n % 977} of corpus v{n % 13}"
        self.request(
            "file: similar (htmx)",
            "GET",
            "/incidents/similar/",
            200,
            params={"symptom": symptom},
            headers={"HX-Request": "true"},
        )
        response = self.request(
            "file: post",
            "POST",
            "/incidents/new/",
            302,
            data={
                "csrfmiddlewaretoken": csrf(page),
                "title": f"Shard manifest checksum mismatch {self.username} {n}",
                "symptom": symptom,
                "root_cause": "The manifest was regenerated while shards were still being copied.",
                "remedy": f"python tools/verify_shards.py --manifest data/v{n % 13}/manifest.json --fix",
                "discipline": "reconcile",
                "prevention": "Reconcile shard counts and checksums before training starts.",
                "stage": "data",
                "severity": "medium",
                "environment": "8×A100, torch 2.4, CUDA 12.4",
                "tags": "shards, checksum",
            },
        )
        if response is not None:
            location = response.headers["Location"]
            with self.stats.lock:
                self.stats.filed.append(location.rstrip("/").rsplit("/", 1)[-1])
            self.request("incident page", "GET", location, 200)

    def analyse(self, tails, deadline: float) -> None:
        page = self.request("analysis: form", "GET", "/analyses/new/", 200)
        if page is None:
            return
        log_path, text = self.rng.choice(tails)
        started = time.perf_counter()
        response = self.request(
            "analysis: submit",
            "POST",
            "/analyses/new/",
            302,
            data={"csrfmiddlewaretoken": csrf(page), "log": text, "log_path": log_path},
        )
        if response is None:
            return
        location = response.headers["Location"]
        with self.stats.lock:
            self.stats.accepted.append(int(location.rstrip("/").rsplit("/", 1)[-1]))
        shown = self.request("analysis page", "GET", location, 200)
        while shown is not None and status_of(shown.text) in ("queued", "running"):
            if time.perf_counter() > deadline:
                return  # time is up; the drain below still waits for it
            time.sleep(POLL_EVERY)
            shown = self.request(
                "analysis: poll (htmx)", "GET", location, 200, headers={"HX-Request": "true"}
            )
        if shown is not None:
            with self.stats.lock:
                self.stats.seen_done.append((time.perf_counter() - started) * 1000)

    def run(self, tails, start: threading.Barrier, deadline_box: list[float], think: float) -> None:
        self.sign_in()
        start.wait()
        deadline = deadline_box[0]
        kinds, weights = zip(*ACTIONS.items(), strict=True)
        while time.perf_counter() < deadline:
            kind = self.rng.choices(kinds, weights)[0]
            if kind == "analyse":
                self.analyse(tails, deadline)
            else:
                getattr(self, kind)()
            time.sleep(self.rng.uniform(0, think))


def csrf(response) -> str:
    match = re.search(
        r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text if response else ""
    )
    return match.group(1) if match else ""


def status_of(html: str) -> str:
    match = re.search(r'id="analysis-result"[^>]*data-status="(\w+)"', html)
    return match.group(1) if match else "?"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


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
    args = parser.parse_args()

    var_dir = Path(tempfile.mkdtemp(prefix="bench-load-", dir=ROOT / "var"))
    redis_port, web_port = free_port(), free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{args.postgres}/{DATABASE}",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{redis_port}/0",
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
        run(args, services, env, redis_port, web_port)
    finally:
        services.stop()
        from django.db import connections

        connections.close_all()
        drop_database(args.postgres)
        shutil.rmtree(var_dir, ignore_errors=True)


def run(args, services: Services, env: dict, redis_port: int, web_port: int) -> None:
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db.models import Count

    from accounts.roles import ENGINEER, user_set_role
    from incidents.models import Analysis, Incident
    from incidents.seeding import catalog_seed
    from runbooks.seeding import runbook_catalog_seed

    setup_started = time.perf_counter()
    call_command("migrate", verbosity=0)
    catalog_seed(language="en")
    runbook_catalog_seed(language="en")
    usernames = [f"load{n:02d}" for n in range(1, args.users + 1)]
    for username in usernames:
        user = get_user_model().objects.create_user(username=username, password=PASSWORD)
        user_set_role(user=user, role=ENGINEER)
    slugs = list(Incident.objects.values_list("slug", flat=True))
    tails = [(f"exp/{p.stem}/log/run.1.log", p.read_text()) for p in sorted(CASES.glob("*.log"))]

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
        *(python, "-m", "gunicorn", "config.wsgi", "-w", "4"),
        *("--bind", f"127.0.0.1:{web_port}", "--log-level", "warning"),
    )
    base = f"http://127.0.0.1:{web_port}"
    wait_for(lambda: http_up(base + "/healthz"), 60, "gunicorn")
    wait_for(lambda: all(b"ready." in log.read_bytes() for log in worker_logs), 60, "workers")
    setup_seconds = time.perf_counter() - setup_started

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
    load_seconds = time.perf_counter() - began

    unfinished = Analysis.objects.filter(status__in=["queued", "running"])
    drain_started = time.perf_counter()
    deadline = drain_started + args.drain_timeout
    while unfinished.exists() and time.perf_counter() < deadline:
        time.sleep(0.5)
    drain_seconds = time.perf_counter() - drain_started

    report(args, stats, load_seconds, drain_seconds, setup_seconds)
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


def spread(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 50):7.0f} ms  p95 {percentile(values, 95):7.0f} ms  "
        f"p99 {percentile(values, 99):7.0f} ms"
    )


def report(args, stats: Stats, load_seconds: float, drain_seconds: float, setup_seconds: float):
    total = sum(len(v) for k, v in stats.latency.items() if not k.startswith("sign in"))
    errors = sum(stats.errors.values())
    print(
        f"load: {args.users} users, {load_seconds:.0f} s, think 0–{args.think:.1f} s; gunicorn -w 4 "
        f"(sync), 2 celery workers (concurrency 1), Redis, PostgreSQL; {os.cpu_count()} CPUs; "
        f"setup {setup_seconds:.0f} s"
    )
    print(
        f"{'request':26s} {'count':>6s} {'p50 ms':>8s} {'p95 ms':>8s} {'p99 ms':>8s} {'errors':>7s}"
    )
    for kind in sorted(stats.latency):
        values = stats.latency[kind]
        print(
            f"{kind:26s} {len(values):6d} {percentile(values, 50):8.1f} {percentile(values, 95):8.1f} "
            f"{percentile(values, 99):8.1f} {stats.errors.get(kind, 0):7d}"
        )
    print(
        f"throughput: {total / load_seconds:.1f} requests/s ({total} requests, sign-ins excluded); "
        f"errors: {errors}"
    )
    for sample in stats.samples:
        print("  error:", sample)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


if __name__ == "__main__":
    main()
