"""How do the matrix, the weekly report page and the report build scale? Ratios in one run.

Creates a throwaway database (a SQLite file under a temporary VAR_DIR, or `bench_reports` on
the PostgreSQL server of DATABASE_URL), seeds the catalog, then measures twice:

  1. small: --small-incidents demo incidents (default 1,000) and ten times as many
     recurrences + analyses;
  2. large: more demo data added on top, up to --incidents (default 100,000) incidents and
     --rows (default 1,000,000) recurrences + analyses, over 52 weeks.

At each size it prints the median server time of the matrix page and of the weekly report page
(the whole Django stack through the test client, signed in as a lead) with their query counts,
and the median time to build last week's report; then the large/small ratios.

--with-indexes first adds two covering indexes to the incidents tables of the throwaway
database (see SUGGESTED_INDEXES), to show what they would change.

    .venv/bin/python bench/bench_reports.py [--incidents 100000] [--rows 1000000] [--repeat 7]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/incident_kb .venv/bin/python \
        bench/bench_reports.py
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("VAR_DIR", tempfile.mkdtemp(prefix="bench-reports-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

WEEKS = 52
# Not in the incidents models (yet): what the matrix's window aggregation would read instead of
# the tables. Measured with --with-indexes.
SUGGESTED_INDEXES = (
    "CREATE INDEX bench_recurrence_day ON incidents_recurrence (occurred_on, incident_id)",
    "CREATE INDEX bench_analysis_explained ON incidents_analysis "
    "(status, created_at, confident, top_incident_id)",
)
ANALYSES_SHARE = 0.55  # of the rows; "this fixed it" feedback adds recurrences on top


@dataclass(frozen=True)
class Sample:
    milliseconds: float
    queries: int


@dataclass(frozen=True)
class Size:
    incidents: int
    recurrences: int
    analyses: int
    matrix: Sample
    report_page: Sample
    build: Sample


def measure(action: Callable[[], object], repeat: int) -> Sample:
    action()  # warm caches (templates, compiled regexes, the database's own)
    times, queries = [], 0
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            action()
            times.append((time.perf_counter() - started) * 1000)
        queries = len(captured)
    return Sample(statistics.median(times), queries)


def grow(incidents: int, rows: int, seed: int) -> float:
    from reports.demo import demo_generate

    analyses = round(rows * ANALYSES_SHARE)
    # About one confirmed analysis in nine also records a recurrence.
    recurrences = max(0, rows - analyses - round(analyses * 0.11))
    started = time.perf_counter()
    demo_generate(
        incidents=incidents,
        weeks=WEEKS,
        seed=seed,
        recurrences=recurrences,
        analyses=analyses,
        suggestions=False,
        log=lambda message: print(f"    {message}", flush=True),
    )
    # Fresh planner statistics, as autovacuum (PostgreSQL) or a maintained database would have.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    return time.perf_counter() - started


def size_now(client: Client, repeat: int) -> Size:
    from common.weeks import week_last_completed
    from incidents.models import Analysis, Incident, Recurrence
    from reports.services import report_week_build

    week = week_last_completed()
    report = report_week_build(week_start=week)
    return Size(
        incidents=Incident.objects.count(),
        recurrences=Recurrence.objects.count(),
        analyses=Analysis.objects.count(),
        matrix=measure(lambda: page(client, "/matrix/"), repeat),
        report_page=measure(lambda: page(client, report.get_absolute_url()), repeat),
        build=measure(lambda: report_week_build(week_start=week), max(3, repeat // 2)),
    )


def page(client: Client, url: str) -> None:
    response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=1_000_000, help="recurrences + analyses")
    parser.add_argument("--small-incidents", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--with-indexes", action="store_true", help="see SUGGESTED_INDEXES")
    args = parser.parse_args()

    from django.core.management import call_command

    from accounts.roles import LEAD, user_set_role

    settings.DATABASES["default"].setdefault("TEST", {})
    if connection.vendor != "sqlite":
        settings.DATABASES["default"]["TEST"]["NAME"] = "bench_reports"
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    extra = " + suggested indexes" if args.with_indexes else ""
    print(f"database: {connection.vendor} {name}{extra}", flush=True)
    try:
        call_command("seed_catalog", stdout=io.StringIO())
        if args.with_indexes:
            with connection.cursor() as cursor:
                for statement in SUGGESTED_INDEXES:
                    cursor.execute(statement)
        lead = get_user_model().objects.create_user("bench-lead")
        user_set_role(user=lead, role=LEAD)
        client = Client()
        client.force_login(lead)

        small_rows = args.small_incidents * 10
        print(f"small: {args.small_incidents:,} incidents, ~{small_rows:,} rows", flush=True)
        seconds = grow(args.small_incidents, small_rows, args.seed)
        print(f"  generated in {seconds:.1f} s", flush=True)
        small = size_now(client, args.repeat)

        more = max(0, args.incidents - small.incidents)
        rows = max(0, args.rows - small.recurrences - small.analyses)
        print(f"large: +{more:,} incidents, +~{rows:,} rows", flush=True)
        seconds = grow(more, rows, args.seed + 1)
        print(f"  generated in {seconds:.1f} s", flush=True)
        large = size_now(client, args.repeat)
    finally:
        connection.creation.destroy_test_db(name, verbosity=0)

    def label(size: Size) -> str:
        return f"{size.incidents:,} inc / {size.recurrences + size.analyses:,} rows"

    print()
    print(f"{'':24}{label(small):>30}{label(large):>34}{'ratio':>8}")
    for title, attribute in (
        ("matrix page", "matrix"),
        ("weekly report page", "report_page"),
        ("weekly report build", "build"),
    ):
        a, b = getattr(small, attribute), getattr(large, attribute)
        print(
            f"{title:24}{f'{a.milliseconds:8.1f} ms ({a.queries} queries)':>30}"
            f"{f'{b.milliseconds:8.1f} ms ({b.queries} queries)':>34}"
            f"{b.milliseconds / a.milliseconds:7.1f}x"
        )
    print(
        f"\nlarge: {large.recurrences:,} recurrences + {large.analyses:,} analyses, "
        f"{WEEKS} weeks; medians of {args.repeat} requests after a warm-up"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
