from django import forms
from django.contrib import admin
from django.db import models
from simple_history.admin import SimpleHistoryAdmin

from incidents import services
from incidents.models import TEXT_FIELDS, Incident, Recurrence, Signature, Tag, Webhook


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    """A tag renamed or deleted here is renamed or dropped in its incidents' stored names too
    (the list's tag filter and the search read those)."""

    search_fields = ["name"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "name" in form.changed_data:
            services.incidents_retagged(incident_ids=obj.incidents.values_list("pk", flat=True))

    def delete_model(self, request, obj):
        self.delete_queryset(request, Tag.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset):
        tagged = list(
            Incident.objects.filter(tags__in=queryset).values_list("pk", flat=True).distinct()
        )
        super().delete_queryset(request, queryset)
        services.incidents_retagged(incident_ids=tagged)


class SignatureInline(admin.TabularInline):
    model = Signature
    fields = ["pattern", "note", "enabled"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True  # edited on its own page, where the expression is checked

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Incident)
class IncidentAdmin(SimpleHistoryAdmin):
    list_display = ["slug", "title", "stage", "discipline", "severity", "recurrence_count"]
    list_filter = ["stage", "discipline", "severity"]
    search_fields = ["slug", "title"]
    autocomplete_fields = ["tags"]
    exclude = ["tag_list"]  # derived from the tags on save
    raw_id_fields = ["reporter"]
    inlines = [SignatureInline]

    def save_model(self, request, obj, form, change):
        was = None
        if change:
            text_changed = bool(set(form.changed_data) & set(TEXT_FIELDS))
            obj.mark_edited(text_changed=text_changed)
            was = (
                Incident.objects.select_for_update()
                .filter(pk=obj.pk)
                .values_list("stage", "discipline")
                .first()
            )
        super().save_model(request, obj, form, change)
        services.incident_counted(obj, was=was)

    def delete_model(self, request, obj):
        services.incident_delete(incident=obj)

    def delete_queryset(self, request, queryset):
        for incident in queryset:
            services.incident_delete(incident=incident)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        incident = form.instance
        services.incident_index(incident=incident)
        # The admin saves around the services; a renamed incident leaves its old slug behind.
        services.knowledge_changed(slugs={incident.slug, form.initial.get("slug")} - {None, ""})


class SignatureAdminForm(forms.ModelForm):
    class Meta:
        model = Signature
        fields = ["incident", "pattern", "note", "examples", "unless", "lead_only", "enabled"]

    def clean(self):
        cleaned = super().clean()
        problems = services.signature_problems(
            pattern=cleaned.get("pattern", ""),
            examples=cleaned.get("examples", ""),
            unless=cleaned.get("unless", ""),
        )
        for field, phrases in problems.items():
            self.add_error(field, phrases)
        return cleaned


@admin.register(Signature)
class SignatureAdmin(SimpleHistoryAdmin):
    form = SignatureAdminForm
    list_display = ["pattern", "incident", "enabled", "hit_count", "last_hit_at"]
    list_filter = ["enabled"]
    search_fields = ["pattern", "incident__slug"]
    raw_id_fields = ["incident"]

    def save_model(self, request, obj, form, change):
        if change and form.has_changed():
            services.signature_mark_edited(signature=obj)
        was_of = Incident.objects.filter(pk=form.initial.get("incident")).values_list(
            "slug", flat=True
        )
        super().save_model(request, obj, form, change)
        services.knowledge_changed(slugs={obj.incident.slug, *was_of})

    def delete_model(self, request, obj):
        services.signature_delete(signature=obj)


@admin.register(Recurrence)
class RecurrenceAdmin(admin.ModelAdmin):
    list_display = ["incident", "occurred_on", "reported_by"]
    raw_id_fields = ["incident", "reported_by"]

    def save_model(self, request, obj, form, change):
        if not change:  # the service also counts it on the incident and in the rollups
            obj.pk = services.incident_record_recurrence(
                incident=obj.incident,
                reported_by=obj.reported_by,
                occurred_on=obj.occurred_on,
                note=obj.note,
                analysis=obj.analysis,
            ).pk
            return
        was = Recurrence.objects.filter(pk=obj.pk).values_list("incident_id", "occurred_on")[0]
        super().save_model(request, obj, form, change)
        services.recurrence_update(recurrence=obj, was=was)

    def delete_model(self, request, obj):
        services.recurrence_delete(recurrence=obj)

    def delete_queryset(self, request, queryset):
        for recurrence in queryset:
            services.recurrence_delete(recurrence=recurrence)


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    """Leads point the team's chat (Slack-compatible, Feishu/Lark, DingTalk) at caught failures."""

    list_display = ["name", "format", "language", "enabled", "last_sent_at", "last_error"]
    list_filter = ["format", "enabled"]
    readonly_fields = ["last_sent_at", "last_error"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)
