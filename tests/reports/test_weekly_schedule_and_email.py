"""The weekly report's two triggers (beat and command) and its e-mail to the leads."""

from datetime import timedelta

import pytest
from celery.schedules import crontab
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Profile
from common.weeks import week_label_of_date, week_last_completed
from reports.models import WeeklyReport
from reports.services import report_week_mail, report_week_publish
from tests.reports.conftest import analysis, local, recurrence

pytestmark = pytest.mark.django_db


@pytest.fixture
def leads(lena, alice):
    lena.email = "lena@example.com"
    lena.save()
    alice.email = "alice@example.com"  # an engineer: not mailed
    alice.save()
    wei = get_user_model().objects.create_user("wei", email="wei@example.com", is_superuser=True)
    Profile.objects.create(user=wei, language="zh-hans")
    get_user_model().objects.create_user(
        "gone", email="gone@example.com", is_superuser=True, is_active=False
    )
    return lena, wei


def test_the_beat_builds_last_week_every_monday_at_nine():
    entry = settings.CELERY_BEAT_SCHEDULE["weekly-report"]
    assert entry["task"] == "reports.tasks.report_week_publish"
    schedule = entry["schedule"]
    assert isinstance(schedule, crontab)
    assert (schedule.minute, schedule.hour, schedule.day_of_week) == ({0}, {9}, {1})
    assert settings.CELERY_TIMEZONE == settings.TIME_ZONE


def test_the_schedule_is_configurable_and_fails_loudly_when_malformed():
    from django.core.exceptions import ImproperlyConfigured

    from config.settings import _weekly_report_crontab

    friday = _weekly_report_crontab("30 7 * * fri")
    assert (friday.minute, friday.hour, friday.day_of_week) == ({30}, {7}, {5})
    with pytest.raises(ImproperlyConfigured):
        _weekly_report_crontab("0 9 mon")


def test_the_beat_task_builds_and_mails_once(leads, catalog):
    from incidents.models import Incident
    from reports.tasks import report_week_publish as task

    week = week_last_completed()
    recurrence(Incident.objects.get(slug="gpu-oom"), week + timedelta(days=1))
    assert task.apply().get() == week_label_of_date(week)
    assert task.apply().get() == week_label_of_date(week)  # a second run: rebuilt, not mailed again

    assert WeeklyReport.objects.get().week_start == week
    assert sorted(message.to[0] for message in mail.outbox) == [
        "lena@example.com",
        "wei@example.com",
    ]


def test_the_email_has_text_and_html_in_each_leads_language(leads, catalog):
    from incidents.models import Incident

    week = week_last_completed()
    oom = Incident.objects.get(slug="gpu-oom")
    recurrence(oom, week + timedelta(days=1))
    analysis(when=local(week + timedelta(days=1)), top=oom)
    analysis(when=local(week + timedelta(days=2)), template="E<*> lost heartbeat")
    analysis(when=local(week + timedelta(days=2)), template="E<*> lost heartbeat")

    report = report_week_publish(week_start=week)

    english = next(message for message in mail.outbox if message.to == ["lena@example.com"])
    assert english.subject == f"Weekly report {report.week}: 33% of failures explained"
    assert "Explained share: 33%" in english.body
    assert "×1 Accelerator (GPU/NPU) out of memory (Train)" in english.body
    assert "2 × E<*> lost heartbeat" in english.body
    assert f"http://127.0.0.1:8000/reports/weekly/{report.week}/" in english.body
    html, mimetype = english.alternatives[0]
    assert mimetype == "text/html"
    assert '<strong style="font-size: 28px;">33%</strong>' in html
    assert "E&lt;*&gt; lost heartbeat" in html
    assert f'href="http://127.0.0.1:8000/incidents/{oom.slug}/"' in html
    chinese = next(message for message in mail.outbox if message.to == ["wei@example.com"])
    assert "加速卡（GPU/NPU）显存不足" in chinese.body
    assert '<html lang="zh-hans">' in chinese.alternatives[0][0]
    report.refresh_from_db()
    assert report.emailed_at is not None


def test_a_failed_send_leaves_the_report_to_be_mailed_again(leads, monkeypatch, week):
    report = report_week_publish(week_start=week, mail=False)

    def refuse(self, messages):
        raise OSError("SMTP down")

    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", refuse)
    with pytest.raises(OSError):
        report_week_mail(report=report)
    report.refresh_from_db()
    assert report.emailed_at is None
    monkeypatch.undo()
    assert report_week_mail(report=report) == 2
    assert report_week_mail(report=report) == 0  # already mailed
    assert report_week_mail(report=report, force=True) == 2


def test_the_command_rebuilds_any_week_and_mails_on_request(leads, capsys):
    past = week_last_completed() - timedelta(weeks=10)
    call_command("build_weekly_report", "--week", week_label_of_date(past))
    call_command("build_weekly_report", "--week", week_label_of_date(past), "--email")
    assert WeeklyReport.objects.get().week_start == past
    assert len(mail.outbox) == 2
    assert f"{week_label_of_date(past)}: 0 analyses, — explained" in capsys.readouterr().out
    with pytest.raises(CommandError):
        call_command("build_weekly_report", "--week", "2026-W60")


def test_the_command_builds_last_week_by_default():
    call_command("build_weekly_report")
    assert WeeklyReport.objects.get().week_start == week_last_completed()
    assert mail.outbox == []
