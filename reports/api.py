"""REST API of the reports: the matrix and the weekly reports (namespace `reports-api`).

Explicit APIViews: the matrix is a computed read, a report is addressed by its ISO week, and
reviewing is an operation with a rule (leads only).
"""

from __future__ import annotations

from datetime import date

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from common.weeks import WEEK_RE
from reports import selectors, services
from reports.forms import MAX_PER_STAGE, MAX_REPORTER_CHARS, MAX_TAG_CHARS, MatrixFilterForm
from reports.models import WeeklyReport
from reports.permissions import can_build_reports, can_review_reports
from reports.selectors import MATRIX_PER_STAGE

WEEK_PARAMETER = OpenApiParameter(
    "week",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="ISO week, e.g. 2026-W48 (Monday to Sunday in the site's time zone).",
    pattern=WEEK_RE.pattern,
)
MATRIX_PARAMETERS = [
    OpenApiParameter(
        "weeks", OpenApiTypes.INT, enum=[4, 8, 12, 26, 52], description="Window; default 12."
    ),
    OpenApiParameter(
        "tag",
        {"type": "string", "maxLength": MAX_TAG_CHARS},
        description="Only incidents with this tag.",
    ),
    OpenApiParameter(
        "reporter",
        {"type": "string", "maxLength": MAX_REPORTER_CHARS},
        description="A username, or several separated by commas (a team).",
    ),
    OpenApiParameter(
        "per_stage",
        {"type": "integer", "minimum": 1, "maximum": MAX_PER_STAGE},
        description=f"Incidents per stage; default {MATRIX_PER_STAGE}.",
    ),
]


class MatrixEntrySerializer(serializers.Serializer):
    slug = serializers.CharField()
    rank = serializers.IntegerField()
    happened = serializers.IntegerField()
    severity = serializers.CharField()
    language = serializers.CharField()
    title = serializers.CharField()
    symptom = serializers.CharField()
    root_cause = serializers.CharField()
    remedy = serializers.CharField(source="remedy_lead")
    command = serializers.CharField(source="remedy_command")
    discipline = serializers.CharField()
    discipline_label = serializers.CharField()
    prevention = serializers.CharField()


class MatrixRowSerializer(serializers.Serializer):
    stage = serializers.CharField()
    label = serializers.CharField()
    entries = MatrixEntrySerializer(many=True)


class HeatCellSerializer(serializers.Serializer):
    discipline = serializers.CharField()
    happened = serializers.IntegerField()
    incidents = serializers.IntegerField()
    level = serializers.IntegerField()
    incidents_url = serializers.CharField(source="url")


class HeatRowSerializer(serializers.Serializer):
    stage = serializers.CharField()
    label = serializers.CharField()
    cells = HeatCellSerializer(many=True)


class MatrixSerializer(serializers.Serializer):
    start = serializers.DateField()
    end = serializers.DateField()
    weeks = serializers.IntegerField(source="params.weeks")
    tag = serializers.CharField(source="params.tag")
    reporters = serializers.ListField(child=serializers.CharField(), source="params.reporters")
    total_happened = serializers.IntegerField()
    stages = MatrixRowSerializer(many=True, source="rows")
    heatmap = HeatRowSerializer(many=True, source="heat")


class WeeklyReportSerializer(serializers.ModelSerializer):
    week = serializers.CharField(read_only=True)
    week_end = serializers.DateField(read_only=True)
    reviewed = serializers.BooleanField(read_only=True)
    reviewed_by = serializers.SlugRelatedField(
        slug_field="username", read_only=True, allow_null=True
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = WeeklyReport
        fields = [
            "week",
            "week_start",
            "week_end",
            "url",
            "built_at",
            "build_ms",
            "emailed_at",
            "reviewed",
            "reviewed_by",
            "reviewed_at",
            "review_notes",
        ]
        read_only_fields = fields

    def get_url(self, report: WeeklyReport) -> str:
        return reverse(
            "reports-api:weekly-detail",
            kwargs={"week": report.week_start},
            request=self.context.get("request"),
        )


class WeeklyReportDetailSerializer(WeeklyReportSerializer):
    data = serializers.JSONField(read_only=True, help_text="The language-neutral snapshot.")

    class Meta(WeeklyReportSerializer.Meta):
        fields = [*WeeklyReportSerializer.Meta.fields, "data"]
        read_only_fields = fields


class ReviewInputSerializer(serializers.Serializer):
    notes = serializers.CharField(max_length=4000, required=False, allow_blank=True, default="")


def _report(week: date) -> WeeklyReport:
    report = selectors.report_get(week_start=week)
    if report is None:
        raise NotFound(_("No report for that week yet."))
    return report


class MatrixApi(APIView):
    """The quick-reference matrix, in the request's language."""

    @extend_schema(parameters=MATRIX_PARAMETERS, responses=MatrixSerializer)
    def get(self, request):
        form = MatrixFilterForm(request.query_params)
        if not form.is_valid():
            raise DjangoValidationError(form.errors.as_data())
        matrix = selectors.matrix_get(params=form.params(), language=get_language())
        return Response(MatrixSerializer(matrix).data)


class WeeklyReportListApi(generics.ListAPIView):
    """Stored weekly reports, newest first, without their snapshots."""

    serializer_class = WeeklyReportSerializer
    filter_backends = []

    def get_queryset(self):
        return selectors.report_list()


class WeeklyReportDetailApi(APIView):
    @extend_schema(parameters=[WEEK_PARAMETER], responses=WeeklyReportDetailSerializer)
    def get(self, request, week: date):
        return Response(
            WeeklyReportDetailSerializer(_report(week), context={"request": request}).data
        )


class WeeklyReportReviewApi(APIView):
    """A lead marks the week reviewed, with notes."""

    @extend_schema(
        parameters=[WEEK_PARAMETER], request=ReviewInputSerializer, responses=WeeklyReportSerializer
    )
    def post(self, request, week: date):
        report = _report(week)
        if not can_review_reports(request.user):
            raise PermissionDenied(_("Only a lead may mark a week reviewed."))
        incoming = ReviewInputSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)  # a body that is not an object is a 400 too
        report = services.report_week_review(
            report=report, user=request.user, notes=incoming.validated_data["notes"]
        )
        return Response(WeeklyReportSerializer(report, context={"request": request}).data)


class WeeklyReportBuildApi(APIView):
    """A lead builds (or rebuilds) a week now; nothing is mailed."""

    @extend_schema(parameters=[WEEK_PARAMETER], request=None, responses=WeeklyReportSerializer)
    def post(self, request, week: date):
        if not can_build_reports(request.user):
            raise PermissionDenied(_("Only a lead may build a report on demand."))
        try:
            report = services.report_week_build(week_start=week)
        except services.ReportRefused as refused:
            raise ValidationError({"week": [str(refused)]}) from refused
        report = selectors.report_get(week_start=report.week_start)
        return Response(WeeklyReportSerializer(report, context={"request": request}).data)
