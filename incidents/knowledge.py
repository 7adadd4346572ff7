"""The compiled knowledge base, built from the database and cached per process.

Web processes and workers each keep one compiled index and rebuild it when the knowledge
changes. Every change writes a new token into one row (`KnowledgeState`), so noticing a
change costs one primary-key read, at most once a second per process, whatever the size of
the book.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db.models import Case, Sum, Value, When

from incidents import logmatch
from incidents.catalog import incident_description, stage_lead_slugs
from incidents.models import TEXT_FIELDS, Feedback, Incident, KnowledgeState, Signature

_lock = threading.Lock()
_cached: tuple[str, logmatch.KnowledgeIndex] | None = None
_checked: tuple[float, KnowledgeState] | None = None


def knowledge_state() -> KnowledgeState:
    """The tokens of the knowledge and of people's feedback, read from the database at most
    every KNOWLEDGE_CHECK_SECONDS per process (a change this process made is seen at once)."""
    global _checked
    now = time.monotonic()
    if _checked is None or now - _checked[0] >= settings.KNOWLEDGE_CHECK_SECONDS:
        _checked = (now, KnowledgeState.current())
    return _checked[1]


def knowledge_state_forget() -> None:
    """This process changed the knowledge: read the tokens again on the next call."""
    global _checked
    _checked = None


def knowledge_index() -> logmatch.KnowledgeIndex:
    global _cached
    version = knowledge_state().token
    with _lock:
        if _cached is None or _cached[0] != version:
            _cached = (version, _build())
        return _cached[1]


def _build() -> logmatch.KnowledgeIndex:
    rows = Incident.objects.values("slug", "stage", "translations", "tag_list", *TEXT_FIELDS)
    leads = stage_lead_slugs()
    incidents = [
        logmatch.IncidentSpec(
            slug=row["slug"],
            title=row["title"],
            stage=row["stage"],
            symptom=row["symptom"],
            description=_description(row),
            stage_lead=row["slug"] in leads,
        )
        for row in rows.iterator(chunk_size=2000)
    ]
    signatures = [
        logmatch.SignatureSpec(key=str(pk), slug=slug, pattern=pattern, unless=unless)
        for pk, slug, pattern, unless in Signature.objects.enabled().values_list(
            "pk", "incident__slug", "pattern", "unless"
        )
    ]
    return logmatch.build_index(incidents, signatures)


def _description(row: dict) -> str:
    translations = (row["translations"] or {}).values()
    return incident_description(row, row["tag_list"], translations)


_feedback_cached: tuple[str, dict[tuple[str, str], float]] | None = None


def feedback_map() -> dict[tuple[str, str], float]:
    """(key template, incident slug) → adjustment in [-1, 1] from people's verdicts.

    Each "this fixed it" counts +1 and each "not it" −1; two verdicts reach the full weight.
    """
    global _feedback_cached
    state = knowledge_state().feedback_token
    with _lock:
        if _feedback_cached is None or _feedback_cached[0] != state:
            net = (
                Feedback.objects.values("key_template", "incident__slug")
                .annotate(
                    net=Sum(
                        Case(
                            When(verdict=Feedback.Verdict.FIXED, then=Value(1)),
                            default=Value(-1),
                        )
                    )
                )
                .values_list("key_template", "incident__slug", "net")
            )
            _feedback_cached = (
                state,
                {(t, slug): max(-1.0, min(1.0, n / 2)) for t, slug, n in net if t and n},
            )
        return _feedback_cached[1]
