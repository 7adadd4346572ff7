from datetime import date

from django.core.management.base import BaseCommand, CommandError

from reports.demo import demo_clear, demo_generate
from reports.services import report_week_build


class Command(BaseCommand):
    help = (
        "Fill a realistic history for demos, screenshots and benchmarks: weeks of incidents, "
        "recurrences, analyses explained and not, gaps and feedback. Deterministic with --seed "
        "(and --today). Running it again replaces what the last run added; --remove takes it "
        "out. Incidents people filed are never touched, nor is the catalog incidents' text."
    )

    def add_arguments(self, parser):
        parser.add_argument("--incidents", type=int, default=300, help="Demo incidents to add.")
        parser.add_argument(
            "--weeks", type=int, default=16, help="Weeks of history, before this one."
        )
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--recurrences", type=int, help="Default: 3 per incident.")
        parser.add_argument("--analyses", type=int, help="Default: 7 per incident.")
        parser.add_argument(
            "--today", type=date.fromisoformat, help="Pin the calendar (YYYY-MM-DD)."
        )
        parser.add_argument("--batch-size", type=int, default=5000)
        parser.add_argument(
            "--remove", action="store_true", help="Only remove the demo data, add nothing."
        )
        parser.add_argument(
            "--no-suggestions", action="store_true", help="Skip suggestion rows (faster at scale)."
        )
        parser.add_argument(
            "--no-reports", action="store_true", help="Do not build the weekly reports afterwards."
        )

    def handle(self, *args, **options):
        if options["remove"]:
            demo_clear()
            self.stdout.write("removed the demo data")
            return
        if options["incidents"] < 0 or options["weeks"] < 1:
            raise CommandError("--incidents must be 0 or more and --weeks at least 1.")
        result = demo_generate(
            incidents=options["incidents"],
            weeks=options["weeks"],
            seed=options["seed"],
            recurrences=options["recurrences"],
            analyses=options["analyses"],
            today=options["today"],
            suggestions=not options["no_suggestions"],
            batch_size=options["batch_size"],
            log=lambda message: self.stdout.write(f"  {message}"),
        )
        self.stdout.write(
            f"added {result.incidents} incidents, {result.recurrences} recurrences, "
            f"{result.analyses} analyses, {result.feedback} feedback, {result.signatures} "
            f"signatures, {result.gaps} gaps in {result.seconds:.1f} s"
        )
        if not options["no_reports"]:
            for week_start in result.weeks:
                report = report_week_build(week_start=week_start)
                self.stdout.write(f"  report {report.week} built in {report.build_ms} ms")
