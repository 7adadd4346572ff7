from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from common.keyset import CursorInvalid, keyset_page, page_links
from common.memo import Memo
from incidents import selectors, services
from incidents.filters import IncidentFilterSet
from incidents.forms import IncidentForm, RecurrenceForm
from incidents.models import Incident
from incidents.permissions import can_edit_incident, can_manage_signatures, incident_get_for_user
from incidents.querysets import RANKED_AT_MOST

PAGE_SIZE = 25
RECURRENCES_PAGE_SIZE = 20
# The list counts its matches up to here, and says "more than" beyond.
COUNT_CAP = 1000


@require_GET
def incident_list(request):
    filterset = IncidentFilterSet(request.GET, queryset=Incident.objects.for_rows())
    queryset = filterset.qs if filterset.is_valid() else Incident.objects.none()
    queryset = queryset.order_by(*(queryset.query.order_by or ("-updated_at",)), "-id")
    page = _page(request, queryset, PAGE_SIZE, rare_filters=True)
    count = 0
    if filterset.is_valid():
        count = selectors.incident_count(queryset, filterset.form.cleaned_data, cap=COUNT_CAP)
    context = {
        "filterset": filterset,
        "page": page,
        "links": page_links(page, request.GET),
        "count": count,
        "count_cap": COUNT_CAP,
        "search_full": bool(filterset.form.cleaned_data.get("q")) and count >= RANKED_AT_MOST,
        "ranked_at_most": RANKED_AT_MOST,
        "filter_fields": _filter_fields(request, filterset),
    }
    return render(request, "incidents/incident_list.html", context)


# The filter fields show their values alone, in the page's language: the page renders them
# once per process for each combination asked (Django's widget templates cost more than the
# 25 rows).
_filter_fields_memo: Memo[str] = Memo(256)


def _filter_fields(request, filterset) -> str:
    shown = sorted(name for name in filterset.form.fields if name != "q")
    values = tuple((name, tuple(request.GET.getlist(name))) for name in shown)
    return _filter_fields_memo.get(
        (get_language(), values),
        lambda: render_to_string("incidents/partials/filter_fields.html", {"form": filterset.form}),
    )


@require_GET
def incident_detail(request, slug):
    incident = incident_get_for_user(request.user, slug)
    page = _page(request, selectors.incident_recurrences(incident=incident), RECURRENCES_PAGE_SIZE)
    context = {
        "incident": incident,
        "text": incident.text(get_language()),
        "page": page,
        "links": page_links(page, request.GET),
        "recurrences": page.rows,
        "history": selectors.incident_history(incident=incident),
        "similar": selectors.incident_similar(text=incident.symptom, exclude_slug=incident.slug),
        "signatures": incident.signatures.all(),
        "can_edit": can_edit_incident(request.user, incident),
        "can_manage_signatures": can_manage_signatures(request.user),
        "recurrence_form": RecurrenceForm(),
    }
    return render(request, "incidents/incident_detail.html", context)


@require_http_methods(["GET", "POST"])
def incident_create(request):
    form = IncidentForm(request.POST or None, initial=_draft_initial(request))
    gap = selectors.gap_for_draft(request.POST.get("gap") or request.GET.get("gap"))
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            incident = services.incident_create(
                data=data,
                reporter=request.user,
                language=get_language(),
                slug=data.get("slug", ""),
                tags=data["tags"],
                gap=gap,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, _("Incident filed. It is matchable from now on."))
            return redirect(incident)
    status = 400 if form.errors else 200
    context = {"form": form, "gap": gap, "gap_tail": selectors.gap_tail(gap)}
    return render(request, "incidents/incident_form.html", context, status=status)


@require_http_methods(["GET", "POST"])
def incident_edit(request, slug):
    incident = incident_get_for_user(request.user, slug, for_edit=True)
    form = IncidentForm(request.POST or None, instance=incident)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            services.incident_update(
                incident=incident,
                data=data,
                tags=data["tags"],
                actor=request.user,
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, _("Saved."))
            return redirect(incident)
    status = 400 if form.errors else 200
    context = {"form": form, "incident": incident}
    return render(request, "incidents/incident_form.html", context, status=status)


@require_POST
def recurrence_create(request, slug):
    incident = incident_get_for_user(request.user, slug)
    form = RecurrenceForm(request.POST)
    if form.is_valid():
        services.incident_record_recurrence(
            incident=incident,
            reported_by=request.user,
            occurred_on=form.cleaned_data["occurred_on"],
            note=form.cleaned_data["note"],
        )
        messages.success(request, _("Recorded: it happened again."))
    else:
        for errors in form.errors.values():
            for error in errors:
                messages.error(request, error)
    return redirect(incident)


@require_GET
def incident_similar(request):
    """The htmx fragment offered while someone types a symptom."""
    text = request.GET.get("symptom", "")[:4000]
    exclude = request.GET.get("exclude") or None  # the incident being edited is no duplicate
    similar = selectors.incident_similar(text=text, exclude_slug=exclude) if text.strip() else []
    return render(request, "incidents/partials/similar.html", {"similar": similar})


def _draft_initial(request) -> dict:
    """A new incident may start from a knowledge gap: its key line, stage and tail."""
    return {
        name: request.GET[name] for name in ("symptom", "stage", "title") if name in request.GET
    }


def _page(request, queryset, size: int, *, rare_filters: bool = False):
    """The page of `queryset` the request's cursor names; a cursor of another list or order
    names no page of this one."""
    try:
        return keyset_page(
            queryset, cursor=request.GET.get("cursor"), size=size, rare_filters=rare_filters
        )
    except CursorInvalid as error:
        raise Http404(_("Not a cursor of this list: follow its next link.")) from error
