"""What a process that forks its workers does first (gunicorn's master, config/gunicorn.py;
Celery's parent, config/celery.py): compile the knowledge, and for the web also load what a
worker's first pages would otherwise pay, then close the database connections, since each
worker opens its own. Returns what it did, for the log."""

from __future__ import annotations


def prepare_to_fork(*, web: bool) -> list[str]:
    from django.db import connections

    from common.warm import web_warm
    from incidents.knowledge import knowledge_warm

    try:
        return [knowledge_warm(), *([web_warm()] if web else [])]
    finally:
        connections.close_all()
