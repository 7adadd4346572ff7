"""Writes: build, mail and review the weekly report.

One service, two triggers (STYLE practice 7): the Celery beat entry and the
`build_weekly_report` command both call `report_week_publish`. The week is the natural key, so
building a week again replaces its snapshot and never adds a second report.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.mail import EmailMultiAlternatives, get_connection
from django.db.models import Q
from django.template.loader import render_to_string
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.roles import LEAD
from common.weeks import YEARS, week_current, week_label_of_date, week_last_completed
from incidents.logmatch import without_secrets
from reports import selectors
from reports.models import WeeklyReport
from reports.permissions import can_review_reports

log = logging.getLogger(__name__)


class ReportRefused(ValueError):
    """A week that cannot be built, with a message for the person who asked."""


def report_week_build(*, week_start: date) -> WeeklyReport:
    """Compute a week's snapshot and store it under the week. A rebuild replaces the snapshot;
    the review and the e-mail stamp of that week stay."""
    if week_start.weekday() != 0:
        raise ReportRefused(
            _("%(day)s is not a Monday: weeks start on Monday.") % {"day": week_start}
        )
    if week_start > week_current():
        raise ReportRefused(
            _("%(week)s has not started yet.") % {"week": week_label_of_date(week_start)}
        )
    if week_start.year not in YEARS:
        raise ReportRefused(
            _("Reports cover the years %(first)s to %(last)s.")
            % {"first": YEARS[0], "last": YEARS[-1]}
        )
    started = time.perf_counter()
    data = selectors.report_week_compute(week_start=week_start)
    build_ms = round((time.perf_counter() - started) * 1000)
    report, created = WeeklyReport.objects.update_or_create(
        week_start=week_start,
        defaults={"data": data, "built_at": timezone.now(), "build_ms": build_ms},
    )
    log.info(
        "weekly report %s %s in %d ms", report.week, "built" if created else "rebuilt", build_ms
    )
    return report


@dataclass(frozen=True)
class Recipient:
    email: str
    language: str


def report_recipients() -> list[Recipient]:
    """Every active lead with an address, in the language they chose, plus any extra addresses
    from settings (in the site's language)."""
    users = (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(groups__name=LEAD) | Q(is_superuser=True))
        .exclude(email="")
        .select_related("profile")
        .distinct()
        .order_by("pk")
    )
    recipients = []
    for user in users:
        profile = getattr(user, "profile", None)
        recipients.append(
            Recipient(user.email, (profile and profile.language) or settings.LANGUAGE_CODE)
        )
    known = {recipient.email for recipient in recipients}
    recipients += [
        Recipient(email, settings.LANGUAGE_CODE)
        for email in settings.WEEKLY_REPORT_EXTRA_RECIPIENTS
        if email not in known
    ]
    return recipients


def report_email_message(*, report: WeeklyReport, to: str, language: str) -> EmailMultiAlternatives:
    """The report as an e-mail in `language`: plain text, with the same content as HTML."""
    base = settings.WEEKLY_REPORT_BASE_URL.rstrip("/")
    with translation.override(language):
        context = {
            "report": report,
            "page": selectors.report_week_page(data=report.data, language=language),
            "url": base + report.get_absolute_url(),
            "base_url": base,
        }
        subject = " ".join(
            render_to_string("reports/email/weekly_report_subject.txt", context).split()
        )
        text = render_to_string("reports/email/weekly_report.txt", context)
        html = render_to_string("reports/email/weekly_report.html", context)
    message = EmailMultiAlternatives(subject, text, to=[to])
    message.attach_alternative(html, "text/html")
    return message


def report_week_mail(*, report: WeeklyReport, force: bool = False) -> int:
    """Mail the report to the leads; returns how many messages went out.

    Once per report unless `force`: the e-mail stamp is claimed with a conditional UPDATE
    before sending, so a repeated beat run or a redelivered task does not mail twice. A failed
    send gives the claim back, so that the next attempt mails."""
    now = timezone.now()
    rows = WeeklyReport.objects.filter(pk=report.pk)
    previous = report.emailed_at
    if not rows.filter(**({} if force else {"emailed_at__isnull": True})).update(emailed_at=now):
        return 0
    try:
        messages = [
            report_email_message(report=report, to=recipient.email, language=recipient.language)
            for recipient in report_recipients()
        ]
        sent = get_connection().send_messages(messages) if messages else 0
    except Exception:
        rows.filter(emailed_at=now).update(emailed_at=previous)
        raise
    report.emailed_at = now
    return sent or 0


def report_week_publish(
    *, week_start: date | None = None, mail: bool = True, force_mail: bool = False
) -> WeeklyReport:
    """Build (or rebuild) a week — by default the one that just ended — and mail it once."""
    report = report_week_build(week_start=week_start or week_last_completed())
    if mail and settings.WEEKLY_REPORT_EMAIL:
        report_week_mail(report=report, force=force_mail)
    return report


def report_week_review(*, report: WeeklyReport, user, notes: str) -> WeeklyReport:
    """A lead marks the week reviewed, with notes; reviewing again updates who, when and notes."""
    if not can_review_reports(user):
        raise PermissionDenied(_("Only a lead may mark a week reviewed."))
    report.reviewed_by, report.reviewed_at, report.review_notes = (
        user,
        timezone.now(),
        without_secrets(notes.strip()),
    )
    report.full_clean(exclude=["data"])
    report.save(update_fields=["reviewed_by", "reviewed_at", "review_notes"])
    return report
