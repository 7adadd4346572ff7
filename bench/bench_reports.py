"""How do the matrix, the weekly report page and the report build scale? Ratios in one run.

Creates a throwaway database (a SQLite file under a temporary VAR_DIR, or --database-name on
the PostgreSQL server of DATABASE_URL), seeds the catalog, then measures twice:

  1. small: --small-incidents demo incidents (default 1,000) and ten times as many
     recurrences + analyses;
  2. large: more demo data added on top, up to --incidents (default 100,000) incidents and
     --rows (default 1,000,000) recurrences + analyses, over 52 weeks.

At each size it prints the median server time of the matrix page (read from the rollups), of
the matrix filtered by a tag (the narrow path: the incident-day rollup of the tagged incidents),
of the matrix API and of the weekly report page (the whole Django stack through the test
client, signed in as a lead) with their query counts, the median time to build last week's
report, and — the "before" — the ranking query the matrix ran before rollups, aggregating
every recurrence and analysis of the window; then the large/small ratios. The demo data is
bulk-inserted, so the rollups are rebuilt after each fill (`rebuild_rollups`): that time is
printed too.

--keep measures each size in its own database (`<--database-name>_<incidents>`, a SQLite file
under VAR_DIR), generated from scratch unless it holds data already, and leaves it for the next
run with --keep: a million incidents take long to generate. A kept database is migrated to the
current schema first.

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
BUILD_QUERIES_SHOWN = 6
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
    matrix_tag: Sample
    matrix_api: Sample
    matrix_before: Sample
    report_page: Sample
    build: Sample
    build_queries: tuple[tuple[float, str], ...]  # the slowest few, in ms, and their start


# What the matrix ran on every request before rollups (its ranking and heat-map query).
BEFORE_SQL = """
WITH hits (incident_id, n) AS ({recurrences} UNION ALL {analyses}),
totals AS (SELECT incident_id, SUM(n) AS n FROM hits GROUP BY incident_id),
scored AS (
    SELECT i.id, i.stage, i.discipline, i.recurrence_count, COALESCE(t.n, 0) AS happened
    FROM ({incidents}) i LEFT JOIN totals t ON t.incident_id = i.id
)
{top}
UNION ALL
SELECT NULL, stage, discipline, 0, SUM(happened), COUNT(*) FROM scored GROUP BY stage, discipline
"""
BEFORE_TOP_SQL = """
SELECT * FROM (
    SELECT id, stage, discipline, recurrence_count, happened, 1 FROM scored WHERE stage = %s
    ORDER BY happened DESC, recurrence_count DESC, id LIMIT %s
) AS top_{n}
"""


def matrix_before() -> None:
    """The old live aggregation over every recurrence and analysis of the 12-week window."""
    from datetime import timedelta

    from django.db.models import Count, Exists, OuterRef
    from django.utils import timezone

    from common.choices import Stage
    from common.weeks import day_start
    from incidents.models import Analysis, Feedback, Incident, Recurrence

    end = timezone.localdate(timezone=timezone.get_default_timezone())
    start = end - timedelta(weeks=12) + timedelta(days=1)
    recurrences = (
        Recurrence.objects.filter(occurred_on__gte=start, occurred_on__lte=end)
        .values("incident_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    answered = Feedback.objects.filter(analysis=OuterRef("pk"), incident=OuterRef("top_incident"))
    analyses = (
        Analysis.objects.filter(
            status=Analysis.Status.DONE,
            created_at__gte=day_start(start),
            created_at__lt=day_start(end + timedelta(days=1)),
            confident=True,
            top_incident__isnull=False,
        )
        .filter(~Exists(answered))
        .values("top_incident_id")
        .annotate(n=Count("pk"))
        .order_by()
    )
    incidents = Incident.objects.order_by().values("id", "stage", "discipline", "recurrence_count")
    parts = [query.query.sql_with_params() for query in (recurrences, analyses, incidents)]
    top = "UNION ALL".join(BEFORE_TOP_SQL.format(n=n) for n in range(len(Stage.values)))
    sql = BEFORE_SQL.format(
        recurrences=parts[0][0], analyses=parts[1][0], incidents=parts[2][0], top=top
    )
    params = [*parts[0][1], *parts[1][1], *parts[2][1]]
    params += [value for stage in Stage.values for value in (stage, 8)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        cursor.fetchall()


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
    print(f"    rollups rebuilt by demo_generate; again on their own: {rebuild():.1f} s")
    # Fresh planner statistics, as autovacuum (PostgreSQL) or a maintained database would have.
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    return time.perf_counter() - started


def rebuild() -> float:
    from django.core.management import call_command

    started = time.perf_counter()
    call_command("rebuild_rollups", stdout=io.StringIO())
    return time.perf_counter() - started


def size_now(client: Client, repeat: int) -> Size:
    from common.weeks import week_last_completed
    from incidents.models import Analysis, Incident, Recurrence
    from reports.services import report_week_build

    week = week_last_completed()
    report = report_week_build(week_start=week)
    with CaptureQueriesContext(connection) as captured:
        report_week_build(week_start=week)
    slowest = sorted(
        ((float(query["time"]) * 1000, _gist(query["sql"])) for query in captured),
        reverse=True,
    )[:BUILD_QUERIES_SHOWN]
    size = Size(
        incidents=Incident.objects.count(),
        recurrences=Recurrence.objects.count(),
        analyses=Analysis.objects.count(),
        matrix=measure(lambda: page(client, "/matrix/"), repeat),
        matrix_tag=measure(lambda: page(client, "/matrix/?tag=kaldi"), repeat),
        matrix_api=measure(lambda: page(client, "/api/v1/matrix/"), repeat),
        matrix_before=measure(matrix_before, max(3, repeat // 2)),
        report_page=measure(lambda: page(client, report.get_absolute_url()), repeat),
        build=measure(lambda: report_week_build(week_start=week), max(3, repeat // 2)),
        build_queries=tuple(slowest),
    )
    print(f"  measured: {size}", flush=True)
    return size


def _gist(sql: str) -> str:
    """Where a query reads from and what it asks: its text from FROM on, cut short."""
    at = sql.find(" FROM ")
    return sql[at + 1 if at >= 0 else 0 :][:140]


def page(client: Client, url: str) -> None:
    response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=1_000_000, help="recurrences + analyses")
    parser.add_argument("--small-incidents", type=int, default=1_000)
    parser.add_argument("--small-rows", type=int, help="default: ten per small incident")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--with-indexes", action="store_true", help="see SUGGESTED_INDEXES")
    parser.add_argument("--database-name", default="bench_reports", help="on PostgreSQL")
    parser.add_argument("--keep", action="store_true", help="keep the databases, reuse them")
    args = parser.parse_args()
    small_rows = args.small_rows or args.small_incidents * 10
    if args.keep:
        small = kept_size(args, args.small_incidents, small_rows, args.seed)
        large = kept_size(args, args.incidents, args.rows, args.seed + 1)
    else:
        small, large = fresh_sizes(args, small_rows)
    print_sizes(small, large, args.repeat)
    return 0


def start(args) -> Client:
    """Seed the catalog (and the suggested indexes) in an empty database; a signed-in lead."""
    from django.core.management import call_command

    from accounts.roles import LEAD, user_set_role

    call_command("seed_catalog", stdout=io.StringIO())
    if args.with_indexes:
        with connection.cursor() as cursor:
            for statement in SUGGESTED_INDEXES:
                cursor.execute(statement)
    lead = get_user_model().objects.create_user("bench-lead")
    user_set_role(user=lead, role=LEAD)
    return lead_client()


def lead_client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.get(username="bench-lead"))
    return client


def kept_size(args, incidents: int, rows: int, seed: int) -> Size:
    """One size in its own kept database: generated unless it holds data, then measured."""
    from incidents.models import Recurrence

    name = f"{args.database_name}_{incidents}"
    if connection.vendor == "sqlite":
        name = str(Path(os.environ["VAR_DIR"]) / f"{name}.sqlite3")
    original = connection.settings_dict["NAME"]
    settings.DATABASES["default"]["TEST"]["NAME"] = name
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False, keepdb=True)
    print(f"database: {connection.vendor} {name} (kept)", flush=True)
    try:
        if Recurrence.objects.exists():
            client = lead_client()
        else:
            client = start(args)
            print(f"{incidents:,} incidents, ~{rows:,} rows", flush=True)
            print(f"  generated in {grow(incidents, rows, seed):.1f} s", flush=True)
        return size_now(client, args.repeat)
    finally:
        connection.close()
        connection.settings_dict["NAME"] = original


def fresh_sizes(args, small_rows: int) -> tuple[Size, Size]:
    """Both sizes in one throwaway database: the small one, then grown to the large one."""

    settings.DATABASES["default"].setdefault("TEST", {})
    if connection.vendor != "sqlite":
        settings.DATABASES["default"]["TEST"]["NAME"] = args.database_name
    name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    extra = " + suggested indexes" if args.with_indexes else ""
    print(f"database: {connection.vendor} {name}{extra}", flush=True)
    try:
        client = start(args)
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
    return small, large


def print_sizes(small: Size, large: Size, repeat: int) -> None:
    def label(size: Size) -> str:
        return f"{size.incidents:,} inc / {size.recurrences + size.analyses:,} rows"

    print()
    print(f"{'':24}{label(small):>30}{label(large):>34}{'ratio':>8}")
    for title, attribute in (
        ("matrix page", "matrix"),
        ("matrix, tag filter", "matrix_tag"),
        ("matrix API", "matrix_api"),
        ("matrix before rollups*", "matrix_before"),
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
        f"{WEEKS} weeks; medians of {repeat} requests after a warm-up"
    )
    print("* the ranking query alone, as every matrix request ran it before the rollups")
    for title, size in (("small", small), ("large", large)):
        print(
            f"{title}: matrix page {size.matrix.milliseconds:.1f} ms with rollups vs "
            f"{size.matrix_before.milliseconds:.1f} ms for the old query alone "
            f"({size.matrix_before.milliseconds / size.matrix.milliseconds:.1f}x)"
        )
    for title, size in (("small", small), ("large", large)):
        print(f"{title}: the build's slowest queries")
        for milliseconds, sql in size.build_queries:
            print(f"  {milliseconds:7.1f} ms  {sql}")


if __name__ == "__main__":
    raise SystemExit(main())
