from django.core.management.base import BaseCommand, CommandError

from common.weeks import week_parse
from reports.services import ReportRefused, report_week_publish


class Command(BaseCommand):
    help = (
        "Build (or rebuild) the weekly report of an ISO week; by default the week that just "
        "ended. The same service as the Monday beat entry; --email mails it to the leads."
    )

    def add_arguments(self, parser):
        parser.add_argument("--week", help="ISO week such as 2026-W48 (default: last week).")
        parser.add_argument(
            "--email",
            action="store_true",
            help="Mail the report to the leads now, even if it was mailed before.",
        )

    def handle(self, *args, week, email, **options):
        try:
            week_start = week_parse(week) if week else None
            report = report_week_publish(week_start=week_start, mail=email, force_mail=email)
        except (ValueError, ReportRefused) as error:
            raise CommandError(str(error)) from error
        data = report.data["analyses"]
        share = "—" if data["explained_share"] is None else f"{data['explained_share']:.0%}"
        self.stdout.write(
            f"{report.week}: {data['submitted']} analyses, {share} explained, "
            f"{report.data['new_incidents']['count']} new incidents, "
            f"{report.data['recurrences']['count']} recurrences; built in {report.build_ms} ms"
            + (
                f"; mailed {report.emailed_at:%Y-%m-%d %H:%M}"
                if email and report.emailed_at
                else ""
            )
        )
