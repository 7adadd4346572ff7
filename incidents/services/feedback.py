"""People's verdicts on suggestions: "this fixed it" records a recurrence, "not it" lowers
the pairing of that incident with those lines."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from incidents.knowledge import knowledge_state_forget
from incidents.models import Analysis, Feedback, Incident, KnowledgeState, Recurrence
from incidents.services.incident import incident_record_recurrence, recurrence_delete
from incidents.services.rollups import rollups_analysis_change

Status = Analysis.Status


class FeedbackRefused(ValueError):
    """Feedback on an incident that this analysis did not suggest."""


def analysis_feedback(*, analysis: Analysis, incident: Incident, user, verdict: str) -> Feedback:
    """Record one person's "this fixed it" or "not it" on a suggestion of any analysis.

    The team's book: anyone may confirm a remedy on anyone's analysis (who fixed the failure
    is often not who pasted it). One analysis is one occurrence, so it records at most one
    recurrence of an incident however many confirm it: reported by the first who confirmed,
    dated the day the log was submitted, while the analysis keeps its submitter. A "not it"
    withdraws only its author's confirmation; the recurrence goes when nobody confirms it.
    """
    if (
        analysis.status != Status.DONE
        or not analysis.suggestions.filter(incident=incident).exists()
    ):
        raise FeedbackRefused(gettext("That incident was not suggested for this log."))
    with transaction.atomic():
        # One confirmation at a time per analysis, so two at once record one recurrence.
        Analysis.objects.select_for_update().only("pk").get(pk=analysis.pk)
        with rollups_analysis_change(analysis.pk):  # answered, it is no longer counted
            feedback, _ = Feedback.objects.update_or_create(
                analysis=analysis,
                incident=incident,
                user=user,
                defaults={"verdict": verdict, "key_template": analysis.key_template},
            )
        if verdict == Feedback.Verdict.FIXED and feedback.recurrence_id is None:
            feedback.recurrence = _recurrence_of(analysis, incident, user)
            feedback.save(update_fields=["recurrence"])
        elif verdict == Feedback.Verdict.NOT_IT and feedback.recurrence is not None:
            _withdraw(feedback, feedback.recurrence)
    KnowledgeState.replace("feedback_token")
    knowledge_state_forget()
    return feedback


def _recurrence_of(analysis: Analysis, incident: Incident, user) -> Recurrence:
    """The recurrence another confirmation of this pair recorded, or a new one."""
    confirmed = Recurrence.objects.filter(
        feedback__analysis=analysis, feedback__incident=incident
    ).first()
    return confirmed or incident_record_recurrence(
        incident=incident,
        reported_by=user,
        occurred_on=timezone.localdate(analysis.created_at),
        analysis=analysis,
    )


def _withdraw(feedback: Feedback, recurrence: Recurrence) -> None:
    feedback.recurrence = None
    feedback.save(update_fields=["recurrence"])
    still = Feedback.objects.filter(recurrence=recurrence).order_by("created_at", "pk").first()
    if still is None:
        recurrence_delete(recurrence=recurrence)
    elif recurrence.reported_by_id == feedback.user_id:
        recurrence.reported_by_id = still.user_id
        recurrence.save(update_fields=["reported_by"])
