"""/healthz: what a load balancer and an operator need, in one quick, anonymous call."""

from datetime import timedelta

import pytest
from django.utils import timezone

from common.health import worker_heartbeat
from common.models import WorkerHeartbeat
from config.celery import app as celery_app
from tests.services import free_port

pytestmark = pytest.mark.django_db


def _unreachable_redis() -> str:
    return f"redis://127.0.0.1:{free_port()}/0"


def test_it_answers_anonymous_callers_with_each_parts_state(client, monkeypatch):
    # The Celery app read its settings once, when first used: point the app itself elsewhere.
    monkeypatch.setattr(celery_app.conf, "broker_write_url", _unreachable_redis())
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True
    assert (body["database"], body["cache"]) == ("ok", "ok")
    assert body["broker"].startswith("unreachable")
    assert body["workers"] == {}
    assert response["Cache-Control"].startswith("max-age=0")


def test_it_counts_the_workers_heard_from_lately_per_queue(client):
    worker_heartbeat(hostname="analyses@a", queues="analyses")
    worker_heartbeat(hostname="both@b", queues="analyses,rescore")
    worker_heartbeat(hostname="gone@c", queues="rescore")
    WorkerHeartbeat.objects.filter(hostname="gone@c").update(
        seen_at=timezone.now() - timedelta(minutes=5)
    )
    assert client.get("/healthz").json()["workers"] == {"analyses": 2, "rescore": 1}


def test_a_cache_that_is_down_is_reported_not_fatal(client, settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": _unreachable_redis(),
        }
    }
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["cache"].startswith("unreachable")
