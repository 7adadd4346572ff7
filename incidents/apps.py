from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class IncidentsConfig(AppConfig):
    name = "incidents"
    verbose_name = _("Incident book")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import m2m_changed, post_delete, pre_delete

        from incidents.models import Feedback, Incident
        from incidents.services.rollups import (
            rollups_feedback_deleted,
            rollups_feedback_deleting,
            rollups_tags_changing,
        )

        # The one write to the counts that no service of ours makes: deleting a user (Django's
        # own admin) deletes their feedback, and an analysis they answered counts again.
        pre_delete.connect(rollups_feedback_deleting, sender=Feedback)
        post_delete.connect(rollups_feedback_deleted, sender=Feedback)
        # Tags come and go from either side (a form, the admin, tag.incidents): the matrix
        # filtered by a tag counts from the tags' cells.
        m2m_changed.connect(rollups_tags_changing, sender=Incident.tags.through)
