"""Is the app up? The database, the broker, the cache and the workers, each checked quickly.

Workers say they are alive with a heartbeat row every few seconds (`worker_heartbeat`, from
a bootstep in config/celery.py); a worker not heard from for three beats counts as gone.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.core.cache import cache
from django.db import connection
from django.utils import timezone

from common.database_errors import DATABASE_ERRORS
from common.models import WorkerHeartbeat

log = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 10
ALIVE_WITHIN = timedelta(seconds=3 * HEARTBEAT_SECONDS)
BROKER_TIMEOUT_SECONDS = 1.0


def worker_heartbeat(*, hostname: str, queues: str) -> None:
    try:
        WorkerHeartbeat.objects.update_or_create(
            hostname=hostname, defaults={"queues": queues, "seen_at": timezone.now()}
        )
    except DATABASE_ERRORS as error:  # the next beat tries again
        log.warning("worker heartbeat not recorded: %s", error)


def health() -> dict:
    """Each part's state ("ok" or why not) and the live workers per queue. `ok` is whether
    the web can serve: only the database is essential (without a broker, tails wait queued;
    without the cache, throttles let calls through)."""
    parts = {"database": _database(), "broker": _broker(), "cache": _cache()}
    workers = _workers() if parts["database"] == "ok" else {}
    return {"ok": parts["database"] == "ok", **parts, "workers": workers}


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return "ok"
    except DATABASE_ERRORS as error:
        return f"unreachable: {error.__class__.__name__}"


def _broker() -> str:
    from config.celery import app

    try:
        with app.connection_for_write() as broker:
            # max_retries=0: one try, no waiting between retries.
            broker.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT_SECONDS)
        return "ok"
    except Exception as error:  # whatever the transport raises when it cannot connect
        return f"unreachable: {error.__class__.__name__}"


def _cache() -> str:
    try:
        cache.set("healthz", "1", 10)
        return "ok" if cache.get("healthz") == "1" else "not keeping values"
    except Exception as error:  # whatever the backend raises when its server is down
        return f"unreachable: {error.__class__.__name__}"


def _workers() -> dict[str, int]:
    alive: dict[str, int] = {}
    recent = WorkerHeartbeat.objects.filter(seen_at__gte=timezone.now() - ALIVE_WITHIN)
    for queues in recent.values_list("queues", flat=True):
        for queue in queues.split(","):
            alive[queue] = alive.get(queue, 0) + 1
    return alive
