"""Analyses of pasted log tails: accept, run exactly once, store.

Nothing accepted is lost: the row is committed before anything is queued; a worker claims
it with a conditional UPDATE, so a duplicate delivery finds nothing to do. A claim is a
lease: a worker that died loses it when it expires, and the next delivery, or the sweep
(incidents.services.sweep), takes the tail over.
"""

from __future__ import annotations

import logging
import time
from datetime import timedelta
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files import File
from django.db import (
    IntegrityError,
    close_old_connections,
    transaction,
)
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext
from kombu.exceptions import KombuError

from common.database_errors import DATABASE_ERRORS
from common.translation import error_text
from incidents import logmatch
from incidents.knowledge import feedback_map, knowledge_index, signature_pk
from incidents.models import Analysis, AnalysisSuggestion, Incident, Signature
from incidents.services.gaps import gap_note
from incidents.services.origin import JobOrigin
from incidents.services.rollups import (
    rollups_analysis_added,
    rollups_analysis_change,
    rollups_analysis_failed,
)
from incidents.services.webhooks import webhooks_notify

log = logging.getLogger(__name__)
Status = Analysis.Status

# A tail that took down this many workers is marked failed instead of being sent again.
MAX_ATTEMPTS = 3
# How long a worker keeps trying to give back its claim after the database went away.
RELEASE_PATIENCE_SECONDS = 15.0
# What a stored report keeps, whatever was pasted: the page and the API stay small.
STORED = logmatch.Bounds()


class AnalysisRefused(ValueError):
    """A tail we will not analyse, with a message for the person who sent it."""


def _limits() -> logmatch.Limits:
    return logmatch.Limits(max_bytes=settings.ANALYSIS_MAX_BYTES)


def analysis_request(
    *,
    data: bytes | str,
    user,
    log_path: str = "",
    source: str = Analysis.Source.WEB,
    client_key: str = "",
    origin: JobOrigin | None = None,
) -> Analysis:
    """Validate, decode and redact a tail, store it queued, and queue it once committed.

    `data` is the pasted text, the bytes, or an uploaded file: of anything longer than the
    cap, only its last lines within the cap are kept (the end of a log is where it failed).
    A `client_key` this user sent before returns that analysis as it is.
    """
    if client_key:
        existing = Analysis.objects.filter(submitted_by=user, client_key=client_key).first()
        if existing is not None:
            return existing
    data, size = tail_within(data, settings.ANALYSIS_MAX_BYTES)
    try:
        read = logmatch.read_input(data, _limits())
    except logmatch.InputError as error:
        raise AnalysisRefused(error_text(error)) from error
    addresses = settings.REDACT_ADDRESSES
    text, redactions = logmatch.redact("\n".join(read.lines), addresses=addresses)
    path, path_redactions = logmatch.redact(log_path.strip()[:500], addresses=addresses)
    where, where_redactions = (origin or JobOrigin()).redacted(addresses)
    try:
        with transaction.atomic():
            analysis = Analysis.objects.create(
                submitted_by=user,
                source=source,
                client_key=client_key,
                log_path=path,
                text=text,
                size_bytes=size,
                analysed_bytes=len(data) if isinstance(data, bytes) else len(data.encode()),
                encoding=read.encoding,
                invalid_bytes=read.invalid_bytes,
                cut_lines=read.cut_lines,
                redactions=redactions + path_redactions + where_redactions,
                **where,
            )
            rollups_analysis_added(analysis.pk)
    except IntegrityError:  # the same key, sent twice at once: the other request stored it
        return Analysis.objects.get(submitted_by=user, client_key=client_key)
    transaction.on_commit(partial(_enqueue, analysis.pk))
    return analysis


def tail_within(data: bytes | str | File, cap: int) -> tuple[bytes | str, int]:
    """The last whole lines of `data` within `cap` bytes (all of it when it fits), and the
    size of all of it. A file is read from where its tail starts, never whole."""
    if isinstance(data, str):
        encoded = data.encode("utf-8", "surrogatepass")
        if len(encoded) <= cap:
            return data, len(encoded)
        return _from_line_start(encoded[-cap:]).decode("utf-8", "replace"), len(encoded)
    if isinstance(data, bytes):
        return (data, len(data)) if len(data) <= cap else (_from_line_start(data[-cap:]), len(data))
    size = data.size or 0
    data.seek(max(0, size - cap))
    tail = data.read(cap)
    return (tail if size <= cap else _from_line_start(tail)), size


def _from_line_start(tail: bytes) -> bytes:
    """Drop the partial first line of a cut tail (and with it any cut multi-byte character)."""
    newline = tail.find(b"\n")
    return tail[newline + 1 :] if 0 <= newline < len(tail) - 1 else tail


