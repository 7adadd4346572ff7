"""Knowledge gaps: tails the book could not explain, grouped by their key template."""

from __future__ import annotations

import hashlib

from django.db import IntegrityError, transaction
from django.db.models import F, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from incidents import logmatch
from incidents.models import Analysis, Incident, KnowledgeGap


def gap_key(template: str) -> str:
    return hashlib.sha256(template.encode()).hexdigest()


def gap_note(analysis: Analysis, report: logmatch.Report) -> KnowledgeGap | None:
    """An unexplained tail joins the gap of its key template; an explained one closes it."""
    if not report.key_template:
        return None
    key = gap_key(report.key_template)
    now = timezone.now()
    if report.confident:
        top = next((s.slug for s in report.suggestions if s.confident), "")
        explained_by = Incident.objects.filter(slug=top).values("pk")[:1]
        KnowledgeGap.objects.filter(key_hash=key, explained_at__isnull=True).update(
            explained_at=now, incident=Coalesce(F("incident"), Subquery(explained_by))
        )
        return analysis.gap
    line = report.key_line.text if report.key_line else report.key_template
    try:
        with transaction.atomic():
            gap, created = KnowledgeGap.objects.get_or_create(
                key_hash=key,
                defaults={
                    "key_template": report.key_template,
                    "example_line": line,
                    "stage": report.stage or "",
                    "analysis_count": 1,
                },
            )
    except IntegrityError:  # another worker created it a moment ago
        gap, created = KnowledgeGap.objects.get(key_hash=key), False
    if not created and analysis.gap_id != gap.pk:
        KnowledgeGap.objects.filter(pk=gap.pk).update(
            analysis_count=F("analysis_count") + 1,
            last_seen=now,
            explained_at=None,
            example_line=line,
            stage=report.stage or gap.stage,
        )
    return gap
