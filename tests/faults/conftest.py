"""Faults injected for real: a private Redis that is stopped, workers that are killed, database
connections that are cut. Every process listens on loopback only and every wait is bounded.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.roles import ENGINEER, user_set_role
from tests.faults.harness import PASSWORD
from tests.incidents.test_analysis_lifecycle import broker
from tests.services import RedisServer, Worker, free_port, have_redis_server, need, wait_until


@pytest.fixture
def redis():
    need(have_redis_server(), "redis-server is not installed")
    server = RedisServer(free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def workers(redis, catalog):
    """Start real `celery worker` processes on the private Redis; all stopped at the end."""
    started: list[Worker] = []

    def start(name: str, **extra_env: str) -> Worker:
        worker = Worker(redis.url, name, extra_env=extra_env)
        started.append(worker)
        assert wait_until(worker.ready, 60), worker.log.read_text()[-3000:]
        return worker

    with broker(redis.url):
        yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def engineer(db):
    user = get_user_model().objects.create_user(username="erin", password=PASSWORD)
    user_set_role(user=user, role=ENGINEER)
    return user
