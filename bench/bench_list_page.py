"""Server time and query count of the incident list page at 100k incidents.

Builds a throwaway test database (SQLite under VAR_DIR, or PostgreSQL when DATABASE_URL
points there), fills it with N incidents, and times typical requests in-process through
Django's test client. The baseline is the same requests at 1,000 incidents in the same run.

    .venv/bin/python bench/bench_list_page.py [--incidents 100000]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from incidents.models import Incident, Tag  # noqa: E402
from incidents.search_words import search_words  # noqa: E402

REQUESTS = {
    "first page": {},
    "stage filter": {"stage": "serve"},
    "search 'out of memory'": {"q": "out of memory"},
    "search '显存'": {"q": "显存"},
    "tag + severity": {"tag": "nccl", "severity": "high"},
    "sort by recurrences": {"sort": "-recurrences"},
    "page 1000": {"page": "1000"},
}
WORDS = [
    "nccl",
    "timeout",
    "cuda",
    "kernel",
    "shard",
    "loader",
    "tokenizer",
    "checkpoint",
    "beam",
    "lattice",
    "mfcc",
    "align",
]
STAGES, DISCIPLINES = (
    ["build", "data", "train", "serve"],
    [
        "version-lock",
        "validate-first",
        "tiny-sample",
        "reconcile",
    ],
)
SEVERITIES = ["low", "medium", "high", "critical"]


def fill(count: int, start: int, rng: random.Random) -> None:
    tags = [Tag.objects.get_or_create(name=name)[0] for name in ("nccl", "gpu", "kaldi", "显存")]
    batch = []
    for n in range(start, start + count):
        words = " ".join(rng.choice(WORDS) for _ in range(6))
        memory = "CUDA out of memory 显存不足" if n % 97 == 0 else ""
        document = f"bench-{n}\nbench incident {n}: {words}\nruntimeerror: {words} {memory}".lower()
        batch.append(
            Incident(
                slug=f"bench-{n}",
                title=f"Bench incident {n}: {words}",
                symptom=f"RuntimeError: {words} {memory} at step {n}",
                root_cause=f"Root cause {n}.",
                remedy=f"rerun with --seed {n}",
                discipline=DISCIPLINES[n % 4],
                stage=STAGES[(n // 4) % 4],
                severity=SEVERITIES[n % 4],
                language="en",
                recurrence_count=n % 13,
                search_document=document,
                search_words=search_words(document),
            )
        )
        if len(batch) == 5000:
            _flush(batch, tags)
            batch = []
    _flush(batch, tags)


def _flush(batch: list[Incident], tags: list[Tag]) -> None:
    created = Incident.objects.bulk_create(batch)
    through = Incident.tags.through
    through.objects.bulk_create(
        through(incident_id=incident.pk, tag_id=tags[incident.pk % len(tags)].pk)
        for incident in created
    )


def measure(client: Client, repeat: int) -> dict[str, tuple[float, int]]:
    results = {}
    for name, params in REQUESTS.items():
        client.get("/incidents/", params)  # warm
        times = []
        for _ in range(repeat):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.get("/incidents/", params)
                times.append(time.perf_counter() - started)
            assert response.status_code == 200, (name, response.status_code)
        results[name] = (statistics.median(times) * 1000, len(queries.captured_queries))
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        user = get_user_model().objects.create_user("bench", password="bench-pw")
        client = Client()
        client.force_login(user)
        rng = random.Random(7)
        fill(1000, 0, rng)
        baseline = measure(client, args.repeat)
        fill(args.incidents - 1000, 1000, rng)
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
        full = measure(client, args.repeat)
        print(f"incident list page, {connection.vendor}, median of {args.repeat} (ms, queries)")
        print(
            f"{'request':28s} {'1k':>10s} {args.incidents // 1000:>8d}k {'ratio':>7s} {'queries':>8s}"
        )
        for name in REQUESTS:
            (base_ms, _), (ms, queries) = baseline[name], full[name]
            print(f"{name:28s} {base_ms:10.1f} {ms:9.1f} {ms / base_ms:7.2f} {queries:8d}")
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
