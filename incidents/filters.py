"""Filters of the incident list, shared by the page and the API."""

import django_filters
from django.utils.translation import gettext_lazy as _

from common.choices import Discipline, Severity, Stage
from common.widgets import DateInput
from incidents.models import Incident
from incidents.querysets import FACETS


class IncidentFilterSet(django_filters.FilterSet):
    q = django_filters.CharFilter(
        method="filter_q",
        label=_("Search"),
        max_length=200,
        help_text=_(
            "Incidents whose text holds every term, in any language: the 500 most recently "
            "updated of them, the most relevant first."
        ),
    )
    stage = django_filters.ChoiceFilter(choices=Stage.choices, label=_("Stage"))
    discipline = django_filters.ChoiceFilter(choices=Discipline.choices, label=_("Discipline"))
    severity = django_filters.ChoiceFilter(choices=Severity.choices, label=_("Severity"))
    tag = django_filters.CharFilter(field_name="tags__name", label=_("Tag"), max_length=40)
    reporter = django_filters.CharFilter(
        field_name="reporter__username", label=_("Reporter"), max_length=150
    )
    occurred_after = django_filters.DateFilter(
        field_name="occurred_on", lookup_expr="gte", label=_("Occurred from"), widget=DateInput
    )
    occurred_before = django_filters.DateFilter(
        field_name="occurred_on", lookup_expr="lte", label=_("Occurred until"), widget=DateInput
    )
    sort = django_filters.OrderingFilter(
        fields=(
            ("updated_at", "updated"),
            ("occurred_on", "occurred"),
            ("recurrence_count", "recurrences"),
            ("title", "title"),
        ),
        field_labels={
            "updated_at": _("Last updated"),
            "occurred_on": _("Occurred"),
            "recurrence_count": _("Recurrences"),
            "title": _("Title"),
            # django-filter formats its descending labels once, at import: give them here.
            "-updated": _("Last updated (descending)"),
            "-occurred": _("Occurred (descending)"),
            "-recurrences": _("Recurrences (descending)"),
            "-title": _("Title (descending)"),
        },
        label=_("Sort"),
    )

    class Meta:
        model = Incident
        fields = []

    def filter_queryset(self, queryset):
        """The facets together (two or more are read as pairs on PostgreSQL), then the
        other filters, then the search (it ranks what they leave), then the sort (an explicit
        one replaces the search's order)."""
        last = ("q", "sort")
        asked = self.form.cleaned_data
        queryset = queryset.with_facets({name: asked.get(name) for name in FACETS})
        for name in [n for n in asked if n not in (*FACETS, *last)]:
            queryset = self.filters[name].filter(queryset, asked[name])
        for name in [n for n in last if n in asked]:
            queryset = self.filters[name].filter(queryset, asked[name])
        return queryset

    def filter_q(self, queryset, name, value):
        return queryset.search(value)
