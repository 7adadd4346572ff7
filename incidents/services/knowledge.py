"""Keeping stored analyses in step with the knowledge base."""

from __future__ import annotations

import logging

from django.db import connection, transaction
from kombu.exceptions import KombuError

log = logging.getLogger(__name__)


def knowledge_changed() -> None:
    """Re-rank stored analyses in the background once the current transaction commits.

    Called by every service that changes what the engine knows; several changes in one
    transaction schedule one re-ranking.
    """
    if connection.in_atomic_block and any(
        func is _enqueue_rescore for _, func, *_ in connection.run_on_commit
    ):
        return
    transaction.on_commit(_enqueue_rescore)


def _enqueue_rescore() -> None:
    from incidents.tasks import analyses_rescore as analyses_rescore_task

    try:
        # A short delay lets a burst of edits land first; the task skips a version it has seen.
        analyses_rescore_task.apply_async(countdown=5, retry=False)
    except (KombuError, OSError) as error:
        log.warning("re-ranking skipped: broker unreachable (%s)", error)
