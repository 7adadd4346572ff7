from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = _("Incident book")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, pre_delete

        from incidents.models import Feedback
        from incidents.services.rollups import rollups_feedback_deleted, rollups_feedback_deleting

        # The one write to the counts that no service of ours makes: deleting a user (Django's
        # own admin) deletes their feedback, and an analysis they answered counts again.
        pre_delete.connect(rollups_feedback_deleting, sender=Feedback)
        post_delete.connect(rollups_feedback_deleted, sender=Feedback)
