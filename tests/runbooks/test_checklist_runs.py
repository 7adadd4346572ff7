"""Checklist runs: anyone signed in starts one and ticks it; they are kept with who and when."""

from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from common.weeks import week_label_of_moment
from runbooks.models import ChecklistRun, Runbook
from runbooks.selectors import rhythm_runs_for_week
from runbooks.services import checklist_run_start, checklist_run_update

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def rhythm(runbooks) -> Runbook:
    return Runbook.objects.get(slug="weekly-rhythm")


@pytest.fixture
def run(rhythm, alice) -> ChecklistRun:
    return checklist_run_start(runbook=rhythm, user=alice)


def _start(client, slug="weekly-rhythm"):
    return client.post(reverse("runbooks:run-start", args=[slug]))


def test_it_starts_a_run_with_who_and_when(alice_client, alice, rhythm):
    before = timezone.now()
    response = _start(alice_client)
    run = ChecklistRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == run.get_absolute_url()
    assert run.runbook == rhythm and run.started_by == alice
    assert before <= run.started_at <= timezone.now()
    assert run.iso_week == week_label_of_moment(run.started_at)
    assert run.step_count == len(rhythm.steps)
    assert (run.finished_at, run.ticked, run.step_notes, run.note) == (None, [], {}, "")


def test_a_second_click_gives_back_the_open_run(alice_client, bob_client, rhythm):
    first = _start(alice_client)["Location"]
    assert _start(alice_client)["Location"] == first
    assert _start(bob_client)["Location"] != first  # bob's own run
    assert ChecklistRun.objects.count() == 2


def test_two_starts_leave_one_open_run(alice, rhythm):
    first = checklist_run_start(runbook=rhythm, user=alice)
    assert checklist_run_start(runbook=rhythm, user=alice) == first
    assert ChecklistRun.objects.count() == 1


def test_a_start_that_loses_a_race_gives_back_the_run_that_won(alice, rhythm, monkeypatch):
    """Two starts both find no open run; the second insert hits the database constraint."""
    winner = []
    full_clean = ChecklistRun.full_clean

    def other_tab_inserts_first(run, *args, **kwargs):
        # Called after the read for an open run and before the insert: the other request's
        # run lands exactly there.
        if not winner:
            winner.append(
                ChecklistRun.objects.create(
                    runbook=rhythm, started_by=alice, step_count=len(rhythm.steps)
                )
            )
        return full_clean(run, *args, **kwargs)

    monkeypatch.setattr(ChecklistRun, "full_clean", other_tab_inserts_first)

    assert checklist_run_start(runbook=rhythm, user=alice) == winner[0]
    assert ChecklistRun.objects.count() == 1


def test_the_database_refuses_a_second_open_run_in_a_week(alice, rhythm, run):
    second = ChecklistRun(runbook=rhythm, started_by=alice, step_count=len(rhythm.steps))
    with pytest.raises(IntegrityError), transaction.atomic():
        second.save()
    checklist_run_update(run=run, ticked=[], step_notes={}, note="", finish=True)
    second.save()  # once the first is finished, a new run may start
    assert ChecklistRun.objects.filter(finished_at__isnull=True).get() == second


def test_an_open_run_from_last_week_is_not_reused(alice, rhythm):
    old = checklist_run_start(runbook=rhythm, user=alice, now=timezone.now() - timedelta(weeks=1))
    new = checklist_run_start(runbook=rhythm, user=alice)
    assert new.pk != old.pk
    assert new.iso_week != old.iso_week


def test_it_shows_the_steps_to_tick_in_the_users_language(alice_client, run):
    page = alice_client.get(run.get_absolute_url()).content.decode()
    assert 'name="ticked" value="0"' in page
    assert 'data-copy="step-1-command"' in page
    alice_client.post(reverse("language-set"), {"language": "zh-hans"})
    assert "每周例行" in alice_client.get(run.get_absolute_url()).content.decode()


def test_it_ticks_steps_and_keeps_notes(alice_client, run):
    response = alice_client.post(
        run.get_absolute_url(),
        {"ticked": ["0", "2"], "step_note_0": "  412G free  ", "note": "Quiet week."},
    )
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.ticked == [0, 2]
    assert run.step_notes == {"0": "412G free"}
    assert run.note == "Quiet week."
    assert run.finished_at is None
    page = alice_client.get(run.get_absolute_url()).content.decode()
    assert 'value="412G free"' in page
    assert f"2 of {run.step_count} steps ticked" in page


def test_htmx_saves_as_you_tick_and_answers_with_the_status(alice_client, run):
    response = alice_client.post(run.get_absolute_url(), {"ticked": ["1"]}, **HTMX)
    page = response.content.decode()
    assert response.status_code == 200
    assert page.lstrip().startswith('<div id="run-status"')
    assert f"1 of {run.step_count} steps ticked" in page and "Saved." in page
    run.refresh_from_db()
    assert run.ticked == [1]


def test_finishing_records_when_and_closes_the_run(alice_client, run):
    response = alice_client.post(
        run.get_absolute_url(), {"ticked": ["0", "1"], "finish": "1"}, follow=True
    )
    assert response.redirect_chain[-1][0] == run.runbook.get_absolute_url()
    run.refresh_from_db()
    assert run.finished_at is not None and run.finished_at >= run.started_at
    page = alice_client.get(run.get_absolute_url()).content.decode()
    assert 'name="ticked"' not in page  # read-only now
    late = alice_client.post(run.get_absolute_url(), {"ticked": ["3"]}, follow=True)
    assert "This run is finished; it can no longer change." in late.content.decode()
    run.refresh_from_db()
    assert run.ticked == [0, 1]


