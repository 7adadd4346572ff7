from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from incidents.seeding import catalog_seed


class Command(BaseCommand):
    help = (
        "Load the starter knowledge base, or follow a newer one (idempotent; never overwrites "
        "an incident or signature a person has edited)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--language",
            default=settings.LANGUAGE_CODE,
            help="Language the incidents are written in (en or zh-hans); default: the site's.",
        )

    def handle(self, *args, language, **options):
        if language not in dict(settings.LANGUAGES):
            raise CommandError(
                f"Unknown language {language!r}: use one of {dict(settings.LANGUAGES)}."
            )
        result = catalog_seed(language=language)
        self.stdout.write(
            f"catalog: {result.created} created, {result.updated} updated, "
            f"{result.unchanged} unchanged, {len(result.kept_edited)} kept as edited; "
            f"signatures: {result.signatures_created} added, {result.signatures_updated} updated, "
            f"{result.signatures_retired} retired, "
            f"{len(result.signatures_kept_edited)} kept as edited"
        )
        for problem in result.signatures_refused:
            self.stderr.write(f"signature refused: {problem}")
