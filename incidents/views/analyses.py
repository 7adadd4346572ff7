from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.htmx import htmx_partial
from incidents import selectors, services
from incidents.forms import AnalysisForm, FeedbackForm
from incidents.models import Analysis, Incident


@require_http_methods(["GET", "POST"])
def analysis_new(request):
    # Bound on every POST, even an empty one (or JSON sent here): it then says what is missing.
    data = request.POST if request.method == "POST" else None
    form = AnalysisForm(data, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            analysis = services.analysis_request(
                data=form.cleaned_data["data"],
                user=request.user,
                log_path=form.cleaned_data["log_path"],
            )
        except services.AnalysisRefused as refused:
            form.add_error(None, str(refused))
        else:
            return redirect(analysis)
    status = 400 if form.errors else 200
    recent = selectors.analysis_recent(user=request.user)
    return render(
        request, "incidents/analysis_new.html", {"form": form, "recent": recent}, status=status
    )


@require_GET
def analysis_detail(request, pk):
    analysis = selectors.analysis_get(pk=pk)
    context = selectors.analysis_page(analysis=analysis, user=request.user)
    if htmx_partial(request):
        return render(request, "incidents/partials/analysis_result.html", context)
    return render(request, "incidents/analysis_detail.html", context)


@require_POST
def analysis_feedback(request, pk):
    analysis = get_object_or_404(Analysis, pk=pk)
    form = FeedbackForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Unknown feedback."))
        return redirect(analysis)
    incident = get_object_or_404(Incident, slug=form.cleaned_data["incident"])
    try:
        services.analysis_feedback(
            analysis=analysis,
            incident=incident,
            user=request.user,
            verdict=form.cleaned_data["verdict"],
        )
    except services.FeedbackRefused as refused:
        messages.error(request, str(refused))
        return redirect(analysis)
    if form.cleaned_data["verdict"] == "fixed":
        messages.success(
            request, _("Recorded as a recurrence of “%(title)s”.") % {"title": incident.title}
        )
    else:
        messages.info(request, _("Noted: this incident will rank lower for logs like this one."))
    return redirect(analysis)
