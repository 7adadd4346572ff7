"""The compiled knowledge base, built from the database and cached per process.

Web processes and workers each keep one compiled index and rebuild it when the knowledge
changes; the version is read from the database, so every process notices every change.
"""

from __future__ import annotations

import threading

from django.db.models import Case, Count, Max, Q, Sum, Value, When

from incidents import logmatch
from incidents.catalog import incident_description
from incidents.models import TEXT_FIELDS, Feedback, Incident, Signature

_lock = threading.Lock()
_cached: tuple[str, logmatch.KnowledgeIndex] | None = None


def knowledge_version() -> str:
    incidents = Incident.objects.aggregate(n=Count("id"), at=Max("updated_at"))
    signatures = Signature.objects.aggregate(n=Count("id"), at=Max("updated_at"))
    return f"{incidents['n']}:{incidents['at']}:{signatures['n']}:{signatures['at']}"


def knowledge_index() -> logmatch.KnowledgeIndex:
    global _cached
    version = knowledge_version()
    with _lock:
        if _cached is None or _cached[0] != version:
            _cached = (version, _build())
        return _cached[1]


def _build() -> logmatch.KnowledgeIndex:
    rows = Incident.objects.values("slug", "stage", "translations", "tag_list", *TEXT_FIELDS)
    incidents = [
        logmatch.IncidentSpec(
            slug=row["slug"],
            title=row["title"],
            stage=row["stage"],
            symptom=row["symptom"],
            description=_description(row),
        )
        for row in rows.iterator(chunk_size=2000)
    ]
    signatures = [
        logmatch.SignatureSpec(key=str(pk), slug=slug, pattern=pattern)
        for pk, slug, pattern in Signature.objects.enabled().values_list(
            "pk", "incident__slug", "pattern"
        )
    ]
    return logmatch.build_index(incidents, signatures)


def _description(row: dict) -> str:
    translations = (row["translations"] or {}).values()
    return incident_description(row, row["tag_list"], translations)


_feedback_cached: tuple[tuple, dict[tuple[str, str], float]] | None = None


def feedback_map() -> dict[tuple[str, str], float]:
    """(key template, incident slug) → adjustment in [-1, 1] from people's verdicts.

    Each "this fixed it" counts +1 and each "not it" −1; two verdicts reach the full weight.
    """
    global _feedback_cached
    state = tuple(
        Feedback.objects.aggregate(
            n=Count("id"),
            last=Max("id"),
            fixed=Count("id", filter=Q(verdict=Feedback.Verdict.FIXED)),
        ).values()
    )
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
