"""Celery tasks: thin adapters that take an id and call a service."""

from celery import shared_task
from django.utils.translation import gettext as _

from common.database_errors import DATABASE_ERRORS


def _analysis_run_failure(self, exc, task_id, args, kwargs, einfo):
    from incidents.services.analysis import analysis_fail

    if isinstance(exc, DATABASE_ERRORS):
        return  # an outage outlasted the retries: the tail waits, queued, for the sweep
    analysis_fail(
        analysis_id=args[0], message=_("The analysis could not finish: %(error)s") % {"error": exc}
    )


@shared_task(
    bind=True,
    acks_late=True,
    autoretry_for=DATABASE_ERRORS,
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=10,
    on_failure=_analysis_run_failure,
)
def analysis_run(self, analysis_id: int) -> None:
    # A database error is retried by autoretry_for; the service has given its claim back.
    from incidents.services.analysis import analysis_run as run

    run(analysis_id=analysis_id)


@shared_task
def analysis_sweep() -> dict:
    from incidents.services.analysis import analysis_sweep as sweep

    result = sweep()
    return {"requeued": result.requeued, "failed": result.failed}


@shared_task(soft_time_limit=600, time_limit=660)  # up to a thousand stored tails
def analyses_rescore() -> dict:
    from incidents.services.analysis import analyses_rescore as rescore

    result = rescore()
    return {"rescored": result.rescored, "newly_explained": result.newly_explained}
