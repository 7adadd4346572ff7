"""Celery beat's schedule file, made to survive an interrupted write.

The persistent scheduler keeps when each entry last ran in a shelve file. A beat killed in
the middle of a write leaves one that raises EOFError on the next start, which Celery does
not catch, so beat would die at every restart. This scheduler starts over with a new file.
"""

from __future__ import annotations

from celery.beat import PersistentScheduler


class Scheduler(PersistentScheduler):
    def setup_schedule(self) -> None:
        try:
            super().setup_schedule()
        except Exception as error:  # whatever the reason the file cannot be read
            self._store = self._destroy_open_corrupted_schedule(error)
            super().setup_schedule()
