"""End-to-end latency of one analysis: submit → suggestions stored, through a real worker.

Issue 3's targets: median ≤ 150 ms with Redis, ≤ 400 ms on the embedded filesystem broker.
Both are measured in the same run, on the same throwaway test database (SQLite under the
bench's own VAR_DIR, or PostgreSQL when DATABASE_URL points there), seeded with the catalog,
against one real `celery -A config worker` process (prefork, concurrency 1) per broker. N
real tails (the engine's fixture cases) are submitted one at a time through
`analysis_request()`, with a random pause of up to --gap seconds before each, as people
submit; each is timed until its row reads done. Warm-up tails are not counted (a new pool
process compiles the knowledge index on its first task).

    .venv/bin/python bench/bench_e2e.py [--n 50] [--warmup 5] [--gap 0.2]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A VAR_DIR of its own: the filesystem broker's folders must not be shared with a worker
# that someone is running on the default var/ (it would take our tasks).
VAR_DIR = Path(tempfile.mkdtemp(prefix="bench-e2e-", dir=ROOT / "var"))
os.environ["VAR_DIR"] = str(VAR_DIR)

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from config.celery import app  # noqa: E402
from incidents.models import Analysis  # noqa: E402
from incidents.seeding import catalog_seed  # noqa: E402
from incidents.services import analysis_request  # noqa: E402
from tests.services import RedisServer, Worker, free_port, wait_until  # noqa: E402

CASES = ROOT / "tests" / "logmatch" / "cases"
TARGETS_MS = {"redis": 150, "filesystem": 400}


def filesystem_options() -> dict:
    """The transport options settings.py gives a process started with filesystem://."""
    broker = VAR_DIR / "broker"
    for sub in ("queue", "processed", "control"):
        (broker / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(broker / "queue"),
        "data_folder_out": str(broker / "queue"),
        "processed_folder": str(broker / "processed"),
        "store_processed": False,
        "control_folder": str(broker / "control"),
        "polling_interval": 0.1,
    }


def use_broker(url: str, options: dict) -> None:
    """Point this process's producer at `url` (Celery prefers the variable to its config)."""
    os.environ["CELERY_BROKER_URL"] = url
    app.conf.broker_url = url
    app.conf.broker_transport_options = options
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None


def run_one(user, log_path: str, text: str) -> tuple[float, int]:
    started = time.perf_counter()
    analysis = analysis_request(data=text, user=user, log_path=log_path)
    done = Analysis.objects.filter(pk=analysis.pk, status=Analysis.Status.DONE)
    deadline = started + 30
    while not done.exists():
        if time.perf_counter() > deadline:
            raise SystemExit(f"analysis {analysis.pk} not done after 30 s")
        time.sleep(0.002)
    return time.perf_counter() - started, analysis.pk


def measure(name: str, url: str, options: dict, user, tails, args) -> dict:
    use_broker(url, options)
    worker = Worker(url, f"bench-{name}")  # on our test database and VAR_DIR
    try:
        if not wait_until(worker.ready, 60):
            raise SystemExit(worker.log.read_text()[-3000:])
        for log_path, text in tails[: args.warmup]:
            run_one(user, log_path, text)
        rng = random.Random(3)
        times, ids = [], []
        for n in range(args.n):
            log_path, text = tails[n % len(tails)]
            time.sleep(rng.uniform(0, args.gap))
            seconds, pk = run_one(user, log_path, text)
            times.append(seconds * 1000)
            ids.append(pk)
    finally:
        worker.stop()
    rows = Analysis.objects.filter(pk__in=ids)
    waits = [(r.started_at - r.created_at).total_seconds() * 1000 for r in rows]
    runs = [(r.finished_at - r.started_at).total_seconds() * 1000 for r in rows]
    return {
        "median": statistics.median(times),
        "p95": statistics.quantiles(times, n=20)[18],
        "max": max(times),
        "wait": statistics.median(waits),
        "run": statistics.median(runs),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--gap", type=float, default=0.2, help="max random pause, seconds")
    args = parser.parse_args()
    tails = [
        (f"exp/{path.stem}/log/run.1.log", path.read_text()) for path in sorted(CASES.glob("*.log"))
    ]
    random.Random(5).shuffle(tails)

    setup_test_environment()
    if connection.vendor == "postgresql":  # never the name a concurrent pytest run uses
        connection.settings_dict["TEST"]["NAME"] = f"test_bench_e2e_{os.getpid()}"
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    redis = RedisServer(free_port())
    results = {}
    try:
        catalog_seed(language="en")
        user = get_user_model().objects.create_user("bench", password="bench-pw-1234")
        connection.close()  # the worker opens its own; keep SQLite's WAL free of a stale reader
        if shutil.which("redis-server"):
            redis.start()
            results["redis"] = measure("redis", redis.url, {}, user, tails, args)
        else:
            print("redis-server is not installed: Redis skipped")
        options = filesystem_options()
        results["filesystem"] = measure("filesystem", "filesystem://", options, user, tails, args)
    finally:
        redis.stop()
        connection.creation.destroy_test_db(old_name, verbosity=0)
        shutil.rmtree(VAR_DIR, ignore_errors=True)

    print(
        f"end to end, submit → suggestions stored: {connection.vendor}, one worker "
        f"(prefork, concurrency 1), N={args.n} real tails, pauses 0–{args.gap * 1000:.0f} ms"
    )
    print(
        f"{'broker':12s} {'median':>8s} {'p95':>8s} {'max':>8s} {'queued→claimed':>15s} "
        f"{'claimed→stored':>15s} {'target':>8s}"
    )
    for name, r in results.items():
        verdict = "ok" if r["median"] <= TARGETS_MS[name] else "MISSED"
        print(
            f"{name:12s} {r['median']:6.1f}ms {r['p95']:6.1f}ms {r['max']:6.0f}ms "
            f"{r['wait']:13.1f}ms {r['run']:13.1f}ms  ≤{TARGETS_MS[name]}ms {verdict}"
        )
    if len(results) == 2:
        ratio = results["filesystem"]["median"] / results["redis"]["median"]
        print(f"median ratio filesystem / redis: {ratio:.1f}×")


if __name__ == "__main__":
    main()
