"""Keeping stored analyses in step with the knowledge base."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import connection, transaction
from django.db.models import Subquery
from kombu.exceptions import KombuError

from incidents.knowledge import knowledge_state_forget
from incidents.models import KnowledgeChange, KnowledgeState

log = logging.getLogger(__name__)


def knowledge_changed(*, slugs: Iterable[str]) -> None:
    """Note that what the engine knows of these incidents changed, and re-rank the stored
    analyses they may affect in the background once the current transaction commits.

    Called by every service that changes an incident or a signature. Changes wait, noted,
    until the re-ranking takes them all at once: a burst of edits is one re-ranking, and
    several changes in one transaction queue one task.
    """
    # The state row first: its lock makes concurrent changes take their ids, and commit, in
    # one order, so a process that has applied the changes up to `last_change` missed none.
    token = KnowledgeState.replace("token")
    KnowledgeChange.objects.bulk_create(
        KnowledgeChange(slug=slug, token=token) for slug in set(slugs)
    )
    KnowledgeState.objects.filter(pk=1).update(
        last_change=Subquery(KnowledgeChange.objects.order_by("-pk").values("pk")[:1])
    )
    knowledge_state_forget()
    if connection.in_atomic_block and any(
        func is _enqueue_rescore for _, func, *_ in connection.run_on_commit
    ):
        return
    transaction.on_commit(_enqueue_rescore)


def _enqueue_rescore() -> None:
    from incidents.tasks import analyses_rescore as analyses_rescore_task

    try:
        # A short delay lets a burst of edits land first; the task takes every noted change.
        analyses_rescore_task.apply_async(countdown=5, retry=False)
    except (KombuError, OSError) as error:
        log.warning("re-ranking waits for the sweep: broker unreachable (%s)", error)
