from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.htmx import htmx_partial
from runbooks import selectors, services
from runbooks.forms import (
    ChecklistRunForm,
    RunbookForm,
    StepFormSet,
    calculator_form,
)
from runbooks.models import Runbook
from runbooks.permissions import (
    can_change_run,
    can_edit_runbook,
    checklist_run_get_for_user,
    runbook_get_for_user,
)

PAGE_SIZE = 25


@require_GET
def runbook_list(request):
    groups = selectors.runbook_list_grouped(language=get_language())
    return render(request, "runbooks/runbook_list.html", {"groups": groups})


@require_GET
def runbook_detail(request, slug):
    runbook = runbook_get_for_user(request.user, slug)
    calculator = calculator_form(runbook.calculator)
    return render(request, "runbooks/runbook_detail.html", _detail(request, runbook, calculator))


@require_POST
def runbook_calculate(request, slug):
    """Compute on the server; htmx swaps in the result, a plain POST gets the whole page."""
    runbook = runbook_get_for_user(request.user, slug)
    calculator = calculator_form(runbook.calculator, request.POST)
    if calculator is None:
        raise Http404(_("This runbook has no calculator."))
    calculator.is_valid()
    context = {"runbook": runbook, "calculator": calculator}
    if htmx_partial(request):
        # 200 even with errors: htmx does not swap in a 4xx response, and the messages must show.
        return render(request, "runbooks/partials/calculator.html", context)
    status = 400 if calculator.errors else 200
    context = _detail(request, runbook, calculator)
    return render(request, "runbooks/runbook_detail.html", context, status=status)


@require_http_methods(["GET", "POST"])
def runbook_edit(request, slug):
    runbook = runbook_get_for_user(request.user, slug, for_edit=True)
    data = request.POST if request.method == "POST" else None
    form, steps, language = _edit_forms(runbook, data)
    if data is not None and form.is_valid() and steps.is_valid():
        cleaned = form.cleaned_data
        try:
            services.runbook_update(
                runbook=runbook,
                data={**cleaned, "steps": steps.steps()},
                language=cleaned["text_language"],
                actor=request.user,
                revision=cleaned["revision"],
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, _("Saved."))
            return redirect(runbook)
    status = 400 if form.errors or steps.total_error_count() else 200
    context = {"runbook": runbook, "form": form, "steps": steps, "edited_language": language}
    return render(request, "runbooks/runbook_form.html", context, status=status)


@require_GET
def run_list(request):
    page = Paginator(selectors.checklist_run_list(), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "runbooks/run_list.html", {"page": page})


@require_POST
def run_start(request, slug):
    runbook = runbook_get_for_user(request.user, slug)
    run = services.checklist_run_start(runbook=runbook, user=request.user)
    return redirect(run)


@require_http_methods(["GET", "POST"])
def run_detail(request, pk):
    run = checklist_run_get_for_user(request.user, pk, for_change=request.method == "POST")
    form = ChecklistRunForm(request.POST if request.method == "POST" else None, run=run)
    partial = htmx_partial(request)
    if request.method == "POST" and form.is_valid():
        try:
            run = services.checklist_run_update(
                run=run,
                ticked=form.cleaned_data["ticked"],
                step_notes=form.step_notes(),
                note=form.cleaned_data["note"],
                finish="finish" in request.POST,
            )
        except ValidationError as error:
            if partial:
                context = {"run": run, "problems": error.messages}
                return render(request, "runbooks/partials/run_status.html", context)
            messages.error(request, " ".join(error.messages))
            return redirect(run)
        if partial:
            return render(request, "runbooks/partials/run_status.html", {"run": run, "saved": True})
        if run.finished:
            messages.success(request, _("Run finished and recorded."))
            return redirect(run.runbook)
        messages.success(request, _("Saved."))
        return redirect(run)
    if partial and form.errors:
        problems = [error for errors in form.errors.values() for error in errors]
        context = {"run": run, "problems": problems}
        return render(request, "runbooks/partials/run_status.html", context)
    text = run.runbook.text(get_language())
    context = {
        "run": run,
        "runbook": run.runbook,
        "text": text,
        "form": form,
        "rows": form.rows(text.steps),
        "can_change": can_change_run(request.user, run) and not run.finished,
    }
    return render(request, "runbooks/run_detail.html", context, status=400 if form.errors else 200)


def _detail(request, runbook: Runbook, calculator) -> dict:
    return {
        "runbook": runbook,
        "text": runbook.text(get_language()),
        "calculator": calculator,
        "runs": selectors.runbook_recent_runs(runbook=runbook),
        "history": selectors.runbook_history(runbook=runbook),
        "can_edit": can_edit_runbook(request.user),
    }


def _edit_forms(runbook: Runbook, data) -> tuple[RunbookForm, StepFormSet, str]:
    """The edit form shows the runbook as this lead reads it: in their language where one exists."""
    text = runbook.text(get_language())
    form = RunbookForm(
        data,
        initial={
            "title": text.title,
            "summary": text.summary,
            "kind": runbook.kind,
            "stage": runbook.stage,
            "discipline": runbook.discipline,
            "calculator": runbook.calculator,
            "text_language": text.language,
            "revision": runbook.updated_at.isoformat(),
        },
    )
    steps = StepFormSet(
        data,
        prefix="steps",
        initial=[
            {"text": step.text, "command": step.command, "expected": step.expected}
            for step in text.steps
        ],
    )
    return form, steps, text.language