def test_a_finished_run_is_not_reused_by_start(alice, run):
    checklist_run_update(run=run, ticked=[0], step_notes={}, note="", finish=True)
    assert checklist_run_start(runbook=run.runbook, user=alice).pk != run.pk


@pytest.mark.parametrize("ticked", ["99", "-1", "two"])
def test_it_refuses_a_step_the_runbook_does_not_have(alice_client, run, ticked):
    response = alice_client.post(run.get_absolute_url(), {"ticked": [ticked]})
    assert response.status_code == 400
    assert "Select a valid choice." in response.content.decode()
    run.refresh_from_db()
    assert run.ticked == []


def test_the_model_refuses_ticks_and_notes_beyond_its_steps(run):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError):
        checklist_run_update(run=run, ticked=[run.step_count], step_notes={}, note="")
    with pytest.raises(ValidationError):
        checklist_run_update(run=run, ticked=[], step_notes={run.step_count: "x"}, note="")


@pytest.mark.parametrize(
    ("who", "can_change"), [("alice_client", True), ("bob_client", False), ("lena_client", True)]
)
def test_only_the_starter_or_a_lead_changes_a_run(request, run, who, can_change):
    actor = request.getfixturevalue(who)
    page = actor.get(run.get_absolute_url())
    assert page.status_code == 200  # everyone reads it
    assert ('name="ticked"' in page.content.decode()) is can_change
    response = actor.post(run.get_absolute_url(), {"ticked": ["4"]})
    assert response.status_code == (302 if can_change else 403)
    run.refresh_from_db()
    assert (run.ticked == [4]) is can_change


def test_anonymous_visitors_cannot_start_or_see_runs(client, run):
    assert client.get(run.get_absolute_url())["Location"].startswith(reverse("login"))
    assert _start(client)["Location"].startswith(reverse("login"))
    assert ChecklistRun.objects.count() == 1


def test_the_runbook_page_lists_recent_runs(alice_client, run):
    page = alice_client.get(run.runbook.get_absolute_url()).content.decode()
    assert run.get_absolute_url() in page
    assert "alice" in page and run.iso_week in page


@pytest.mark.parametrize("n", [2, 30])
def test_the_run_list_page_is_constant(
    alice_client, alice, bob, runbooks, django_assert_num_queries, n
):
    slugs = list(Runbook.objects.values_list("slug", flat=True))
    for i in range(n):
        runbook = Runbook.objects.get(slug=slugs[i % len(slugs)])
        checklist_run_start(
            runbook=runbook, user=(alice, bob)[i % 2], now=timezone.now() - timedelta(weeks=i)
        )
    # session, user, count, page of runs (+ runbook, who started)
    with django_assert_num_queries(4):
        response = alice_client.get(reverse("runbooks:run-list"))
    assert response.status_code == 200


def test_rhythm_runs_for_week_counts_the_week_on_the_sites_clock(
    settings, rhythm, alice, bob, lena
):
    settings.TIME_ZONE = (
        "Asia/Shanghai"  # UTC+8: Monday 30 Nov 2026 starts at 16:00 UTC on the 29th
    )
    reconcile = Runbook.objects.get(slug="checklist-reconcile")

    def start(runbook, user, *utc):
        return checklist_run_start(runbook=runbook, user=user, now=datetime(*utc, tzinfo=UTC))

    sunday_before = start(rhythm, alice, 2026, 11, 29, 15, 59)  # Sun 23:59 in Shanghai
    monday_early = start(rhythm, bob, 2026, 11, 29, 16, 0)  # Mon 00:00
    sunday_late = start(rhythm, lena, 2026, 12, 6, 15, 59)  # Sun 6 Dec 23:59
    start(rhythm, alice, 2026, 12, 6, 16, 0)  # Mon 7 Dec 00:00: next week
    start(reconcile, alice, 2026, 12, 1, 9, 0)  # another runbook
    checklist_run_update(run=monday_early, ticked=[0], step_notes={}, note="", finish=True)

    runs = rhythm_runs_for_week(date(2026, 11, 30))
    assert {run.pk for run in runs} == {monday_early.pk, sunday_late.pk}
    assert {run.pk for run in rhythm_runs_for_week(date(2026, 12, 2))} == {r.pk for r in runs}
    assert [r.pk for r in rhythm_runs_for_week(date(2026, 11, 23))] == [sunday_before.pk]
    assert monday_early.iso_week == "2026-W49" and sunday_before.iso_week == "2026-W48"
    assert (
        rhythm_runs_for_week(date(2026, 11, 30)).filter(finished_at__isnull=False).get()
        == monday_early
    )


def test_rhythm_runs_for_week_is_one_query(rhythm, alice, django_assert_num_queries):
    checklist_run_start(runbook=rhythm, user=alice)
    with django_assert_num_queries(1):
        runs = list(rhythm_runs_for_week(timezone.localdate()))
        assert [run.started_by.username for run in runs] == ["alice"]
