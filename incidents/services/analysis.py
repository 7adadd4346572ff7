"""Analyses of pasted log tails: accept, run exactly once, store, learn from feedback.

Nothing accepted is lost: the row is committed before anything is queued; a worker claims
it with a conditional UPDATE, so a duplicate delivery finds nothing to do; the sweep sends
again whatever a dead worker or an unreachable broker left behind.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
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
from incidents.knowledge import feedback_map, knowledge_index, knowledge_version
from incidents.models import (
    Analysis,
    AnalysisSuggestion,
    Feedback,
    Incident,
    KnowledgeGap,
    KnowledgeRescore,
    Signature,
)
from incidents.services.incident import incident_record_recurrence

log = logging.getLogger(__name__)
Status = Analysis.Status

# A tail that took down this many workers is marked failed instead of being sent again.
MAX_ATTEMPTS = 3
# A queued row that was handed to the broker is sent again only after this long (a backlog is
# not a loss); one that could not be handed over (queued_at empty) goes with the next sweep.
QUEUED_GRACE = timedelta(minutes=10)
# How long a worker keeps trying to give back its claim after the database went away.
RELEASE_PATIENCE_SECONDS = 15.0
RESCORE_WINDOW = timedelta(days=30)
RESCORE_LIMIT = 1000


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
) -> Analysis:
    """Validate, decode and redact a tail, store it queued, and queue it once committed."""
    try:
        read = logmatch.read_input(data, _limits())
    except logmatch.InputError as error:
        raise AnalysisRefused(error_text(error)) from error
    text, redactions = logmatch.redact("\n".join(read.lines))
    with transaction.atomic():
        analysis = Analysis.objects.create(
            submitted_by=user,
            source=source,
            log_path=log_path.strip()[:500],
            text=text,
            size_bytes=len(data.encode("utf-8", "replace")) if isinstance(data, str) else len(data),
            redactions=redactions,
        )
        transaction.on_commit(partial(_enqueue, analysis.pk))
    return analysis


def _enqueue(analysis_id: int) -> None:
    from incidents.tasks import analysis_run as analysis_run_task

    try:
        analysis_run_task.apply_async((analysis_id,), retry=False)
    except (KombuError, OSError) as error:
        # The row stays queued, marked as never sent; the next sweep sends it again.
        Analysis.objects.filter(pk=analysis_id).update(queued_at=None)
        log.warning("analysis %s stays queued: broker unreachable (%s)", analysis_id, error)


def analysis_run(*, analysis_id: int) -> None:
    """Run one queued analysis. Safe to call twice: a second call returns at once."""
    attempt = _claim(analysis_id)
    if attempt is None:
        return
    try:
        analysis = Analysis.objects.get(pk=analysis_id)
        try:
            report = _analyze(analysis, knowledge_index(), feedback_map())
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
        _store(analysis, report, attempt=attempt)
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
    Analysis.objects.filter(pk=analysis_id, status=Status.QUEUED).update(
        status=Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )


def _claim(analysis_id: int) -> int | None:
    # A conditional UPDATE rather than SELECT … FOR UPDATE: SQLite, the embedded default,
    # has no row locks. Whoever flips queued→running owns this attempt.
    with transaction.atomic():
        claimed = Analysis.objects.filter(pk=analysis_id, status=Status.QUEUED).update(
            status=Status.RUNNING, started_at=timezone.now(), attempts=F("attempts") + 1
        )
        if not claimed:
            return None
        return Analysis.objects.values_list("attempts", flat=True).get(pk=analysis_id)


def _analyze(analysis: Analysis, index: logmatch.KnowledgeIndex, feedback: dict) -> logmatch.Report:
    return logmatch.analyze(
        analysis.text,
        index,
        log_path=analysis.log_path or None,
        feedback=feedback,
        limits=_limits(),
    )


def _finish_failed(analysis_id: int, attempt: int, message: str) -> None:
    Analysis.objects.filter(pk=analysis_id, status=Status.RUNNING, attempts=attempt).update(
        status=Status.FAILED, error=message[:2000], finished_at=timezone.now()
    )


def _store(analysis: Analysis, report: logmatch.Report, *, attempt: int | None) -> bool:
    """Store a report. With an attempt, only while that claim still owns the row."""
    slugs = [suggestion.slug for suggestion in report.suggestions]
    incidents = Incident.objects.in_bulk(slugs, field_name="slug")
    top = incidents.get(slugs[0]) if slugs else None
    with transaction.atomic():
        rows = Analysis.objects.filter(pk=analysis.pk)
        rows = rows.filter(status=Status.RUNNING, attempts=attempt) if attempt else rows
        stored = rows.update(
            status=Status.DONE,
            report=logmatch.report_as_dict(report),
            stage=report.stage or "",
            confident=report.confident,
            top_incident=top if report.confident else None,
            key_template=report.key_template,
            error="",
            # A re-ranking keeps the time the analysis first finished.
            **({"finished_at": timezone.now()} if attempt else {}),
        )
        if not stored:
            return False  # a newer claim owns this analysis now
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
        gap = _gap_note(analysis, report)
        Analysis.objects.filter(pk=analysis.pk).update(gap=gap)
        if attempt:
            _count_signature_hits(report)
    return True


def _gap_key(template: str) -> str:
    return hashlib.sha256(template.encode()).hexdigest()


def _gap_note(analysis: Analysis, report: logmatch.Report) -> KnowledgeGap | None:
    """An unexplained tail joins the gap of its key template; an explained one closes it."""
    if not report.key_template:
        return None
    key = _gap_key(report.key_template)
    now = timezone.now()
    if report.confident:
        KnowledgeGap.objects.filter(key_hash=key, explained_at__isnull=True).update(
            explained_at=now
        )
        return analysis.gap
    line = report.key_line.text if report.key_line else report.key_template
    try:
        with transaction.atomic():
            gap, created = KnowledgeGap.objects.get_or_create(
                key_hash=key,
                defaults={
                    "key_template": report.key_template,
                    "example_line": line,
                    "stage": report.stage or "",
                    "analysis_count": 1,
                },
            )
    except IntegrityError:  # another worker created it a moment ago
        gap, created = KnowledgeGap.objects.get(key_hash=key), False
    if not created and analysis.gap_id != gap.pk:
        KnowledgeGap.objects.filter(pk=gap.pk).update(
            analysis_count=F("analysis_count") + 1,
            last_seen=now,
            explained_at=None,
            example_line=line,
            stage=report.stage or gap.stage,
        )
    return gap


def _count_signature_hits(report: logmatch.Report) -> None:
    keys = {
        int(evidence.signature)
        for suggestion in report.suggestions
        if suggestion.confident
        for evidence in suggestion.evidence
        if evidence.signature and evidence.signature.isdigit()
    }
    if keys:
        Signature.objects.filter(pk__in=keys).update(
            hit_count=F("hit_count") + 1, last_hit_at=timezone.now()
        )


@dataclass
class SweepResult:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def analysis_sweep() -> SweepResult:
    """Send again what a dead worker or an unreachable broker left behind."""
    now = timezone.now()
    result = SweepResult()
    stuck = now - timedelta(seconds=settings.ANALYSIS_STUCK_AFTER_SECONDS)
    abandoned = Analysis.objects.filter(status=Status.RUNNING, started_at__lt=stuck)
    for analysis_id, attempts in abandoned.values_list("pk", "attempts"):
        if attempts >= MAX_ATTEMPTS:
            _finish_failed(
                analysis_id,
                attempts,
                gettext("The analysis stopped its worker %(n)d times and was given up.")
                % {"n": attempts},
            )
            result.failed.append(analysis_id)
        else:
            analysis_release(analysis_id=analysis_id)
            result.requeued.append(analysis_id)
    waiting = Analysis.objects.filter(status=Status.QUEUED).filter(
        Q(queued_at__isnull=True) | Q(queued_at__lt=now - QUEUED_GRACE)
    )
    result.requeued.extend(
        pk for pk in waiting.values_list("pk", flat=True) if pk not in result.requeued
    )
    Analysis.objects.filter(pk__in=result.requeued).update(queued_at=now)
    for analysis_id in result.requeued:
        _enqueue(analysis_id)
    return result


@dataclass
class RescoreResult:
    rescored: int = 0
    newly_explained: list[int] = field(default_factory=list)  # KnowledgeGap ids


def analyses_rescore() -> RescoreResult:
    """Rank recent analyses again against today's knowledge; report the gaps now explained.

    Does nothing when they were already ranked against this version of the knowledge.
    """
    result = RescoreResult()
    version = knowledge_version()
    if KnowledgeRescore.objects.filter(pk=1, version=version).exists():
        return result
    open_gaps = set(
        KnowledgeGap.objects.filter(explained_at__isnull=True).values_list("pk", flat=True)
    )
    index, feedback = knowledge_index(), feedback_map()
    recent = (
        Analysis.objects.filter(status=Status.DONE, created_at__gte=timezone.now() - RESCORE_WINDOW)
        .defer("report")
        .order_by("-created_at")[:RESCORE_LIMIT]
    )
    for analysis in recent.iterator(chunk_size=50):
        try:
            report = _analyze(analysis, index, feedback)
        except logmatch.InputError:
            continue
        if _store(analysis, report, attempt=None):
            result.rescored += 1
    still_open = set(
        KnowledgeGap.objects.filter(explained_at__isnull=True).values_list("pk", flat=True)
    )
    result.newly_explained = sorted(open_gaps - still_open)
    KnowledgeRescore.objects.update_or_create(
        pk=1, defaults={"version": version, "rescored_at": timezone.now()}
    )
    return result


class FeedbackRefused(ValueError):
    """Feedback on an incident that this analysis did not suggest."""


def analysis_feedback(*, analysis: Analysis, incident: Incident, user, verdict: str) -> Feedback:
    """Record "this fixed it" (a recurrence of the incident) or "not it" (lowers the pairing)."""
    if (
        analysis.status != Status.DONE
        or not analysis.suggestions.filter(incident=incident).exists()
    ):
        raise FeedbackRefused(gettext("That incident was not suggested for this log."))
    with transaction.atomic():
        feedback, _ = Feedback.objects.update_or_create(
            analysis=analysis,
            incident=incident,
            user=user,
            defaults={"verdict": verdict, "key_template": analysis.key_template},
        )
        if verdict == Feedback.Verdict.FIXED and feedback.recurrence_id is None:
            feedback.recurrence = incident_record_recurrence(
                incident=incident,
                reported_by=user,
                note=gettext("Confirmed by analysis #%(n)s") % {"n": analysis.pk},
            )
            feedback.save(update_fields=["recurrence"])
        elif verdict == Feedback.Verdict.NOT_IT and feedback.recurrence is not None:
            feedback.recurrence.delete()
            Incident.objects.filter(pk=incident.pk, recurrence_count__gt=0).update(
                recurrence_count=F("recurrence_count") - 1
            )
            feedback.recurrence = None
            feedback.save(update_fields=["recurrence"])
    return feedback
