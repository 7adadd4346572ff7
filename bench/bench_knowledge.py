"""What does a change to a large book cost a process? Ratios are measured in one run.

For each size (signatures over a tenth as many incidents, the shipped catalog included), in
a fresh process so that its memory is its own: the whole index is compiled (the baseline,
as at a process's first use), then one incident is filed with ten signatures and another
edited (`KnowledgeIndex.changed`, as each process does on its next request), and a realistic
2,000-line tail is analysed before and after, cold (the first analysis after the change)
and warm. Printed: seconds, the change's share of a whole build, and the process RSS.

    .venv/bin/python bench/bench_knowledge.py [--signatures 10000 50000]

With --database, the same through Django against the database of DATABASE_URL (a scratch
one: it is migrated, and the synthetic book is written into it): how long the next request
of a web process waits for its index after an incident with ten signatures is filed, with
the queries it runs, against the whole build.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_engine import knowledge, median_ms, realistic_tail, rss_mb
from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, build_index

TARGET_READY_S = 3.0
TARGET_RSS_MB = 250.0
TARGET_ANALYSIS_MS = 30.0


def one_size(count: int) -> dict[str, float]:
    incidents, signatures = knowledge(count)
    tail = realistic_tail()
    gc.collect()
    before = rss_mb()
    start = time.perf_counter()
    index = build_index(incidents, signatures)
    built = time.perf_counter() - start
    warm_before = median_ms(lambda: analyze(tail, index), 7)

    filed = IncidentSpec(
        "quux-shard-lost",
        "Quux lost its shard index",
        "train",
        "RuntimeError: the quux lost its shard index 42",
        "The quux shard map went stale after a resharding; rebuild it with quux-reshard.",
    )
    edited = replace(incidents[-1], symptom=incidents[-1].symptom + " (again)")
    new_signatures = [
        SignatureSpec(f"quux-{n}", filed.slug, rf"quux (?:lost|dropped) shard {n}\d* index")
        for n in range(10)
    ] + [s for s in signatures if s.slug == edited.slug]
    start = time.perf_counter()
    changed = index.changed([filed, edited], new_signatures)
    change = time.perf_counter() - start
    start = time.perf_counter()
    report = analyze(tail + "\nRuntimeError: the quux lost its shard index 7", changed)
    cold = (time.perf_counter() - start) * 1000
    warm = median_ms(lambda: analyze(tail, changed), 7)
    return {
        "signatures": len(signatures),
        "incidents": len(incidents),
        "build_s": built,
        "change_s": change,
        "first_after_ms": cold,
        "warm_before_ms": warm_before,
        "warm_after_ms": warm,
        "rss_mb": rss_mb(),
        "index_mb": rss_mb() - before,
        "found": report.suggestions[0].slug == filed.slug if report.suggestions else False,
    }


def through_django(count: int) -> int:
    """The next request after a filing, with the database: whole build vs the change."""
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from incidents import services
    from incidents.knowledge import knowledge_index, knowledge_state_forget
    from incidents.models import Incident, KnowledgeState, Signature

    call_command("migrate", verbosity=0)
    incidents, signatures = knowledge(count)
    Incident.objects.filter(slug__startswith="synthetic-").delete()
    made = Incident.objects.bulk_create(
        Incident(
            slug=i.slug,
            title=i.title,
            symptom=i.symptom,
            root_cause=i.description,
            remedy="rerun",
            stage=i.stage or "train",
            discipline="validate-first",
        )
        for i in incidents
        if i.slug.startswith("synthetic-")
    )
    ids = {incident.slug: incident.pk for incident in made}
    Signature.objects.bulk_create(
        Signature(incident_id=ids[s.slug], pattern=s.pattern, examples="x")
        for s in signatures
        if s.slug in ids
    )
    KnowledgeState.replace("token")  # written in bulk: every process reads the whole book
    knowledge_state_forget()
    start = time.perf_counter()
    whole = knowledge_index()
    built = time.perf_counter() - start
    filed = services.incident_create(
        data={
            "title": "Quux lost its shard index",
            "stage": "train",
            "symptom": "RuntimeError: the quux lost its shard index 42",
            "root_cause": "A stale shard map.",
            "remedy": "quux-reshard --all",
            "discipline": "reconcile",
            "severity": "medium",
        },
        reporter=None,
        language="en",
        slug="quux-shard-lost",
        tags=(),
    )
    for n in range(10):
        services.signature_create(
            incident=filed,
            pattern=rf"quux (?:lost|dropped) shard {n}\d* index",
            examples=f"quux lost shard {n}1 index",
        )
    knowledge_state_forget()  # as every other process sees it within a second
    with CaptureQueriesContext(connection) as queries:
        start = time.perf_counter()
        after = knowledge_index()
        change = time.perf_counter() - start
    found = analyze("RuntimeError: the quux lost its shard index 7", after).suggestions
    print(
        f"{len(signatures):,} signatures, {connection.vendor}: whole build {built:.2f} s; "
        f"the next request after a filing waits {change * 1000:.0f} ms "
        f"({len(queries)} queries, {change / built:.1%} of a whole build; "
        f"{after.changes} incidents compiled); the new incident is found first: "
        f"{bool(found) and found[0].slug == filed.slug}; before: {len(whole.incidents):,} incidents"
    )
    Incident.objects.filter(slug__startswith="synthetic-").delete()
    Incident.objects.filter(slug=filed.slug).delete()
    return 0 if change <= 0.1 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signatures", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--database", action="store_true")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # a child's size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_size(args.one)))
        return 0
    if args.database:
        return max(through_django(count) for count in args.signatures)
    rows = []
    for count in args.signatures:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(count)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append(json.loads(done.stdout))
    print(
        f"{'signatures':>10} {'incidents':>9} {'build s':>8} {'change s':>8} {'share':>6} "
        f"{'1st ms':>7} {'warm ms':>7} {'RSS MB':>7} {'found':>5}"
    )
    met = True
    for row in rows:
        print(
            f"{row['signatures']:>10,} {row['incidents']:>9,} {row['build_s']:>8.2f} "
            f"{row['change_s']:>8.3f} {row['change_s'] / row['build_s']:>6.1%} "
            f"{row['first_after_ms']:>7.1f} {row['warm_after_ms']:>7.1f} {row['rss_mb']:>7.0f} "
            f"{row['found']!s:>5}"
        )
        met &= (
            row["change_s"] <= TARGET_READY_S
            and row["rss_mb"] <= TARGET_RSS_MB
            and row["warm_after_ms"] <= TARGET_ANALYSIS_MS
            and row["found"]
        )
    print(
        f"targets: a change ready <= {TARGET_READY_S:.0f} s, RSS <= {TARGET_RSS_MB:.0f} MB, "
        f"a 2,000-line tail <= {TARGET_ANALYSIS_MS:.0f} ms warm: "
        + ("all met" if met else "SOME MISSED")
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
