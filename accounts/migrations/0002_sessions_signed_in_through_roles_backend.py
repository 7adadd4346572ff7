from django.db import migrations

BACKEND_KEY = "_auth_user_backend"
BEFORE = "django.contrib.auth.backends.ModelBackend"
AFTER = "accounts.backends.RolesBackend"


def _move(apps, old: str, new: str) -> None:
    """Sessions signed in through `old` now name `new`: nobody is signed out by the change."""
    from django.contrib.sessions.backends.db import SessionStore

    store = SessionStore()
    sessions = apps.get_model("sessions", "Session")
    for session in sessions.objects.iterator():
        data = store.decode(session.session_data)
        if data.get(BACKEND_KEY) == old:
            data[BACKEND_KEY] = new
            session.session_data = store.encode(data)
            session.save(update_fields=["session_data"])


def forwards(apps, schema_editor):
    _move(apps, BEFORE, AFTER)


def backwards(apps, schema_editor):
    _move(apps, AFTER, BEFORE)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("sessions", "0001_initial"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
