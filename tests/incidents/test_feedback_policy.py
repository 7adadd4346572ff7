"""Who may say "this fixed it" on whose analysis, and what it records.

Anyone on the team may confirm a remedy on anyone's analysis: the engineer who applied the fix
is often not the one who pasted the log. One analysis is one occurrence of a failure, so it
records at most one recurrence of an incident, however many people confirm it, reported by
the first who confirmed and dated the day the log was submitted; the analysis keeps its
submitter. A "not it" withdraws only its author's confirmation.
"""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from incidents.models import Analysis, Feedback, Incident, Recurrence
from incidents.services import analysis_feedback, analysis_request, analysis_run

pytestmark = pytest.mark.django_db

OOM_TAIL = (
    "[rank0]:     loss.backward()\n"
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    "GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.\n"
)


def _analysed(user, days_ago: int = 0) -> Analysis:
    analysis = analysis_request(data=OOM_TAIL, user=user)
    analysis_run(analysis_id=analysis.pk)
    Analysis.objects.filter(pk=analysis.pk).update(
        created_at=timezone.now() - timedelta(days=days_ago)
    )
    return Analysis.objects.get(pk=analysis.pk)


def _say(analysis, user, verdict):
    incident = Incident.objects.get(slug="gpu-oom")
    return analysis_feedback(analysis=analysis, incident=incident, user=user, verdict=verdict)


def _recurrences():
    incident = Incident.objects.get(slug="gpu-oom")
    return incident.recurrence_count, list(
        Recurrence.objects.filter(incident=incident).values_list("reported_by__username", flat=True)
    )


def test_a_teammate_confirms_on_the_page_under_their_own_name(alice, bob_client, catalog):
    analysis = _analysed(alice, days_ago=3)
    url = reverse("incidents:analysis-feedback", args=[analysis.pk])
    response = bob_client.post(url, {"incident": "gpu-oom", "verdict": "fixed"})
    assert response.status_code == 302
    assert _recurrences() == (1, ["bob"])
    recurrence = Recurrence.objects.get()
    assert recurrence.occurred_on == timezone.localdate(analysis.created_at)
    assert recurrence.occurred_on != timezone.localdate()
    assert Analysis.objects.get(pk=analysis.pk).submitted_by == alice


def test_one_analysis_is_one_recurrence_however_many_confirm(alice, bob, lena, catalog):
    analysis = _analysed(alice)
    for user in (alice, bob, lena, bob):
        _say(analysis, user, "fixed")
    assert _recurrences() == (1, ["alice"])
    assert Feedback.objects.filter(recurrence__isnull=False).count() == 3


def test_a_withdrawal_takes_back_only_its_authors_confirmation(alice, bob, catalog):
    analysis = _analysed(alice)
    _say(analysis, bob, "fixed")
    _say(analysis, alice, "fixed")
    _say(analysis, bob, "not-it")
    assert _recurrences() == (1, ["alice"])  # still confirmed, now by alice
    _say(analysis, alice, "not-it")
    assert _recurrences() == (0, [])


def test_two_analyses_are_two_recurrences(alice, bob, catalog):
    _say(_analysed(alice), bob, "fixed")
    _say(_analysed(bob), bob, "fixed")
    assert _recurrences() == (2, ["bob", "bob"])