def _enqueue(analysis_id: int) -> None:
    from incidents.tasks import analysis_run as analysis_run_task

    try:
        analysis_run_task.apply_async((analysis_id,), retry=False)
    except (KombuError, OSError) as error:
        # The row stays queued, marked as never sent; the next sweep sends it again.
        Analysis.objects.filter(pk=analysis_id).update(queued_at=None)
        log.warning("analysis %s stays queued: broker unreachable (%s)", analysis_id, error)


def analysis_run(*, analysis_id: int, task_id: str = "") -> None:
    """Run one queued analysis, or take over one whose worker died: its claim expired, or
    `task_id` (this delivery's message) is the one the dead worker held. Safe to call twice:
    a call that finds the analysis done, or claimed by a live worker, returns at once."""
    attempt = _claim(analysis_id, task_id)
    if attempt is None:
        return
    try:
        analysis = Analysis.objects.get(pk=analysis_id)
        try:
            report = analyze_stored(analysis, knowledge_index(), feedback_map())
        except logmatch.InputError as error:
            _finish_failed(analysis_id, attempt, error_text(error))
            return
        except SoftTimeLimitExceeded:
            _finish_failed(
                analysis_id,
                attempt,
                gettext("The analysis took too long and was stopped; paste fewer lines."),
            )
            return
        analysis_store(analysis, report, attempt=attempt)
    except DATABASE_ERRORS:
        # The database went away under us (a restart, a killed backend). The caller retries;
        # its retry can only claim the row if we give it back first.
        _release_after_database_error(analysis_id, attempt)
        raise


def analysis_release(*, analysis_id: int) -> None:
    """Give a claimed analysis back to the queue (a transient error; the task will retry)."""
    Analysis.objects.filter(pk=analysis_id, status=Status.RUNNING).update(status=Status.QUEUED)


def _release_after_database_error(analysis_id: int, attempt: int) -> None:
    """Give our claim back, on a new connection, without counting the attempt against the tail.

    The connection that failed is dead for good (Django reconnects only once it is closed), and
    the database may still be restarting: keep trying for a while. If it never comes back, the
    row stays running and the sweep sends it again later.
    """
    deadline = time.monotonic() + RELEASE_PATIENCE_SECONDS
    while True:
        close_old_connections()  # drops a connection that is no longer usable
        try:
            Analysis.objects.filter(pk=analysis_id, status=Status.RUNNING, attempts=attempt).update(
                status=Status.QUEUED, attempts=F("attempts") - 1
            )
            return
        except DATABASE_ERRORS as error:
            if time.monotonic() > deadline:
                log.warning("analysis %s stays running until the sweep: %s", analysis_id, error)
                return
            time.sleep(0.5)


def analysis_fail(*, analysis_id: int, message: str) -> None:
    """Give up on an analysis that no worker holds: queued, or stuck in a dead worker's claim.

    A row another worker is running is left alone: that worker's result wins.
    """
    with transaction.atomic():
        if Analysis.objects.filter(pk=analysis_id, status=Status.QUEUED).update(
            status=Status.FAILED, error=message[:2000], finished_at=timezone.now()
        ):
            rollups_analysis_failed(analysis_id)


def claim_seconds() -> int:
    """How long a claim lasts: past the hard time limit, its worker is dead, not busy."""
    return settings.CELERY_TASK_TIME_LIMIT + settings.ANALYSIS_CLAIM_GRACE_SECONDS


def _claim(analysis_id: int, task_id: str) -> int | None:
    """The attempt this call now owns, or None. A queued tail is claimed; so is a running
    one whose worker died (its claim expired, or this is the dead worker's own message back),
    while it has attempts left; with none left, the tail is given up."""
    # A conditional UPDATE rather than SELECT … FOR UPDATE: SQLite, the embedded default,
    # has no row locks. Whoever flips the row to running owns this attempt.
    now = timezone.now()
    dead = Q(claim_expires_at__lt=now) | (Q(claim_task_id=task_id) & ~Q(claim_task_id=""))
    with transaction.atomic():
        claimed = Analysis.objects.filter(
            Q(status=Status.QUEUED) | (Q(status=Status.RUNNING, attempts__lt=MAX_ATTEMPTS) & dead),
            pk=analysis_id,
        ).update(
            status=Status.RUNNING,
            started_at=now,
            claim_expires_at=now + timedelta(seconds=claim_seconds()),
            claim_task_id=task_id,
            attempts=F("attempts") + 1,
        )
        if claimed:
            return Analysis.objects.values_list("attempts", flat=True).get(pk=analysis_id)
    analysis_give_up_if_spent(analysis_id=analysis_id, dead=dead)
    return None


def analysis_give_up_if_spent(*, analysis_id: int, dead: Q | None = None) -> bool:
    """Fail a tail whose worker died on its last attempt: it took down a worker every time
    it ran, so it is not sent again. True when it was given up."""
    dead = dead if dead is not None else Q(claim_expires_at__lt=timezone.now())
    with transaction.atomic():
        given_up = Analysis.objects.filter(
            dead, pk=analysis_id, status=Status.RUNNING, attempts__gte=MAX_ATTEMPTS
        ).update(
            status=Status.FAILED,
            error=gettext("The analysis stopped its worker %(n)d times and was given up.")
            % {"n": MAX_ATTEMPTS},
            finished_at=timezone.now(),
            claim_expires_at=None,
        )
        if given_up:
            rollups_analysis_failed(analysis_id)
    return bool(given_up)


