"""Celery tasks: thin adapters over reports.services."""

from celery import shared_task

from common.database_errors import DATABASE_ERRORS


# A build at 100k incidents takes seconds, and SMTP may be slow: more than the default limits.
@shared_task(
    autoretry_for=DATABASE_ERRORS,
    retry_backoff=True,
    max_retries=3,
    soft_time_limit=600,
    time_limit=660,
)
def report_week_publish(week: str | None = None) -> str:
    """The beat entry: build the week that just ended (or `week`, "2026-W48") and mail it."""
    from common.weeks import week_parse
    from reports.services import report_week_publish as publish

    return publish(week_start=week_parse(week) if week else None).week
