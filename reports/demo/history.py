"""A realistic history for demos, screenshots and benchmarks: weeks of incidents across stages
and disciplines, recurrences, analyses explained and not, knowledge gaps, feedback, floods.

Deterministic for a given seed and `today`, and idempotent: a run first removes what an
earlier run added, so running it twice leaves the same book as running it once. Rows are
generated and inserted in batches (bulk_create), never all held in memory, so 100k incidents
and a million recurrences and analyses take minutes, not hours.

Demo rows stay apart from real ones: demo incidents have slugs "demo-…", and every
recurrence, analysis and feedback is by a demo user ("demo-…"). Besides its own incidents the
history touches only the shipped catalog incidents (they recur and get analysed, their text
never changes); an incident a person filed is left alone.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date

from django.contrib.auth import get_user_model
from django.db import transaction

from incidents.models import (
    Analysis,
    Incident,
    KnowledgeGap,
    KnowledgeState,
    Recurrence,
)
from incidents.services.rollups_build import rollups_rebuild
from reports.demo.generator import DemoResult, History
from reports.demo.material import GAP_LINES
from reports.demo.rows import (
    DEMO_PREFIX,
    recount_recurrences,
)

BATCH_SIZE = 5000


def demo_clear() -> None:
    """Remove what earlier runs added; catalog incidents keep their text and get their
    recurrence counters recomputed."""
    users = get_user_model().objects.filter(username__startswith=DEMO_PREFIX)
    with transaction.atomic():
        Analysis.objects.filter(submitted_by__in=users).delete()
        Recurrence.objects.filter(reported_by__in=users).delete()
        Incident.objects.filter(slug__startswith=DEMO_PREFIX).delete()
        KnowledgeGap.objects.filter(
            key_template__in=[template for _, _, template in GAP_LINES], analyses__isnull=True
        ).delete()
        recount_recurrences(Incident.objects.all())
        KnowledgeState.replace("token")
        rollups_rebuild()


def demo_generate(
    *,
    incidents: int = 300,
    weeks: int = 16,
    seed: int = 7,
    recurrences: int | None = None,
    analyses: int | None = None,
    today: date | None = None,
    suggestions: bool = True,
    batch_size: int = BATCH_SIZE,
    log: Callable[[str], None] | None = None,
) -> DemoResult:
    """Replace the demo history with `incidents` demo incidents and their history over the
    last `weeks` weeks (and the current one so far). Defaults: 3 recurrences and 7 analyses
    per incident."""
    started = time.perf_counter()
    say = log or (lambda message: None)
    demo_clear()
    history = History(seed=seed, weeks=weeks, today=today, batch_size=batch_size)
    result = DemoResult(weeks=history.mondays())
    known = history.shipped_incidents()
    say(f"{len(known)} shipped incidents join the history")
    result.incidents = history.add_incidents(incidents, known)
    say(f"{result.incidents} incidents")
    history.rank_popularity(known)
    result.recurrences = history.add_recurrences(
        3 * incidents if recurrences is None else recurrences
    )
    say(f"{result.recurrences} recurrences")
    history.add_analyses(7 * incidents if analyses is None else analyses, suggestions, result)
    say(f"{result.analyses} analyses, {result.feedback} feedback")
    result.gaps = history.close_gaps()
    result.signatures = history.add_signatures()
    recount_recurrences(Incident.objects.all())
    KnowledgeState.replace("token")  # written in bulk, past the services: say so
    rollups_rebuild()
    result.seconds = time.perf_counter() - started
    return result
