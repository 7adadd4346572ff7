import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.roles import ENGINEER, LEAD, user_set_role

CREDENTIALS = settings.VAR_DIR / "credentials.txt"


class Command(BaseCommand):
    help = "On a fresh install, create a lead and an engineer account and print how to sign in."

    def handle(self, *args, **options):
        User = get_user_model()
        if not User.objects.exists():
            lines = []
            for username, role in (("lead", LEAD), ("engineer", ENGINEER)):
                password = secrets.token_urlsafe(9)
                user = User.objects.create_user(username=username, password=password)
                user_set_role(user=user, role=role)
                lines.append(f"{username} / {password}  ({role})")
            CREDENTIALS.write_text("\n".join(lines) + "\n")
            CREDENTIALS.chmod(0o600)
        if CREDENTIALS.exists():
            self.stdout.write("Sign in with:\n" + CREDENTIALS.read_text())
        else:
            self.stdout.write("Sign in with your existing account.")
