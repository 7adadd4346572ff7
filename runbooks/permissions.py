"""Who may read and change runbooks and checklist runs. Views and the API ask here, nowhere else."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from accounts.roles import is_lead
from runbooks.models import ChecklistRun, Runbook


def can_edit_runbook(user) -> bool:
    return is_lead(user)


def can_change_run(user, run: ChecklistRun) -> bool:
    """The person who started a run, or a lead, ticks it (until it is finished: see services)."""
    if not user.is_authenticated:
        return False
    return run.started_by_id == user.pk or is_lead(user)


def runbook_get_for_user(user, slug: str, *, for_edit: bool = False) -> Runbook:
    runbook = get_object_or_404(Runbook, slug=slug)
    if for_edit and not can_edit_runbook(user):
        raise PermissionDenied(_("Only a lead may edit a runbook."))
    return runbook


def checklist_run_get_for_user(user, pk: int, *, for_change: bool = False) -> ChecklistRun:
    run = get_object_or_404(ChecklistRun.objects.select_related("runbook", "started_by"), pk=pk)
    if for_change and not can_change_run(user, run):
        raise PermissionDenied(_("Only the person who started this run, or a lead, may change it."))
    return run
