"""Recompute the rollups that the matrix and the weekly report read, from scratch."""

import time

from django.core.management.base import BaseCommand

from incidents.models import IncidentDay, WindowTotal
from incidents.services.rollups_build import rollups_rebuild


class Command(BaseCommand):
    help = (
        "Recompute the matrix and weekly-report rollups from the recurrences, analyses, "
        "feedback and incidents (after a bulk load or a restore)."
    )

    def handle(self, *args, **options):
        started = time.perf_counter()
        rollups_rebuild()
        self.stdout.write(
            f"{IncidentDay.objects.count()} incident-days, "
            f"{WindowTotal.objects.count()} window totals "
            f"in {time.perf_counter() - started:.1f} s"
        )
