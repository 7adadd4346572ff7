"""Celery tasks: thin adapters that take an id and call a service."""

from celery import shared_task
from django.utils.translation import gettext as _

from common.database_errors import DATABASE_ERRORS
from incidents.webhooks import WebhookFailed


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

    run(analysis_id=analysis_id, task_id=self.request.id or "")


@shared_task
def analysis_sweep() -> dict:
    from incidents.services.sweep import analysis_sweep as sweep

    result = sweep()
    return {"requeued": result.requeued, "failed": result.failed}


@shared_task(autoretry_for=DATABASE_ERRORS, retry_backoff=True, max_retries=5)
def analyses_rescore(analysis_ids: list[int] | None = None) -> dict:
    """One batch of re-ranking; the rest of the work goes on as a new task, behind whatever
    else is queued."""
    from incidents.services.rescore import analyses_rescore as rescore

    result = rescore(analysis_ids=analysis_ids)
    if result.remaining:
        analyses_rescore.apply_async((result.remaining,))
    return {"rescored": result.rescored, "reranked": result.reranked, "left": len(result.remaining)}


def _webhook_send_failure(self, exc, task_id, args, kwargs, einfo):
    from incidents.services.webhooks import webhook_record_failure

    webhook_record_failure(
        webhook_id=args[0], message=_("Gave up after retries: %(error)s") % {"error": exc}
    )


@shared_task(
    bind=True,
    autoretry_for=(WebhookFailed, *DATABASE_ERRORS),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
    on_failure=_webhook_send_failure,
)
def webhook_send(self, webhook_id: int, analysis_id: int) -> None:
    """Tell one webhook about one caught failure; a refusal is retried with backoff."""
    from incidents.services.webhooks import webhook_send as send

    send(webhook_id=webhook_id, analysis_id=analysis_id)
