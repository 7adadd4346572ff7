"""Tell the team when `kb run` or `kb watch` caught a failure: one delivery per webhook, by
Celery with retries, after the analysis is stored. A webhook that fails is noted on the
webhook; the analysis never knows."""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext
from kombu.exceptions import KombuError

from common.choices import Stage
from incidents import webhooks
from incidents.models import Analysis, Webhook
from incidents.webhooks import WebhookFailed

log = logging.getLogger(__name__)
REMEDY_LINES = 3


def webhooks_notify(*, analysis: Analysis) -> None:
    """Once the finished analysis is committed, queue a delivery to every enabled webhook."""
    if analysis.caught:
        transaction.on_commit(partial(_enqueue, analysis.pk), robust=True)


def _enqueue(analysis_id: int) -> None:
    from incidents.tasks import webhook_send as webhook_send_task

    for webhook_id in Webhook.objects.filter(enabled=True).values_list("pk", flat=True):
        try:
            webhook_send_task.apply_async((webhook_id, analysis_id), retry=False)
        except (KombuError, OSError) as error:
            log.warning("webhook %s not queued for analysis %s: %s", webhook_id, analysis_id, error)


def webhook_send(*, webhook_id: int, analysis_id: int) -> None:
    """Deliver one analysis to one webhook; raises WebhookFailed for the task to retry."""
    webhook = Webhook.objects.filter(pk=webhook_id, enabled=True).first()
    if webhook is None:
        return
    analysis = Analysis.objects.select_related("top_incident").get(pk=analysis_id)
    with translation.override(webhook.language):
        notice = analysis_notice(analysis)
    url, body = webhook.url, _body(webhook, notice)
    if webhook.format == Webhook.Format.DINGTALK and webhook.secret:
        url = webhooks.dingtalk_signed_url(
            url, secret=webhook.secret, timestamp_ms=int(time.time() * 1000)
        )
    try:
        _post(url, body)
    except WebhookFailed as error:
        Webhook.objects.filter(pk=webhook.pk).update(last_error=str(error)[:2000])
        raise
    Webhook.objects.filter(pk=webhook.pk).update(last_sent_at=timezone.now(), last_error="")


def webhook_record_failure(*, webhook_id: int, message: str) -> None:
    Webhook.objects.filter(pk=webhook_id).update(last_error=message[:2000])


def analysis_notice(analysis: Analysis) -> webhooks.Notice:
    """The failure as the team reads it, in the active language."""
    what = analysis.command or analysis.log_path or gettext("a job")
    if len(what) > 120:
        what = what[:117] + "…"
    title = gettext("%(source)s: %(what)s failed") % {"source": analysis.source, "what": what}
    if analysis.exit_status is not None:
        title += " " + gettext("(exit %(status)s)") % {"status": analysis.exit_status}
    if analysis.host:
        title += " " + gettext("on %(host)s") % {"host": analysis.host}
    if analysis.job_id:
        title += ", " + gettext("job %(job)s") % {"job": analysis.job_id}
    top = analysis.top_incident if analysis.confident else None
    if top is not None:
        text = top.text(translation.get_language())
        verdict = f"{text.title} [{top.slug}]"
        remedy = " / ".join(text.remedy.splitlines()[:REMEDY_LINES])
    else:
        verdict, remedy = gettext("unexplained — a new knowledge gap"), ""
    try:
        stage = str(Stage(analysis.stage).label)
    except ValueError:
        stage = analysis.stage or "—"
    return webhooks.Notice(
        title=title,
        stage=stage,
        verdict=verdict,
        remedy=remedy,
        link=settings.WEEKLY_REPORT_BASE_URL.rstrip("/") + analysis.get_absolute_url(),
        labels={
            "stage": gettext("Stage"),
            "verdict": gettext("Top suggestion"),
            "remedy": gettext("Remedy"),
            "open": gettext("Open the analysis"),
        },
    )


def _body(webhook: Webhook, notice: webhooks.Notice) -> dict:
    if webhook.format == Webhook.Format.FEISHU:
        return webhooks.feishu_payload(notice, secret=webhook.secret, timestamp=int(time.time()))
    if webhook.format == Webhook.Format.DINGTALK:
        return webhooks.dingtalk_payload(notice)
    return webhooks.slack_payload(notice)


def _post(url: str, body: dict) -> None:
    request = urllib.request.Request(
        url,
        data=json.dumps(body, ensure_ascii=False).encode(),
        headers={"Content-Type": "application/json; charset=utf-8"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            answer = response.read(4096)
    except (urllib.error.URLError, OSError) as error:
        raise WebhookFailed(str(getattr(error, "reason", error))) from error
    # Feishu and DingTalk answer 200 with an error code in the body.
    try:
        reply = json.loads(answer)
    except ValueError:
        return
    if isinstance(reply, dict) and (reply.get("code") or reply.get("errcode")):
        raise WebhookFailed(answer.decode("utf-8", "replace"))
