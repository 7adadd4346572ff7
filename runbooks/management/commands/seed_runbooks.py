from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from runbooks.seeding import runbook_catalog_seed


class Command(BaseCommand):
    help = "Load the shipped runbooks (idempotent; never overwrites a runbook a lead edited)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--language",
            default=settings.LANGUAGE_CODE,
            help="Language the runbooks are written in (en or zh-hans); default: the site's.",
        )

    def handle(self, *args, language, **options):
        if language not in dict(settings.LANGUAGES):
            raise CommandError(
                f"Unknown language {language!r}: use one of {', '.join(dict(settings.LANGUAGES))}."
            )
        result = runbook_catalog_seed(language=language)
        self.stdout.write(
            f"runbooks: {result.created} created, {result.updated} updated, "
            f"{result.unchanged} unchanged, {len(result.kept_edited)} kept as edited"
        )
        for slug in result.kept_edited:
            self.stdout.write(f"kept as edited: {slug}")
