from django.db.models import Prefetch
from django.utils.translation import get_language
from django_filters import rest_framework as filters
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from common.throttles import ScopedRateThrottle
from incidents import services
from incidents.api.permissions import IncidentPermission, LeadWritesPermission
from incidents.api.serializers import (
    AnalysisInputSerializer,
    AnalysisSerializer,
    AnalysisSummarySerializer,
    FeedbackInputSerializer,
    IncidentSerializer,
    KnowledgeGapSerializer,
    RecurrenceSerializer,
    SignatureSerializer,
)
from incidents.filters import IncidentFilterSet
from incidents.models import (
    Analysis,
    AnalysisSuggestion,
    Incident,
    KnowledgeGap,
    Recurrence,
    Signature,
)


class IncidentViewSet(viewsets.ModelViewSet):
    queryset = Incident.objects.for_pages().order_by("-updated_at", "-id")
    serializer_class = IncidentSerializer
    permission_classes = [IncidentPermission]
    filterset_class = IncidentFilterSet
    lookup_field = "slug"
    # What a slug can be, as in the pages' <slug:…>: anything else (a NUL byte, which
    # PostgreSQL refuses in a query) is a 404 before the database sees it.
    lookup_value_regex = "[-a-zA-Z0-9_]+"
    ordering_fields = ["updated_at", "occurred_on", "recurrence_count", "title"]
    rare_filters = True  # its facets may meet rarely: common/keyset.py, _first_filtered

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        tags = data.pop("tags", [])
        slug = data.pop("slug", "")
        serializer.instance = services.incident_create(
            data=data, reporter=self.request.user, language=get_language(), slug=slug, tags=tags
        )

    def perform_update(self, serializer):
        data = dict(serializer.validated_data)
        data.pop("slug", None)
        tags = data.pop("tags", None)
        serializer.instance = services.incident_update(
            incident=serializer.instance, data=data, tags=tags, actor=self.request.user
        )

    def perform_destroy(self, instance):
        services.incident_delete(incident=instance)


class SignatureFilterSet(filters.FilterSet):
    incident = filters.CharFilter(field_name="incident__slug")

    class Meta:
        model = Signature
        fields = ["incident", "enabled"]


class SignatureViewSet(viewsets.ModelViewSet):
    queryset = Signature.objects.select_related("incident", "author")
    serializer_class = SignatureSerializer
    permission_classes = [LeadWritesPermission]
    filterset_class = SignatureFilterSet
    ordering_fields = ["id", "hit_count", "last_hit_at"]

    def perform_create(self, serializer):
        serializer.instance = services.signature_create(
            **serializer.validated_data, author=self.request.user
        )

    def perform_update(self, serializer):
        serializer.instance = services.signature_update(
            signature=serializer.instance, data=serializer.validated_data, actor=self.request.user
        )

    def perform_destroy(self, instance):
        services.signature_delete(signature=instance)


class RecurrenceFilterSet(filters.FilterSet):
    incident = filters.CharFilter(field_name="incident__slug")

    class Meta:
        model = Recurrence
        fields = ["incident"]


class RecurrenceViewSet(
    mixins.CreateModelMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    queryset = Recurrence.objects.select_related("incident", "reported_by")
    serializer_class = RecurrenceSerializer
    filterset_class = RecurrenceFilterSet
    ordering_fields = ["occurred_on", "id"]

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = services.incident_record_recurrence(
            incident=data["incident"],
            reported_by=self.request.user,
            occurred_on=data.get("occurred_on"),
            note=data.get("note", ""),
        )


ORIGIN_FIELDS = ("command", "exit_status", "host", "cwd", "job_id")


class AnalysisViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Submit a log tail (202, then poll its URL) and read the reports."""

    serializer_class = AnalysisSerializer
    ordering_fields = ["created_at", "id"]
    filterset_fields = ["status", "stage", "confident", "source", "host", "job_id", "exit_status"]
    rare_filters = True
    throttle_scope = "analyses"

    def get_queryset(self):
        if self.action == "list":  # summaries: the report and the tail stay in the database
            return Analysis.objects.defer("text", "report").select_related(
                "submitted_by", "top_incident"
            )
        return Analysis.objects.prefetch_related(
            Prefetch("suggestions", AnalysisSuggestion.objects.select_related("incident"))
        ).select_related("submitted_by", "top_incident")

    def get_serializer_class(self):
        return AnalysisSummarySerializer if self.action == "list" else AnalysisSerializer

    def get_throttles(self):
        if self.action == "create":
            return [ScopedRateThrottle()]
        return super().get_throttles()

    @extend_schema(request=AnalysisInputSerializer, responses={202: AnalysisSerializer})
    def create(self, request):
        incoming = AnalysisInputSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        data = incoming.validated_data
        upload = data.get("file")
        try:
            analysis = services.analysis_request(
                data=upload if upload is not None else data["log"],
                user=request.user,
                log_path=data.get("log_path", ""),
                source=data["source"],
                client_key=data.get("key", ""),
                origin=services.JobOrigin(
                    **{field: data[field] for field in ORIGIN_FIELDS if field in data}
                ),
            )
        except services.AnalysisRefused as refused:
            raise ValidationError({"log": [str(refused)]}) from refused
        body = AnalysisSerializer(analysis, context={"request": request}).data
        return Response(
            body, status=status.HTTP_202_ACCEPTED, headers={"Location": str(body["url"])}
        )

    @extend_schema(request=FeedbackInputSerializer, responses={200: AnalysisSerializer})
    @action(detail=True, methods=["post"])
    def feedback(self, request, pk=None):
        analysis = self.get_object()
        incoming = FeedbackInputSerializer(data=request.data)
        incoming.is_valid(raise_exception=True)
        try:
            services.analysis_feedback(
                analysis=analysis,
                incident=incoming.validated_data["incident"],
                user=request.user,
                verdict=incoming.validated_data["verdict"],
            )
        except services.FeedbackRefused as refused:
            raise ValidationError({"incident": [str(refused)]}) from refused
        return Response(AnalysisSerializer(self.get_object(), context={"request": request}).data)


class KnowledgeGapViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = KnowledgeGap.objects.select_related("incident").order_by(
        "-analysis_count", "-last_seen"
    )
    serializer_class = KnowledgeGapSerializer
    filterset_fields = ["stage"]
    ordering_fields = ["analysis_count", "last_seen"]
