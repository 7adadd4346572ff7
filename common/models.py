"""What the apps share in the database: the workers' heartbeats, read by /healthz."""

from django.db import models
from django.utils import timezone


class WorkerHeartbeat(models.Model):
    """A Celery worker says it is alive, every few seconds, with the queues it serves."""

    hostname = models.CharField(max_length=200, unique=True)
    queues = models.CharField(max_length=200)
    seen_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.hostname
