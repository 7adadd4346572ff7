from django.contrib import admin, messages
from django.utils.translation import gettext_lazy as _

from reports import services
from reports.models import WeeklyReport


@admin.register(WeeklyReport)
class WeeklyReportAdmin(admin.ModelAdmin):
    list_display = [
        "week",
        "week_start",
        "built_at",
        "build_ms",
        "emailed_at",
        "reviewed_by",
        "reviewed_at",
    ]
    list_filter = ["reviewed_at", "emailed_at"]
    readonly_fields = [
        "week_start",
        "data",
        "built_at",
        "build_ms",
        "emailed_at",
        "reviewed_by",
        "reviewed_at",
    ]
    fields = [*readonly_fields, "review_notes"]
    actions = ["rebuild"]

    def has_add_permission(self, request):
        return False  # a report is built from the data, never typed in

    @admin.action(description=_("Rebuild the selected weeks"))
    def rebuild(self, request, queryset):
        for report in queryset:
            services.report_week_build(week_start=report.week_start)
        self.message_user(
            request, _("Rebuilt %(n)s reports.") % {"n": queryset.count()}, messages.SUCCESS
        )
