from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from runbooks.models import TEXT_FIELDS, ChecklistRun, Runbook


@admin.register(Runbook)
class RunbookAdmin(SimpleHistoryAdmin):
    list_display = ["slug", "title", "kind", "stage", "discipline", "calculator", "position"]
    list_filter = ["kind", "stage", "discipline"]
    search_fields = ["slug", "title"]

    def save_model(self, request, obj, form, change):
        if change:
            # The same rule as the edit page: reseeding keeps it, stale translations go.
            text_changed = bool(set(form.changed_data) & set(TEXT_FIELDS))
            obj.mark_edited(text_changed=text_changed)
        super().save_model(request, obj, form, change)


@admin.register(ChecklistRun)
class ChecklistRunAdmin(admin.ModelAdmin):
    list_display = ["runbook", "started_by", "started_at", "finished_at", "iso_week"]
    list_filter = ["runbook", "iso_week"]
    raw_id_fields = ["started_by"]
    readonly_fields = ["iso_week", "step_count"]
    date_hierarchy = "started_at"

    def has_add_permission(self, request):
        return False  # a run starts from its runbook's page, which counts the steps
