"""The sweep (every few seconds, from beat): what a dead worker, a lost message or an
unreachable broker left behind is sent again, and a tail that keeps killing its workers is
given up."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from config.celery import app
from incidents.models import Analysis, KnowledgeChange
from incidents.services.analysis import (
    MAX_ATTEMPTS,
    _enqueue,
    analysis_give_up_if_spent,
    analysis_release,
    claim_seconds,
)
from incidents.services.knowledge import _enqueue_rescore

log = logging.getLogger(__name__)
Status = Analysis.Status

# A queued tail handed to the broker is sent again only after this long: a backlog is not a
# loss. One the broker could not take (queued_at empty) goes with the next sweep, and so does
# every queued tail once the broker is found to have lost its queue (restarted empty).
QUEUED_GRACE = timedelta(minutes=3)
# Knowledge changes whose re-ranking could not be queued are queued again after this long.
CHANGE_GRACE = timedelta(minutes=1)
# A key the sweep keeps in a Redis broker: gone means the broker lost what it held.
BROKER_MARKER = "incident-kb:broker-marker"


@dataclass
class SweepResult:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    broker_reachable: bool = True
    broker_lost_queue: bool = False


def analysis_sweep() -> SweepResult:
    now = timezone.now()
    result = SweepResult()
    expired = Analysis.objects.filter(status=Status.RUNNING).filter(
        Q(claim_expires_at__lt=now)
        | Q(claim_expires_at__isnull=True, started_at__lt=now - timedelta(seconds=claim_seconds()))
    )
    for analysis_id, attempts in expired.values_list("pk", "attempts"):
        if attempts >= MAX_ATTEMPTS:
            if analysis_give_up_if_spent(analysis_id=analysis_id, dead=Q(pk=analysis_id)):
                result.failed.append(analysis_id)
        else:
            analysis_release(analysis_id=analysis_id)
            result.requeued.append(analysis_id)
    result.broker_reachable, result.broker_lost_queue = broker_state()
    if not result.broker_reachable:
        # Nothing can be sent now; what was taken back waits as never sent, for the next sweep.
        Analysis.objects.filter(pk__in=result.requeued).update(queued_at=None)
        return result
    waiting = Analysis.objects.filter(status=Status.QUEUED)
    if not result.broker_lost_queue:
        waiting = waiting.filter(Q(queued_at__isnull=True) | Q(queued_at__lt=now - QUEUED_GRACE))
    result.requeued.extend(
        pk for pk in waiting.values_list("pk", flat=True) if pk not in result.requeued
    )
    Analysis.objects.filter(pk__in=result.requeued).update(queued_at=now)
    for analysis_id in result.requeued:
        _enqueue(analysis_id)
    if KnowledgeChange.objects.filter(
        taken_at__isnull=True, created_at__lt=now - CHANGE_GRACE
    ).exists():
        _enqueue_rescore()
    return result


def broker_state() -> tuple[bool, bool]:
    """Whether the broker answers, and whether it lost what it held: a Redis broker no longer
    holds the marker an earlier sweep left in it when it restarted without its data (or on
    the first sweep), so whatever was queued in it is gone. Other brokers never say lost."""
    try:
        with app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=0)  # one try: the next sweep is soon
            client = getattr(connection.default_channel, "client", None)
            lost = client is not None and bool(client.set(BROKER_MARKER, "1", nx=True))
            return True, lost
    except Exception as error:  # whatever the transport raises when it cannot connect
        log.warning("sweep could not reach the broker: %s", error)
        return False, False
