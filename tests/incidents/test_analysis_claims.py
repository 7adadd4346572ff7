"""A worker's claim on a tail is a lease: a dead worker's tail is taken over, a live
worker's never, and a tail that kills every worker that runs it is given up."""

from datetime import timedelta

import pytest
from django.utils import timezone

from incidents.models import Analysis
from incidents.services import analysis_request, analysis_run, analysis_sweep
from incidents.services.analysis import MAX_ATTEMPTS

pytestmark = pytest.mark.django_db
TAIL = "OSError: [Errno 28] No space left on device: 'exp/tri3/ali.1.gz'\n"
Status = Analysis.Status


def _held(analysis: Analysis, *, task_id: str, expires_in: float, attempts: int = 1) -> None:
    """As a worker leaves it: running, claimed by `task_id` until `expires_in` seconds."""
    Analysis.objects.filter(pk=analysis.pk).update(
        status=Status.RUNNING,
        attempts=attempts,
        claim_task_id=task_id,
        claim_expires_at=timezone.now() + timedelta(seconds=expires_in),
    )


def _state(analysis: Analysis) -> tuple[str, int]:
    analysis.refresh_from_db()
    return analysis.status, analysis.attempts


def test_a_live_workers_claim_is_left_alone(alice, catalog, broker):
    analysis = analysis_request(data=TAIL, user=alice)
    _held(analysis, task_id="first", expires_in=30)

    analysis_run(analysis_id=analysis.pk, task_id="another")  # a duplicate delivery
    assert _state(analysis) == (Status.RUNNING, 1)
    assert analysis_sweep().requeued == []


def test_an_expired_claim_is_taken_over_by_the_next_delivery(alice, catalog):
    analysis = analysis_request(data=TAIL, user=alice)
    _held(analysis, task_id="dead", expires_in=-1)

    analysis_run(analysis_id=analysis.pk, task_id="redelivered")
    assert _state(analysis) == (Status.DONE, 2)
    assert analysis.claim_expires_at is None
    assert analysis.top_incident.slug == "disk-full"


def test_the_dead_workers_own_message_back_takes_over_at_once(alice, catalog):
    analysis = analysis_request(data=TAIL, user=alice)
    _held(analysis, task_id="t-1", expires_in=30)  # its worker died a moment ago

    analysis_run(analysis_id=analysis.pk, task_id="t-1")  # reject-on-worker-lost redelivery
    assert _state(analysis) == (Status.DONE, 2)


def test_a_tail_that_killed_every_attempt_is_given_up_not_run_again(alice, catalog):
    analysis = analysis_request(data=TAIL, user=alice)
    _held(analysis, task_id="t-1", expires_in=30, attempts=MAX_ATTEMPTS)

    analysis_run(analysis_id=analysis.pk, task_id="t-1")
    assert _state(analysis) == (Status.FAILED, MAX_ATTEMPTS)
    assert (
        analysis.error == f"The analysis stopped its worker {MAX_ATTEMPTS} times and was given up."
    )
    assert not analysis.suggestions.exists()


def test_the_sweep_takes_back_expired_claims_and_gives_up_spent_tails(alice, catalog, broker):
    dead, spent, alive = (analysis_request(data=TAIL, user=alice) for _ in range(3))
    _held(dead, task_id="a", expires_in=-1)
    _held(spent, task_id="b", expires_in=-1, attempts=MAX_ATTEMPTS)
    _held(alive, task_id="c", expires_in=30)

    swept = analysis_sweep()
    assert (swept.requeued, swept.failed) == ([dead.pk], [spent.pk])
    assert _state(dead)[0] == Status.QUEUED
    assert _state(spent)[0] == Status.FAILED
    assert _state(alive)[0] == Status.RUNNING
    assert broker.sent == [dead.pk]
