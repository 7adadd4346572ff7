"""Building a week's snapshot: what it counts, where the week starts and ends, rebuilding."""

from datetime import timedelta

import pytest

from common.weeks import week_current, week_label_of_date
from incidents.models import Feedback, Signature
from incidents.services.rollups_build import rollups_rebuild
from reports.models import WeeklyReport
from reports.services import ReportRefused, report_week_build, report_week_review
from tests.reports.conftest import analysis, feedback, incident, local, recurrence

pytestmark = pytest.mark.django_db

FLOOD = {
    "template": "WARNING retrying utterance <*> with beam <*>",
    "level": "WARNING",
    "count": 420,
    "example": "WARNING retrying utterance u1 with beam 40",
    "flood": True,
}
QUIET = {
    "template": "INFO step <*>",
    "level": "INFO",
    "count": 90,
    "example": "INFO step 1",
    "flood": False,
}


def test_a_sunday_2330_event_in_shanghai_belongs_to_that_week(settings, week):
    settings.TIME_ZONE = "Asia/Shanghai"
    sunday, next_monday = week + timedelta(days=6), week + timedelta(days=7)
    target = incident(created=local(sunday, 23, 30), stage="data")
    analysis(when=local(sunday, 23, 30), top=target)
    incident(created=local(next_monday, 0, 30), stage="serve")  # next week, local time
    analysis(when=local(next_monday, 0, 30), template="E<*> lost heartbeat")
    analysis(when=local(week, 0, 0), template="E<*> lost heartbeat")  # Monday 00:00: inside

    data = report_week_build(week_start=week).data

    assert data["week"] == week_label_of_date(week)
    assert data["time_zone"] == "Asia/Shanghai"
    assert data["new_incidents"]["count"] == 1
    assert [item["slug"] for item in data["new_incidents"]["items"]] == [target.slug]
    assert data["analyses"]["submitted"] == 2
    assert data["analyses"]["explained"] == 1
    # In UTC, Sunday 23:30 in Shanghai is still Sunday (15:30) and Monday 00:30 is Sunday too.
    # The rollups count days on the site's clock: a site that moves it rebuilds them.
    settings.TIME_ZONE = "UTC"
    rollups_rebuild()
    assert report_week_build(week_start=week).data["new_incidents"]["count"] == 2


def test_an_empty_week_is_all_zeros_and_no_share(week):
    data = report_week_build(week_start=week).data
    assert data["analyses"] == {
        "submitted": 0,
        "explained": 0,
        "unexplained": 0,
        "failed": 0,
        "explained_share": None,
        "previous_share": None,
    }
    assert data["new_incidents"] == {"count": 0, "items": []}
    assert data["recurrences"] == {"count": 0, "incidents": 0}
    assert data["attention"] is None
    assert data["floods"] == [] and data["top_recurring"] == [] and data["gaps"]["items"] == []
    assert len(data["trend"]) == 12 and data["trend"][-1]["week"] == week_label_of_date(week)
    assert all(row["count"] == 0 for row in data["stages"] + data["disciplines"])


def test_rebuilding_a_week_replaces_its_snapshot_and_keeps_the_review(week, lena):
    first = report_week_build(week_start=week)
    report_week_review(report=first, user=lena, notes="Owners assigned.")
    incident(created=local(week + timedelta(days=2)))

    again = report_week_build(week_start=week)

    assert WeeklyReport.objects.count() == 1
    assert again.pk == first.pk
    assert again.data["new_incidents"]["count"] == 1
    again.refresh_from_db()
    assert (again.reviewed_by, again.review_notes) == (lena, "Owners assigned.")


def test_it_refuses_a_week_that_has_not_started_or_is_not_a_monday(week):
    with pytest.raises(ReportRefused):
        report_week_build(week_start=week_current() + timedelta(weeks=1))
    with pytest.raises(ReportRefused):
        report_week_build(week_start=week + timedelta(days=1))
    report_week_build(week_start=week_current())  # the week so far is fine