def analyze_stored(
    analysis: Analysis, index: logmatch.KnowledgeIndex, feedback: dict
) -> logmatch.Report:
    """Run the engine on a stored tail (already read, cut and redacted when it came in)."""
    return logmatch.analyze(
        analysis.text,
        index,
        log_path=analysis.log_path or None,
        feedback=feedback,
        limits=_limits(),
        redacted=True,  # when it came in
    )


def _finish_failed(analysis_id: int, attempt: int, message: str) -> None:
    with transaction.atomic():
        if Analysis.objects.filter(pk=analysis_id, status=Status.RUNNING, attempts=attempt).update(
            status=Status.FAILED, error=message[:2000], finished_at=timezone.now()
        ):
            rollups_analysis_failed(analysis_id)


def analysis_store(
    analysis: Analysis,
    report: logmatch.Report,
    *,
    attempt: int | None,
    reranked_from: str | None = None,
) -> bool:
    """Store a report: a worker's, only while its claim (`attempt`) still owns the row; a
    re-ranking's (no attempt), only over a finished analysis, noting when the first
    suggestion changed from `reranked_from` (a slug, "" for none)."""
    slugs = [suggestion.slug for suggestion in report.suggestions]
    incidents = Incident.objects.in_bulk(slugs, field_name="slug")
    top = incidents.get(slugs[0]) if slugs and report.confident else None
    when = _stamps(attempt=attempt, reranked_from=reranked_from, top=top)
    with transaction.atomic():
        rows = Analysis.objects.filter(pk=analysis.pk)
        # Locked first: what the matrix counted of it before is what it counts now.
        rows.select_for_update().values_list("pk").first()
        if attempt:
            rows = rows.filter(status=Status.RUNNING, attempts=attempt)
        else:
            rows = rows.filter(status=Status.DONE)
        stored_report = _report_dict(analysis, report)
        with rollups_analysis_change(analysis.pk):
            stored = rows.update(
                status=Status.DONE,
                report=stored_report,
                flooded=bool(stored_report.get("floods")),
                stage=report.stage or "",
                confident=report.confident,
                top_incident=top,
                key_template=report.key_template,
                error="",
                claim_expires_at=None,
                **when,
            )
        if not stored:
            return False  # a newer claim owns this analysis now
        _suggestions_replace(analysis, report, incidents)
        gap = gap_note(analysis, report)
        Analysis.objects.filter(pk=analysis.pk).update(gap=gap)
        if attempt:
            _count_signature_hits(report)
            webhooks_notify(analysis=analysis)
    return True


def _stamps(*, attempt: int | None, reranked_from: str | None, top: Incident | None) -> dict:
    """When a worker finished, or when a re-ranking changed the first suggestion."""
    if attempt:
        return {"finished_at": timezone.now()}
    if reranked_from is not None and reranked_from != (top.slug if top else ""):
        return {"reranked_at": timezone.now(), "reranked_from": reranked_from}
    return {}  # ranked again, the same first suggestion: nothing to say


def _suggestions_replace(
    analysis: Analysis, report: logmatch.Report, incidents: dict[str, Incident]
) -> None:
    AnalysisSuggestion.objects.filter(analysis=analysis).delete()
    AnalysisSuggestion.objects.bulk_create(
        AnalysisSuggestion(
            analysis=analysis,
            incident=incidents[suggestion.slug],
            rank=rank,
            score=suggestion.score,
            confident=suggestion.confident,
            evidence=[
                {"line": e.line, "text": e.text, "kind": e.kind} for e in suggestion.evidence
            ],
            why=suggestion.why,
        )
        for rank, suggestion in enumerate(report.suggestions, start=1)
        if suggestion.slug in incidents
    )


def _report_dict(analysis: Analysis, report: logmatch.Report) -> dict:
    """The bounded report, with what reading the tail found when it came in (the engine
    re-reads the stored text, already decoded and cut)."""
    return {
        **logmatch.report_as_dict(report, STORED),
        "encoding": analysis.encoding,
        "invalid_bytes": analysis.invalid_bytes,
        "cut_lines": analysis.cut_lines,
        "redactions": analysis.redactions,
    }


def _count_signature_hits(report: logmatch.Report) -> None:
    keys = {
        pk
        for suggestion in report.suggestions
        if suggestion.confident
        for evidence in suggestion.evidence
        if evidence.signature and (pk := signature_pk(evidence.signature)) is not None
    }
    if keys:
        Signature.objects.filter(pk__in=keys).update(
            hit_count=F("hit_count") + 1, last_hit_at=timezone.now()
        )
