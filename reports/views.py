"""Pages: the quick-reference matrix and the weekly reports. Thin: gate, validate, call, render."""

from __future__ import annotations

from datetime import date, timedelta

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from common.weeks import week_current, week_label_of_date, week_last_completed
from reports import charts, exports, selectors, services
from reports.forms import MatrixFilterForm, ReviewForm
from reports.models import WeeklyReport
from reports.permissions import can_build_reports, can_review_reports

REPORTS_PER_PAGE = 26
EXPORTS = {
    "csv": ("text/csv; charset=utf-8", exports.matrix_csv),
    "md": ("text/markdown; charset=utf-8", exports.matrix_markdown),
}
# Excel reads a CSV as UTF-8 (Chinese included) only when it starts with a byte-order mark.
BOM = "\ufeff"


def _download(body: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _report_or_404(week: date) -> WeeklyReport:
    report = selectors.report_get(week_start=week)
    if report is None:
        raise Http404(_("No report for %(week)s yet.") % {"week": week_label_of_date(week)})
    return report


@require_GET
def matrix(request):
    form = MatrixFilterForm(request.GET)
    if not form.is_valid():
        return render(request, "reports/matrix.html", {"form": form}, status=400)
    context = {
        "form": form,
        "matrix": selectors.matrix_get(params=form.params(), language=get_language()),
        "query": request.GET.urlencode(),
    }
    return render(request, "reports/matrix.html", context)


@require_GET
def matrix_export(request, fmt: str):
    form = MatrixFilterForm(request.GET)
    if not form.is_valid():
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain")
    content_type, write = EXPORTS[fmt]
    result = selectors.matrix_get(params=form.params(), language=get_language())
    body = write(result)
    return _download(
        BOM + body if fmt == "csv" else body, content_type, f"incident-matrix-{result.end}.{fmt}"
    )


@require_GET
def weekly_list(request):
    page = Paginator(selectors.report_list(), REPORTS_PER_PAGE).get_page(request.GET.get("page"))
    last_week = week_last_completed()
    context = {
        "page": page,
        "last_week": last_week,
        "last_week_label": week_label_of_date(last_week),
        "last_week_missing": page.number == 1 and all(r.week_start != last_week for r in page),
        "can_build": can_build_reports(request.user),
    }
    return render(request, "reports/weekly_list.html", context)


@require_GET
def weekly_detail(request, week: date):
    report = selectors.report_get(week_start=week)
    if report is None:
        if week > week_current():
            raise Http404(_("That week has not started yet."))
        context = {
            "week_start": week,
            "week": week_label_of_date(week),
            "can_build": can_build_reports(request.user),
        }
        return render(request, "reports/weekly_missing.html", context, status=404)
    context = {
        "report": report,
        "page": selectors.report_week_page(data=report.data, language=get_language()),
        "can_review": can_review_reports(request.user),
        "can_build": can_build_reports(request.user),
        "review_form": ReviewForm(initial={"notes": report.review_notes}),
        "rhythm": selectors.report_rhythm_run(week_start=week),
        "previous_week": week - timedelta(weeks=1),
        "next_week": week + timedelta(weeks=1) if week < week_current() else None,
    }
    return render(request, "reports/weekly_detail.html", context)


@require_POST
def weekly_build(request, week: date):
    if not can_build_reports(request.user):
        raise PermissionDenied(_("Only a lead may build a report on demand."))
    try:
        services.report_week_build(week_start=week)
    except services.ReportRefused as refused:
        messages.error(request, str(refused))
        return redirect("reports:weekly-list")
    messages.success(
        request, _("The report of %(week)s was built.") % {"week": week_label_of_date(week)}
    )
    return redirect("reports:weekly-detail", week=week)


@require_POST
def weekly_review(request, week: date):
    report = _report_or_404(week)
    if not can_review_reports(request.user):
        raise PermissionDenied(_("Only a lead may mark a week reviewed."))
    form = ReviewForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
        return redirect(report)
    services.report_week_review(report=report, user=request.user, notes=form.cleaned_data["notes"])
    messages.success(request, _("Marked reviewed."))
    return redirect(report)


@require_GET
def weekly_csv(request, week: date):
    report = _report_or_404(week)
    page = selectors.report_week_page(data=report.data, language=get_language())
    return _download(
        BOM + exports.report_week_csv(page),
        "text/csv; charset=utf-8",
        f"weekly-report-{report.week}.csv",
    )


@require_GET
def weekly_chart(request, week: date):
    report = _report_or_404(week)
    response = HttpResponse(
        charts.trend_chart_svg(report.data["trend"]), content_type="image/svg+xml"
    )
    # The chart's only active content is its own <style>: nothing else may load or run.
    response["Content-Security-Policy"] = "default-src 'none'; style-src 'unsafe-inline'"
    response["Cache-Control"] = "private, max-age=300"
    return response
