"""The sweep sends again what was lost on the way to a worker, and only that."""

from datetime import timedelta

import pytest
from django.utils import timezone

from incidents.models import Analysis, KnowledgeChange
from incidents.services import analysis_request, analysis_sweep

pytestmark = pytest.mark.django_db
TAIL = "OSError: [Errno 28] No space left on device: 'exp/tri3/ali.1.gz'\n"
Status = Analysis.Status


def test_it_resends_what_the_broker_refused_but_not_a_backlog(alice, broker):
    refused = analysis_request(data=TAIL, user=alice)
    Analysis.objects.filter(pk=refused.pk).update(queued_at=None)
    waiting = analysis_request(data=TAIL, user=alice)  # handed over a moment ago
    old = analysis_request(data=TAIL, user=alice)
    Analysis.objects.filter(pk=old.pk).update(queued_at=timezone.now() - timedelta(hours=1))

    assert sorted(analysis_sweep().requeued) == [refused.pk, old.pk]
    assert sorted(broker.sent) == [refused.pk, old.pk]
    assert Analysis.objects.get(pk=waiting.pk).status == Status.QUEUED


def test_a_broker_that_lost_its_queue_gets_every_queued_tail_again(alice, broker):
    broker.lost_queue = True  # restarted without its data
    queued = [analysis_request(data=TAIL, user=alice).pk for _ in range(3)]

    swept = analysis_sweep()
    assert swept.broker_lost_queue
    assert sorted(broker.sent) == sorted(queued)


def test_with_the_broker_down_nothing_is_sent_and_taken_back_tails_wait(alice, broker):
    broker.reachable = False
    dead = analysis_request(data=TAIL, user=alice)
    Analysis.objects.filter(pk=dead.pk).update(
        status=Status.RUNNING, attempts=1, claim_expires_at=timezone.now() - timedelta(seconds=1)
    )

    swept = analysis_sweep()
    assert (swept.broker_reachable, broker.sent) == (False, [])
    dead.refresh_from_db()
    assert (dead.status, dead.queued_at) == (Status.QUEUED, None)  # sent by the next sweep


def test_knowledge_changes_left_waiting_get_their_reranking_queued(db, broker):
    KnowledgeChange.objects.create(slug="gpu-oom")
    analysis_sweep()
    assert broker.rescores == 0  # its own task was queued a moment ago
    KnowledgeChange.objects.update(created_at=timezone.now() - timedelta(minutes=5))
    analysis_sweep()
    assert broker.rescores == 1
