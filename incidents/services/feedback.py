"""People's verdicts on suggestions: "this fixed it" records a recurrence, "not it" lowers
the pairing of that incident with those lines."""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils.translation import gettext

from incidents.knowledge import knowledge_state_forget
from incidents.models import Analysis, Feedback, Incident, KnowledgeState
from incidents.services.incident import incident_record_recurrence

Status = Analysis.Status


class FeedbackRefused(ValueError):
    """Feedback on an incident that this analysis did not suggest."""


def analysis_feedback(*, analysis: Analysis, incident: Incident, user, verdict: str) -> Feedback:
    """Record "this fixed it" (a recurrence of the incident) or "not it" (lowers the pairing)."""
    if (
        analysis.status != Status.DONE
        or not analysis.suggestions.filter(incident=incident).exists()
    ):
        raise FeedbackRefused(gettext("That incident was not suggested for this log."))
    with transaction.atomic():
        feedback, _ = Feedback.objects.update_or_create(
            analysis=analysis,
            incident=incident,
            user=user,
            defaults={"verdict": verdict, "key_template": analysis.key_template},
        )
        if verdict == Feedback.Verdict.FIXED and feedback.recurrence_id is None:
            feedback.recurrence = incident_record_recurrence(
                incident=incident,
                reported_by=user,
                analysis=analysis,
            )
            feedback.save(update_fields=["recurrence"])
        elif verdict == Feedback.Verdict.NOT_IT and feedback.recurrence is not None:
            feedback.recurrence.delete()
            Incident.objects.filter(pk=incident.pk, recurrence_count__gt=0).update(
                recurrence_count=F("recurrence_count") - 1
            )
            feedback.recurrence = None
            feedback.save(update_fields=["recurrence"])
    KnowledgeState.replace("feedback_token")
    knowledge_state_forget()
    return feedback
