"""The writes outside the services' usual paths keep the rollups equal to the rows: the
rebuild command, the admin, a person deleted, an analysis deleted."""

import io
from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import RequestFactory

from incidents import services
from incidents.models import (
    Analysis,
    CellDay,
    Feedback,
    Incident,
    IncidentCell,
    IncidentDay,
    Recurrence,
    WindowState,
    WindowTotal,
)
from incidents.services.rollups_build import WINDOWS, rollups_window
from tests.admin_forms import admin_change
from tests.factories import IncidentFactory
from tests.incidents.test_rollups import (
    _today,
    analysis_finished,
    assert_rollups_equal_live,
    live_matrix,
    report_for,
    shown_matrix,
)

pytestmark = pytest.mark.django_db


def test_the_rebuild_command_counts_rows_written_past_the_services(alice):
    made = IncidentFactory(stage="data")
    Recurrence.objects.create(incident=made, occurred_on=_today(), reported_by=alice)
    Analysis.objects.create(
        status=Analysis.Status.DONE, text="t", confident=True, top_incident=made
    )
    call_command("rebuild_rollups", stdout=io.StringIO())
    assert_rollups_equal_live()
    assert shown_matrix(12, 8) == live_matrix(12, 8)
    assert set(WindowState.objects.values_list("weeks", "as_of")) == {
        (w, _today()) for w in WINDOWS
    }


def test_the_admin_moves_and_deletes_recurrences_through_the_rollups(alice):
    first, second = IncidentFactory(stage="data"), IncidentFactory(stage="serve")
    rollups_window(weeks=12, today=_today())
    site = admin.site._registry[Recurrence]
    request = RequestFactory().post("/")
    request.user = alice
    recurrence = Recurrence(incident=first, occurred_on=_today(), reported_by=alice)
    site.save_model(request, recurrence, form=None, change=False)
    assert recurrence.pk and Incident.objects.get(pk=first.pk).recurrence_count == 1
    recurrence.incident, recurrence.occurred_on = second, _today() - timedelta(days=2)
    site.save_model(request, recurrence, form=None, change=True)
    assert_rollups_equal_live()
    assert Incident.objects.get(pk=second.pk).recurrence_count == 1
    site.delete_queryset(request, Recurrence.objects.all())
    assert_rollups_equal_live()
    assert not IncidentDay.objects.exists()


def test_the_admin_files_moves_and_deletes_incidents_through_the_rollups(admin_user, alice):
    made = IncidentFactory(stage="data", discipline="reconcile")
    services.incident_record_recurrence(incident=made, reported_by=alice)
    rollups_window(weeks=12, today=_today())
    admin_change(made, admin_user, stage="serve")
    assert_rollups_equal_live()
    assert WindowTotal.objects.get(incident=made).stage == "serve"
    site = admin.site._registry[Incident]
    request = RequestFactory().post("/")
    request.user = admin_user
    site.delete_queryset(request, Incident.objects.filter(pk=made.pk))
    assert_rollups_equal_live()
    assert not CellDay.objects.exists() and not IncidentCell.objects.exclude(incidents=0).exists()


def test_deleting_people_who_answered_an_analysis_counts_it_again(alice, bob):
    made = IncidentFactory(stage="data")
    rollups_window(weeks=12, today=_today())
    analysis = Analysis.objects.get(pk=analysis_finished(_today(), report_for(made)).pk)
    for person in (alice, bob):
        services.analysis_feedback(
            analysis=analysis, incident=made, user=person, verdict=Feedback.Verdict.NOT_IT
        )
    assert not IncidentDay.objects.exists()
    get_user_model().objects.filter(pk__in=[alice.pk, bob.pk]).delete()
    assert_rollups_equal_live()
    assert IncidentDay.objects.get().analyses == 1


def test_deleting_an_analysis_and_its_feedback_leaves_nothing_counted(alice):
    made = IncidentFactory(stage="data")
    analysis = Analysis.objects.get(pk=analysis_finished(_today(), report_for(made)).pk)
    services.analysis_feedback(
        analysis=analysis, incident=made, user=alice, verdict=Feedback.Verdict.NOT_IT
    )
    Analysis.objects.filter(pk=analysis.pk).delete()
    assert not IncidentDay.objects.exists()
