"""Server time of the pages and API lists at two data sizes: does a page cost the same at 100k?

Builds a throwaway database (SQLite under VAR_DIR, or PostgreSQL when DATABASE_URL points
there: the database is named after it with `_bench`), fills it with a small catalog, times
each request in-process through Django's test client (median of --repeat after one warm-up),
then grows the catalog to --incidents and times them again. Printed per request: both
medians, each as a multiple of the sign-in page's time in the same run (a page that does no
query to speak of), the ratio large/small, and the number of queries.

    .venv/bin/python bench/bench_pages.py [--small 1000] [--incidents 100000] [--recurrences 6]

--keep fills one database per size instead (`..._bench_<size>`, a SQLite file under VAR_DIR)
and leaves them, so that the next run with --keep times them again without filling: a million
incidents take long to generate. The fill is seeded, so both hold the same first incidents;
a kept database is migrated to the current schema before it is timed.

Rows: each incident has its tag, about --recurrences recurrences, and one incident has a
tenth of all incidents' count in recurrences (the page with the most). The rollups that the
matrix reads are rebuilt after a fill.
"""

from __future__ import annotations

import argparse
import datetime
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
from django.test.utils import setup_test_environment  # noqa: E402

from common.keyset import cursor_encode  # noqa: E402
from incidents.models import Incident, IncidentDay, Recurrence, Tag  # noqa: E402
from incidents.search_words import search_words  # noqa: E402
from incidents.services.rollups_build import rollups_rebuild  # noqa: E402

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
CHINESE = ["数据加载卡住", "梯度爆炸", "检查点损坏", "通信超时", "分词器版本不一致", "解码太慢"]
STAGES = ["build", "data", "train", "serve"]
DISCIPLINES = ["version-lock", "validate-first", "tiny-sample", "reconcile"]
SEVERITIES = ["low", "medium", "high", "critical"]
BATCH = 5000
HOT = "bench-hot"


def fill(count: int, start: int, recurrences: int, rng: random.Random) -> None:
    tags = [Tag.objects.get_or_create(name=name)[0] for name in ("nccl", "gpu", "kaldi", "显存")]
    batch = []
    for n in range(start, start + count):
        batch.append(_incident(n, rng))
        if len(batch) == BATCH:
            _flush(batch, tags, recurrences, rng)
            batch = []
    _flush(batch, tags, recurrences, rng)


