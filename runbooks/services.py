"""Writes to runbooks and checklist runs. Every change goes through one of these functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from common.history import history_note
from common.weeks import week_label_of_moment
from incidents.logmatch import without_secrets
from runbooks.models import STEP_KEYS, TEXT_FIELDS, ChecklistRun, Runbook

CLASSIFICATION_FIELDS = ("kind", "stage", "discipline", "calculator")


def steps_normalize(steps: Iterable[Mapping[str, str]]) -> list[dict[str, str]]:
    """Steps as stored: the three keys in order, surrounding blank lines of a command dropped."""
    return [
        {
            "text": without_secrets(step.get("text", "").strip()),
            "command": without_secrets(step.get("command", "").strip("\n").rstrip()),
            "expected": without_secrets(step.get("expected", "").strip()),
        }
        for step in steps
    ]


@transaction.atomic
def runbook_update(
    *,
    runbook: Runbook,
    data: Mapping[str, Any],
    language: str,
    actor,
    revision: datetime | None = None,
) -> Runbook:
    """Apply a lead's edit of the runbook as shown in `language`.

    The text in `data` replaces what that language showed. When it differs, the edited
    language becomes the one the runbook is written in and other translations are dropped.
    A save that changes nothing leaves the runbook as it was (still following the catalog).
    `revision` is the `updated_at` the editor loaded: a save on top of someone else's newer
    save is refused rather than silently undoing it.
    """
    runbook = Runbook.objects.select_for_update().get(pk=runbook.pk)
    if revision is not None and runbook.updated_at != revision:
        raise ValidationError(
            _(
                "Someone else saved this runbook while you were editing it. "
                "Reload the page to see their change, then make yours again."
            ),
            code="stale",
        )
    shown = runbook.text(language)
    before = {
        "title": shown.title,
        "summary": shown.summary,
        "steps": steps_normalize(
            {key: getattr(step, key) for key in STEP_KEYS} for step in shown.steps
        ),
    }
    after = {name: data[name] for name in TEXT_FIELDS if name in data}
    for name in ("title", "summary"):
        if name in after:
            after[name] = without_secrets(after[name])
    if "steps" in after:
        after["steps"] = steps_normalize(after["steps"])
    text_changed = any(after[name] != before[name] for name in after)
    classification = {name: data[name] or "" for name in CLASSIFICATION_FIELDS if name in data}
    if not text_changed and all(getattr(runbook, k) == v for k, v in classification.items()):
        return runbook  # saved as loaded: still the catalog's, still translated
    if text_changed:
        for name in TEXT_FIELDS:
            setattr(runbook, name, after.get(name, before[name]))
        runbook.language = shown.language
    for name, value in classification.items():
        setattr(runbook, name, value)
    runbook.mark_edited(text_changed=text_changed)
    runbook.full_clean()
    history_note(runbook, by=actor, reason=gettext_noop("edited"))
    runbook.save()
    return runbook


def _open_run(*, runbook: Runbook, user, week: str) -> ChecklistRun | None:
    return ChecklistRun.objects.filter(
        runbook=runbook, started_by=user, finished_at__isnull=True, iso_week=week
    ).first()


def checklist_run_start(*, runbook: Runbook, user, now: datetime | None = None) -> ChecklistRun:
    """Start a run of `runbook` for `user`, or give back the one they left open this week,
    so that a double click or a second tab does not leave two half-done runs."""
    now = now or timezone.now()
    week = week_label_of_moment(now)
    open_run = _open_run(runbook=runbook, user=user, week=week)
    if open_run is not None:
        return open_run
    run = ChecklistRun(
        runbook=runbook, started_by=user, started_at=now, step_count=len(runbook.steps)
    )
    # The database, not a read before the insert, keeps one open run per week
    # (checklist_run_one_open_per_week): two starts can both read "none open".
    run.full_clean(validate_constraints=False)
    try:
        with transaction.atomic():  # a savepoint: the caller's transaction survives a loss
            run.save()
    except IntegrityError:
        open_run = _open_run(runbook=runbook, user=user, week=week)
        if open_run is None:
            raise
        return open_run  # the other start inserted first
    return run


def checklist_run_update(
    *,
    run: ChecklistRun,
    ticked: Iterable[int],
    step_notes: Mapping[int, str],
    note: str,
    finish: bool = False,
    now: datetime | None = None,
) -> ChecklistRun:
    """Record the ticks and notes of a run; `finish` closes it, after which it cannot change."""
    with transaction.atomic():
        run = ChecklistRun.objects.select_for_update().get(pk=run.pk)
        if run.finished:
            raise ValidationError(
                _("This run is finished; it can no longer change."), code="finished"
            )
        run.ticked = sorted(set(ticked))
        run.step_notes = {
            str(index): without_secrets(text.strip())
            for index, text in step_notes.items()
            if text.strip()
        }
        run.note = without_secrets(note.strip())
        if finish:
            run.finished_at = now or timezone.now()
        run.full_clean()
        run.save()
    return run
