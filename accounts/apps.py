from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts.roles import roles_ensure

        # After every app's migrations, so the permissions of apps migrated later exist too.
        post_migrate.connect(roles_ensure, dispatch_uid="accounts.roles_ensure")
