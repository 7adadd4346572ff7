"""The rows a demo history is made of: stored reports and suggestions as the engine would have
written them, the demo team and gaps, and batching for bulk inserts."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from accounts.roles import ENGINEER, user_set_role
from incidents.models import Analysis, AnalysisSuggestion, KnowledgeGap, Recurrence
from reports.demo.material import GAP_LINES

if TYPE_CHECKING:
    from reports.demo.generator import Known

DEMO_PREFIX = "demo-"
TEAM = ("ana", "chen", "dmitri", "farah", "li", "marta", "noah", "wei")


def analysis_report(
    stage: str,
    line: str,
    template: str,
    incident: Known | None,
    flood: tuple[str, str] | None,
    flood_line: str,
    rng: random.Random,
) -> dict[str, Any]:
    """A stored report as the engine would have written it for this tail."""
    example = "INFO 11-28 step 120 loss 2.31"
    groups = [_group("INFO <*> step <*> loss <*>", "INFO", rng.randint(20, 180), 1, 150, example)]
    if flood:
        count = rng.randint(20, 4000)
        groups.append(_group(flood[1], "WARNING", count, 10, 190, flood_line, flood=True))
    groups.append(_group(template, "ERROR", 1, 200, 200, line))
    evidence = [{"line": 200, "text": line, "signature": None, "kind": "signature"}]
    return {
        "stage": stage,
        "levels": {
            "INFO": groups[0]["count"],
            "WARNING": groups[1]["count"] if flood else 0,
            "ERROR": 1,
        },
        "groups": groups,
        "suggestions": [
            {
                "slug": incident.slug,
                "title": incident.title,
                "score": 0.9,
                "confident": True,
                "evidence": evidence,
                "why": "",
            }
        ]
        if incident
        else [],
        "confident": incident is not None,
        "errors": [{"line": 200, "text": line}],
        "key_line": {"line": 200, "text": line},
        "key_template": template,
        "line_count": 200,
        "floods": [1] if flood else [],
    }


def suggestion(analysis: Analysis, incident: Known) -> AnalysisSuggestion:
    return AnalysisSuggestion(
        analysis_id=analysis.pk,
        incident_id=incident.pk,
        rank=1,
        score=0.9,
        confident=True,
        evidence=[{"line": 200, "text": incident.symptom[:300], "kind": "signature"}],
    )


def demo_gaps() -> dict[str, KnowledgeGap]:
    gaps = {}
    for stage, line, template in GAP_LINES:
        gaps[template], _ = KnowledgeGap.objects.get_or_create(
            key_hash=hashlib.sha256(template.encode()).hexdigest(),
            defaults={
                "key_template": template,
                "example_line": line.format(n=1, m=2),
                "stage": stage,
            },
        )
    return gaps


def demo_team() -> list:
    users = []
    model = get_user_model()
    for name in TEAM:
        user, created = model.objects.get_or_create(username=DEMO_PREFIX + name)
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
            user_set_role(user=user, role=ENGINEER)
        users.append(user)
    return users


def recount_recurrences(incidents) -> None:
    counts = (
        Recurrence.objects.filter(incident=OuterRef("pk"))
        .order_by()
        .values("incident")
        .annotate(n=Count("pk"))
        .values("n")
    )
    incidents.update(
        recurrence_count=Coalesce(Subquery(counts, output_field=IntegerField()), Value(0))
    )


def re2_literal(text: str) -> str:
    return "".join("\\" + char if char in "\\.^$|?*+()[]{}" else char for char in text)


def batches(items: Iterable, size: int) -> Iterator[list]:
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _group(
    template: str, level: str, count: int, first: int, last: int, example: str, flood=False
) -> dict[str, Any]:
    return {
        "template": template,
        "level": level,
        "count": count,
        "first_line": first,
        "last_line": last,
        "example": example,
        "flood": flood,
    }
