"""Read-only REST endpoints: runbooks by slug, and checklist runs."""

from django_filters import rest_framework as filters
from rest_framework import serializers, viewsets

from common.choices import Discipline, Stage
from runbooks.models import Calculator, ChecklistRun, Runbook


def _blank_choice(choices) -> serializers.ChoiceField:
    # Declared, because a read-only model field loses allow_blank and the schema would
    # then promise a value where a runbook has none ("").
    return serializers.ChoiceField(choices=choices, allow_blank=True, read_only=True)


class RunbookSerializer(serializers.ModelSerializer):
    url = serializers.HyperlinkedIdentityField(
        view_name="runbooks-api:runbook-detail", lookup_field="slug"
    )
    stage = _blank_choice(Stage.choices)
    discipline = _blank_choice(Discipline.choices)
    calculator = _blank_choice(Calculator.choices)

    class Meta:
        model = Runbook
        fields = [
            "url",
            "slug",
            "kind",
            "stage",
            "discipline",
            "calculator",
            "title",
            "summary",
            "steps",
            "language",
            "translations",
            "updated_at",
        ]
        read_only_fields = fields


class RunbookFilterSet(filters.FilterSet):
    class Meta:
        model = Runbook
        fields = ["kind", "stage", "discipline", "calculator"]


class RunbookViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Runbook.objects.all()
    serializer_class = RunbookSerializer
    filterset_class = RunbookFilterSet
    lookup_field = "slug"
    lookup_value_regex = "[-a-zA-Z0-9_]+"  # a slug; a NUL byte would reach PostgreSQL
    ordering_fields = ["position", "slug", "updated_at"]


class ChecklistRunSerializer(serializers.ModelSerializer):
    runbook = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    started_by = serializers.CharField(
        source="started_by.username", read_only=True, allow_null=True
    )
    finished = serializers.BooleanField(read_only=True)

    class Meta:
        model = ChecklistRun
        fields = [
            "id",
            "runbook",
            "started_by",
            "started_at",
            "finished_at",
            "finished",
            "iso_week",
            "step_count",
            "ticked",
            "step_notes",
            "note",
        ]
        read_only_fields = fields


class ChecklistRunFilterSet(filters.FilterSet):
    runbook = filters.CharFilter(field_name="runbook__slug")
    finished = filters.BooleanFilter(field_name="finished_at", lookup_expr="isnull", exclude=True)

    class Meta:
        model = ChecklistRun
        fields = ["runbook", "iso_week", "finished"]


class ChecklistRunViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = ChecklistRun.objects.select_related("runbook", "started_by")
    serializer_class = ChecklistRunSerializer
    filterset_class = ChecklistRunFilterSet
    ordering_fields = ["started_at", "id"]
