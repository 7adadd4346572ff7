from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RunbooksConfig(AppConfig):
    name = "runbooks"
    verbose_name = _("Runbooks")
    default_auto_field = "django.db.models.BigAutoField"
