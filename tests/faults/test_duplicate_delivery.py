"""Two workers on one queue, every task delivered twice: each analysis still runs once.

The two deliveries of one analysis sit next to each other in the queue, so the two workers
usually fetch them at the same moment and race for the claim; the loser must find nothing
to do. Side effects that count (signature hits, knowledge gaps) are counted once too.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

import pytest

from incidents.knowledge import signature_pk
from incidents.models import Analysis, KnowledgeGap, Signature
from incidents.services import analysis_request
from incidents.tasks import analysis_run as analysis_run_task
from tests.faults.harness import TAILS, all_finished, assert_done_exactly_once
from tests.services import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

ANALYSES = 30
RECEIVED = re.compile(r"Task incidents\.tasks\.analysis_run\[[^\]]+\] received")
RETURNED = re.compile(r"Task incidents\.tasks\.analysis_run\[[^\]]+\] succeeded in ")


def _count(pattern: re.Pattern[str], worker) -> int:
    return len(pattern.findall(worker.log.read_text()))


def test_two_workers_never_run_one_analysis_twice(workers, engineer):
    first, second = workers("twin-a"), workers("twin-b")
    ids = []
    for log_path, text in itertools.islice(itertools.cycle(TAILS), ANALYSES):
        analysis = analysis_request(data=text, user=engineer, log_path=log_path)  # sent once
        analysis_run_task.apply_async((analysis.pk,))  # and once more
        ids.append(analysis.pk)

    assert wait_until(lambda: all_finished(ids), 120)
    # Every delivery, a duplicate's no-op included, has run to its end in one worker or the
    # other: none is still to come, so the counts below are final.
    assert wait_until(
        lambda: _count(RETURNED, first) + _count(RETURNED, second) >= 2 * ANALYSES, 30
    )

    assert_done_exactly_once(ids)
    assert _count(RECEIVED, first) and _count(RECEIVED, second), "one worker did all the work"
    runs = Analysis.objects.filter(pk__in=ids)
    hits = Counter(key for report in runs.values_list("report", flat=True) for key in _hits(report))
    assert hits, "no confident match among the tails"
    assert dict(Signature.objects.filter(hit_count__gt=0).values_list("pk", "hit_count")) == hits
    gaps = Counter(runs.exclude(gap=None).values_list("gap", flat=True))
    assert dict(KnowledgeGap.objects.values_list("pk", "analysis_count")) == dict(gaps)


def _hits(report: dict) -> set[int]:
    """The signatures one stored analysis counts a hit for: those behind confident matches."""
    return {
        signature_pk(evidence["signature"])
        for suggestion in report["suggestions"]
        if suggestion["confident"]
        for evidence in suggestion["evidence"]
        if evidence.get("signature")
    } - {None}
