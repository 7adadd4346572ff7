from django.urls import reverse
from django.utils.translation import gettext as _
from rest_framework import serializers

from incidents.models import Analysis, Feedback, Incident, KnowledgeGap, Recurrence, Signature
from incidents.models.incident import MAX_TAG_LENGTH, MAX_TAGS


class TagNamesField(serializers.ListField):
    child = serializers.CharField(max_length=MAX_TAG_LENGTH)

    def get_attribute(self, instance):
        return instance.tag_names  # read off the incident's row: no query for its tags

    def to_representation(self, value):
        return list(value)


class IncidentSerializer(serializers.ModelSerializer):
    tags = TagNamesField(required=False, max_length=MAX_TAGS)
    # A person who left is null. No `default`: on a PATCH, DRF leaves out a field whose
    # default it would have used, and the schema says the key is always there.
    reporter = serializers.CharField(source="reporter.username", read_only=True, allow_null=True)
    slug = serializers.SlugField(max_length=80, required=False)
    url = serializers.HyperlinkedIdentityField(
        view_name="incidents-api:incident-detail", lookup_field="slug"
    )

    class Meta:
        model = Incident
        fields = [
            "url",
            "slug",
            "title",
            "symptom",
            "root_cause",
            "remedy",
            "discipline",
            "prevention",
            "stage",
            "severity",
            "environment",
            "tags",
            "occurred_on",
            "resolved_on",
            "reporter",
            "language",
            "translations",
            "recurrence_count",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "language",
            "translations",
            "recurrence_count",
            "created_at",
            "updated_at",
        ]

    def validate_slug(self, value):
        if self.instance is not None and value != self.instance.slug:
            raise serializers.ValidationError(_("The slug of an incident cannot change."))
        return value


class SignatureSerializer(serializers.ModelSerializer):
    incident = serializers.SlugRelatedField(slug_field="slug", queryset=Incident.objects.all())
    author = serializers.CharField(source="author.username", read_only=True, allow_null=True)

    class Meta:
        model = Signature
        fields = [
            "id",
            "incident",
            "pattern",
            "note",
            "examples",
            "unless",
            "lead_only",
            "enabled",
            "author",
            "hit_count",
            "last_hit_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["hit_count", "last_hit_at", "created_at", "updated_at"]


class RecurrenceSerializer(serializers.ModelSerializer):
    incident = serializers.SlugRelatedField(slug_field="slug", queryset=Incident.objects.all())
    reported_by = serializers.CharField(
        source="reported_by.username", read_only=True, allow_null=True
    )

    class Meta:
        model = Recurrence
        fields = ["id", "incident", "occurred_on", "reported_by", "note", "analysis", "created_at"]
        read_only_fields = ["analysis", "created_at"]


class AnalysisInputSerializer(serializers.Serializer):
    log = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False)
    file = serializers.FileField(required=False)
    log_path = serializers.CharField(required=False, allow_blank=True, max_length=500)
    # The sender's idempotency key: the same key sent again returns the analysis it made.
    key = serializers.RegexField(r"^[-A-Za-z0-9_]{8,64}$", required=False)
    # Where a failure was caught: sent by `kb run` and `kb watch`.
    source = serializers.ChoiceField(choices=Analysis.Source.choices, default=Analysis.Source.API)
    command = serializers.CharField(required=False, allow_blank=True, max_length=4000)
    exit_status = serializers.IntegerField(
        required=False, allow_null=True, min_value=-32768, max_value=32767
    )
    host = serializers.CharField(required=False, allow_blank=True, max_length=255)
    cwd = serializers.CharField(required=False, allow_blank=True, max_length=500)
    job_id = serializers.CharField(required=False, allow_blank=True, max_length=64)

    def validate_source(self, value):
        if value not in (Analysis.Source.API, *Analysis.CAUGHT):
            raise serializers.ValidationError(
                _("Through the API a tail comes from api, kb-run or kb-watch.")
            )
        return value

    def validate(self, attrs):
        if attrs.get("file") and (attrs.get("log") or "").strip():
            raise serializers.ValidationError(
                {"log": [_("Send a log tail in `log` or a `file`, not both.")]}
            )
        if not attrs.get("file") and not (attrs.get("log") or "").strip():
            raise serializers.ValidationError({"log": [_("Send a log tail in `log` or a `file`.")]})
        return attrs


class AnalysisSuggestionSerializer(serializers.Serializer):
    slug = serializers.CharField(source="incident.slug")
    title = serializers.CharField(source="incident.title")
    score = serializers.FloatField()
    confident = serializers.BooleanField()
    evidence = serializers.JSONField()
    why = serializers.CharField()
    root_cause = serializers.CharField(source="incident.root_cause")
    remedy = serializers.CharField(source="incident.remedy")
    discipline = serializers.CharField(source="incident.discipline")
    url = serializers.SerializerMethodField()

    def get_url(self, suggestion) -> str:
        return self.context["request"].build_absolute_uri(suggestion.incident.get_absolute_url())


SUMMARY_FIELDS = [
    "id",
    "url",
    "page",
    "status",
    "source",
    "submitted_by",
    "log_path",
    "command",
    "exit_status",
    "host",
    "cwd",
    "job_id",
    "size_bytes",
    "redactions",
    "stage",
    "confident",
    "top_incident",
    "error",
    "created_at",
    "finished_at",
    "reranked_at",
    "reranked_from",
]


class AnalysisSummarySerializer(serializers.ModelSerializer):
    """An analysis in a list: what happened, never its report (GET its url for that)."""

    url = serializers.HyperlinkedIdentityField(view_name="incidents-api:analysis-detail")
    page = serializers.SerializerMethodField()
    submitted_by = serializers.CharField(
        source="submitted_by.username", read_only=True, allow_null=True
    )
    top_incident = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)

    class Meta:
        model = Analysis
        fields = SUMMARY_FIELDS
        read_only_fields = fields

    def get_page(self, analysis) -> str:
        return self.context["request"].build_absolute_uri(analysis.get_absolute_url())


class AnalysisSerializer(AnalysisSummarySerializer):
    """One analysis with its suggestions and its (bounded) report."""

    suggestions = AnalysisSuggestionSerializer(many=True, read_only=True)

    class Meta(AnalysisSummarySerializer.Meta):
        fields = [*SUMMARY_FIELDS, "suggestions", "report"]
        read_only_fields = fields


class FeedbackInputSerializer(serializers.Serializer):
    incident = serializers.SlugRelatedField(slug_field="slug", queryset=Incident.objects.all())
    verdict = serializers.ChoiceField(choices=Feedback.Verdict.choices)


class KnowledgeGapSerializer(serializers.ModelSerializer):
    incident = serializers.SlugRelatedField(slug_field="slug", read_only=True, allow_null=True)
    draft = serializers.SerializerMethodField()

    class Meta:
        model = KnowledgeGap
        fields = [
            "id",
            "key_template",
            "example_line",
            "stage",
            "analysis_count",
            "first_seen",
            "last_seen",
            "incident",
            "explained_at",
            "draft",
        ]
        read_only_fields = fields

    def get_draft(self, gap) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("incidents:gap-draft", args=[gap.pk])
        )
