import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Redis URLs get the transport that drops a malformed message instead of dying on it.
TRANSPORT_ALIASES.update(
    redis="config.broker:Transport",
    rediss="config.broker:Transport",
    sentinel="config.broker:SentinelTransport",
)

app = Celery("incident_kb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