def test_it_counts_what_broke_recurred_and_was_explained(week, alice, bob):
    tuesday, previous_tuesday = week + timedelta(days=1), week - timedelta(days=6)
    oom = incident(
        stage="train", discipline="tiny-sample", created=local(week - timedelta(weeks=5))
    )
    disk = incident(stage="data", discipline="validate-first", created=local(tuesday))
    for _ in range(4):
        recurrence(oom, tuesday, alice)
    recurrence(disk, tuesday + timedelta(days=1), bob)
    recurrence(oom, previous_tuesday, alice)  # last week
    explained = analysis(when=local(tuesday), top=oom, groups=[QUIET, FLOOD])
    analysis(when=local(tuesday, 14), top=oom, groups=[{**FLOOD, "count": 30}])
    analysis(when=local(tuesday, 15), template="E<*> lost heartbeat", stage="train")
    analysis(when=local(tuesday, 16), template="E<*> lost heartbeat", stage="train")
    analysis(when=local(tuesday, 17), template="sox FAIL <*>", stage="data")
    analysis(when=local(tuesday, 18), status="failed")
    rejected = analysis(when=local(tuesday, 19), top=disk)
    feedback(rejected, disk, bob, Feedback.Verdict.NOT_IT, local(tuesday, 20))
    feedback(explained, oom, alice, Feedback.Verdict.FIXED, local(tuesday, 21))
    analysis(when=local(previous_tuesday), template="old <*>")  # last week: unexplained

    data = report_week_build(week_start=week).data

    assert data["analyses"] == {
        "submitted": 7,
        "explained": 3,
        "unexplained": 3,
        "failed": 1,
        "explained_share": 0.5,
        "previous_share": 0.0,
    }
    assert data["recurrences"] == {"count": 5, "incidents": 2}
    assert [(item["slug"], item["count"]) for item in data["top_recurring"]] == [
        (oom.slug, 4),
        (disk.slug, 1),
    ]
    assert [(gap["key_template"], gap["tails"]) for gap in data["gaps"]["items"]] == [
        ("E<*> lost heartbeat", 2),
        ("sox FAIL <*>", 1),
    ]
    assert data["gaps"]["templates"] == 2
    assert data["floods"] == [
        {
            "template": FLOOD["template"],
            "example": FLOOD["example"],
            "stage": "train",
            "lines": 450,
            "analyses": 2,
        }
    ]
    assert [(item["slug"], item["count"]) for item in data["not_it"]["items"]] == [(disk.slug, 1)]
    stages = {row["key"]: row for row in data["stages"]}
    assert stages["train"] == {
        "key": "train",
        "new": 0,
        "recurred": 4,
        "count": 4,
        "previous": 1,
        "change": 3,
    }
    assert stages["data"]["count"] == 2  # filed and recurred this week
    disciplines = {row["key"]: row for row in data["disciplines"]}
    assert disciplines["validate-first"]["count"] == 2
    # tiny-sample: 4 failures; validate-first: 2 failures + 1 remedy marked "not it"
    assert data["attention"] == {"discipline": "tiny-sample", "count": 4, "change": 3, "not_it": 0}
    assert data["trend"][-1]["stages"]["train"] == 4
    assert data["trend"][-1]["explained_share"] == 0.5
    titles = data["top_recurring"][0]["titles"]
    assert set(titles) == {"en", "zh-hans"} and titles["en"] == oom.title


def test_signatures_silent_for_eight_weeks_are_stale(week, catalog):
    end = local(week + timedelta(days=7), 0)
    signatures = list(Signature.objects.order_by("id")[:3])
    Signature.objects.update(
        created_at=end - timedelta(weeks=30), last_hit_at=end - timedelta(days=1)
    )
    Signature.objects.filter(pk=signatures[0].pk).update(last_hit_at=None)
    Signature.objects.filter(pk=signatures[1].pk).update(last_hit_at=end - timedelta(weeks=9))
    Signature.objects.filter(pk=signatures[2].pk).update(enabled=False, last_hit_at=None)

    stale = report_week_build(week_start=week).data["stale_signatures"]

    assert stale["count"] == 2 and stale["weeks"] == 8
    assert [item["id"] for item in stale["items"]] == [signatures[0].pk, signatures[1].pk]


@pytest.mark.parametrize("n", [2, 20])
def test_a_build_is_a_fixed_number_of_queries(week, alice, django_assert_num_queries, n):
    tuesday = week + timedelta(days=1)
    for i in range(n):
        made = incident(created=local(tuesday), stage=("build", "data", "train", "serve")[i % 4])
        recurrence(made, tuesday, alice)
        explained = analysis(when=local(tuesday), top=made, groups=[FLOOD])
        feedback(explained, made, alice, Feedback.Verdict.NOT_IT, local(tuesday, 13))
        analysis(when=local(tuesday), template=f"E<*> failure {i}")
        Signature.objects.create(
            incident=made, pattern=f"failure {i}", created_at=local(week) - timedelta(weeks=20)
        )
    # 17 reads: new incidents and recurrences per week, analyses per week, the gaps (rows,
    # count, their KnowledgeGap rows), the week's recurrences (totals, top, its incidents),
    # "not it" (rows, per discipline, its incidents), new incidents, floods, stale signatures
    # (count, rows), failed jobs caught by kb; then 5 to save: update_or_create's lookup,
    # savepoint, insert, release, commit
    with django_assert_num_queries(22):
        report_week_build(week_start=week)


def test_a_flood_the_engine_finds_is_marked_and_in_its_weeks_report(alice_client, catalog):
    from incidents.services import analysis_run
    from tests.incidents.test_analysis_pages import OOM_TAIL, _submit

    flooding = _submit(alice_client, log="\n".join(["WARNING: Retrying utt1 with beam 40"] * 600))
    quiet = _submit(alice_client, log=OOM_TAIL)
    for made in (flooding, quiet):
        analysis_run(analysis_id=made.pk)
        made.refresh_from_db()

    assert flooding.flooded and flooding.report["floods"]
    assert not quiet.flooded and not quiet.report["floods"]
    floods = report_week_build(week_start=week_current()).data["floods"]
    assert [(flood["lines"], flood["analyses"]) for flood in floods] == [(600, 1)]