def _incident(n: int, rng: random.Random) -> Incident:
    words = " ".join(rng.choice(WORDS) for _ in range(6))
    memory = "CUDA out of memory 显存不足" if n % 97 == 0 else ""
    title = f"Bench incident {n}: {words}"
    symptom = f"RuntimeError: {words} {memory} at step {n}; {rng.choice(CHINESE)}"
    document = f"bench-{n}\n{title}\n{symptom}\nroot cause {n}.\nrerun with --seed {n}".lower()
    return Incident(
        slug=HOT if n == 0 else f"bench-{n}",
        title=title,
        symptom=symptom,
        root_cause=f"Root cause {n}.",
        remedy=f"rerun with --seed {n}",
        discipline=DISCIPLINES[n % 4],
        stage=STAGES[(n // 4) % 4],
        severity=SEVERITIES[n % 4],
        language="en",
        occurred_on=datetime.date(2026, 1, 1) + datetime.timedelta(days=n % 300),
        search_document=document,
        search_words=search_words(document),
    )


def _flush(batch: list[Incident], tags: list[Tag], recurrences: int, rng: random.Random) -> None:
    created = Incident.objects.bulk_create(batch)
    through = Incident.tags.through
    through.objects.bulk_create(
        through(incident_id=incident.pk, tag_id=tags[incident.pk % len(tags)].pk)
        for incident in created
    )
    for n, tag in enumerate(tags):  # the names each incident stores, as the services do
        tagged = [incident.pk for incident in created if incident.pk % len(tags) == n]
        Incident.objects.filter(pk__in=tagged).update(tag_list=tag.name)
    rows = [
        Recurrence(incident_id=incident.pk, occurred_on=incident.occurred_on)
        for incident in created
        for _ in range(rng.randint(0, 2 * recurrences))
    ]
    Recurrence.objects.bulk_create(rows, batch_size=BATCH)


def grow_hot(total: int) -> None:
    """Give the hot incident a tenth of the catalog's size in recurrences."""
    hot = Incident.objects.get(slug=HOT)
    have = hot.recurrences.count()
    day = datetime.date(2026, 1, 1)
    Recurrence.objects.bulk_create(
        (
            Recurrence(incident=hot, occurred_on=day + datetime.timedelta(days=n % 300))
            for n in range(have, total // 10)
        ),
        batch_size=BATCH,
    )
    Incident.objects.filter(pk=hot.pk).update(recurrence_count=hot.recurrences.count())


def deep_cursor(fraction: float) -> str:
    """The cursor of the API list's default order at `fraction` of the way through."""
    ordered = Incident.objects.order_by("-updated_at", "-id")
    row = ordered.values("updated_at", "id")[int(ordered.count() * fraction)]
    return cursor_encode(["-updated_at", "-id"], [row["updated_at"], row["id"]])


def last_recurrences_cursor(incident: Incident, page_size: int = 20) -> str:
    """The cursor of an incident's last page of recurrences (newest first)."""
    ordered = incident.recurrences.order_by("-occurred_on", "-id")
    row = ordered.values("occurred_on", "id")[max(0, ordered.count() - page_size - 1)]
    return cursor_encode(["-occurred_on", "-id"], [row["occurred_on"], row["id"]])


def requests(small: int) -> dict[str, tuple[str, dict]]:
    hot = Incident.objects.get(slug=HOT)
    typical = Incident.objects.get(slug=f"bench-{small // 2}")
    deep = deep_cursor(0.9)
    return {
        "sign-in page (baseline)": ("/login/", {}),
        "list": ("/incidents/", {}),
        "list q=显存": ("/incidents/", {"q": "显存"}),
        "list q=显": ("/incidents/", {"q": "显"}),
        "list q=out of memory": ("/incidents/", {"q": "out of memory"}),
        "list q=checkpoint 3": ("/incidents/", {"q": "checkpoint 3"}),
        "list stage=serve": ("/incidents/", {"stage": "serve"}),
        "list tag + severity": ("/incidents/", {"tag": "nccl", "severity": "high"}),
        "list tag + stage": ("/incidents/", {"tag": "nccl", "stage": "serve"}),
        "API list tag + severity": ("/api/v1/incidents/", {"tag": "nccl", "severity": "high"}),
        "list by recurrences": ("/incidents/", {"sort": "-recurrences"}),
        "list, cursor at 90%": ("/incidents/", {"cursor": deep}),
        "incident, typical": (typical.get_absolute_url(), {}),
        "incident, most recurrences": (hot.get_absolute_url(), {}),
        "  its last recurrences page": (
            hot.get_absolute_url(),
            {"cursor": last_recurrences_cursor(hot)},
        ),
        "matrix": ("/matrix/", {}),
        "matrix tag=kaldi": ("/matrix/", {"tag": "kaldi"}),
        "matrix API": ("/api/v1/matrix/", {}),
        "gaps": ("/gaps/", {}),
        "API list": ("/api/v1/incidents/", {}),
        "API list, cursor at 90%": ("/api/v1/incidents/", {"cursor": deep}),
        "API list, page 200 rows": ("/api/v1/incidents/", {"page_size": "200"}),
        "API list q=显存": ("/api/v1/incidents/", {"q": "显存"}),
    }


class QueryTimer:
    """Counts the queries of a request and times the slowest (a request resets
    connection.queries, so CaptureQueriesContext sees none of them)."""

    def __init__(self):
        self.times: list[tuple[float, str]] = []

    def __call__(self, execute, sql, params, many, context):
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            self.times.append((time.perf_counter() - started, sql))


def measure(small: int, repeat: int) -> dict[str, tuple[float, int, float]]:
    account = get_user_model().objects.get_or_create(username="bench")[0]
    client, anonymous = Client(), Client()
    client.force_login(account)
    results = {}
    for name, (path, params) in requests(small).items():
        user = anonymous if "baseline" in name else client
        user.get(path, params)  # warm-up
        queries = QueryTimer()
        with connection.execute_wrapper(queries):
            response = user.get(path, params)
        assert response.status_code == 200, (name, response.status_code, response.content[:300])
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            user.get(path, params)
            times.append(time.perf_counter() - started)
        slowest, sql = max(queries.times, default=(0.0, ""))
        if os.environ.get("BENCH_SHOW_SQL"):
            print(f"{name}: {slowest * 1000:.1f} ms {sql[:2000]}", file=sys.stderr)
        results[name] = (statistics.median(times) * 1000, len(queries.times), slowest * 1000)
    return results


def rows_now() -> int:
    return (
        Incident.objects.count()
        + Recurrence.objects.count()
        + Incident.tags.through.objects.count()
    )


def report(small: dict, large: dict, small_size: int, size: int, repeat: int, rows: int) -> None:
    print(
        f"pages, {connection.vendor}, {size:,} incidents ({rows:,} rows), median of {repeat} "
        f"(ms; x = multiple of the sign-in page)"
    )
    head = (
        f"{'request':30s} {f'{small_size:,} ms':>8s} {'x':>6s} {f'{size:,} ms':>9s} {'x':>6s} "
        f"{'ratio':>6s} {'queries':>8s} {'slowest q':>9s}"
    )
    print(head)
    base_small, base_large = (
        small["sign-in page (baseline)"][0],
        large["sign-in page (baseline)"][0],
    )
    for name in small:
        (small_ms, small_queries, _), (large_ms, queries, slowest) = small[name], large[name]
        constant = "" if queries == small_queries else f" (small: {small_queries})"
        print(
            f"{name:30s} {small_ms:8.1f} {small_ms / base_small:6.1f} {large_ms:9.1f} "
            f"{large_ms / base_large:6.1f} {large_ms / small_ms:6.2f} {queries:8d} "
            f"{slowest:9.1f}{constant}"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=1000, help="incidents of the first size")
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--recurrences", type=int, default=6, help="per incident, on average")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the databases, reuse them")
    args = parser.parse_args()
    setup_test_environment()
    rng = random.Random(7)
    if args.keep:
        small, _ = timed(args.small, args, random.Random(7), kept=True)
        large, rows = timed(args.incidents, args, random.Random(7), kept=True)
    else:
        old_name = open_database(f"{connection.settings_dict['NAME']}_bench", keep=False)
        try:
            small, _ = timed(args.small, args, rng)
            large, rows = timed(args.incidents, args, rng)
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)
    report(small, large, args.small, args.incidents, args.repeat, rows)


def open_database(name: str, *, keep: bool) -> str:
    """Make `name` (a file under VAR_DIR on SQLite) the test database, migrated; returns the
    name to go back to."""
    database = connection.settings_dict
    if connection.vendor == "sqlite":
        name = str(Path(os.environ["VAR_DIR"]) / f"{Path(name).name}.sqlite3")
    database["TEST"]["NAME"] = name
    old_name = database["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False, keepdb=keep)
    return old_name


def timed(size: int, args, rng: random.Random, *, kept: bool = False) -> tuple[dict, int]:
    """Grow the database to `size` incidents (unless it holds them) and time the requests;
    `kept`: in that size's own database, left for the next run. Also returns its rows."""
    old_name = None
    if kept:
        old_name = open_database(f"{connection.settings_dict['NAME']}_bench_{size}", keep=True)
    try:
        have = Incident.objects.count()
        if have > size:
            raise SystemExit(f"the database holds {have:,} incidents, more than {size:,}")
        if have != size:  # an empty database, or one whose fill was interrupted
            started = time.perf_counter()
            fill(size - have, have, args.recurrences, rng)
            grow_hot(size)
            print(f"filled {size:,} in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        if have != size or not IncidentDay.objects.exists():
            started = time.perf_counter()
            rollups_rebuild()  # rows were bulk-inserted past the services that keep them
            _analyze()
            print(f"rollups in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        results = measure(args.small, args.repeat)
        for name, (milliseconds, queries, _slowest) in results.items():
            print(f"  {size:,}: {name:30s} {milliseconds:8.1f} ms {queries:3d} q", file=sys.stderr)
        return results, rows_now()
    finally:
        if old_name is not None:
            connection.close()
            connection.settings_dict["NAME"] = old_name


def _analyze() -> None:
    """PostgreSQL's autovacuum would have; a SQLite database is left as the product leaves it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


if __name__ == "__main__":
    main()
