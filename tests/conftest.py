"""The cast: alice and bob are engineers, lena is a lead. `catalog` is the real seed."""

import copy

import pytest
from django.core.cache import cache
from django.test import Client

from accounts.roles import ENGINEER, LEAD
from tests.factories import user_with_role
from tests.services import (
    RedisServer,
    Worker,
    broker,
    free_port,
    have_redis_server,
    need,
    wait_until,
)
from tests.snapshots import RowSnapshot

# Fixtures that start processes of their own (Redis, Celery workers, a web server); a test
# that asks for one, directly or through another fixture, is marked `processes`.
PROCESS_FIXTURES = frozenset({"redis", "workers", "web", "analyses"})


def pytest_collection_modifyitems(items):
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if fixtures & PROCESS_FIXTURES:
            item.add_marker(pytest.mark.processes)
        if "browser" in fixtures:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def _fast_and_quiet(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.LANGUAGE_CODE = "en"
    settings.KNOWLEDGE_CHECK_SECONDS = 0  # each test sees what the one before it changed
    settings.SIMILAR_LAG_SECONDS = 0  # and ranks similar incidents in the book as it is
    cache.clear()  # nothing a test before it kept, in this process
    # WhiteNoise otherwise walks every app's static files each time a test client starts
    # (~80 ms, thousands of times); this way it looks a file up when one is asked for.
    settings.WHITENOISE_AUTOREFRESH = True


@pytest.fixture
def alice(db):
    return user_with_role("alice", ENGINEER)


@pytest.fixture
def bob(db):
    return user_with_role("bob", ENGINEER)


@pytest.fixture
def lena(db):
    return user_with_role("lena", LEAD)


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(alice):
    return _client_for(alice)


@pytest.fixture
def bob_client(bob):
    return _client_for(bob)


@pytest.fixture
def lena_client(lena):
    return _client_for(lena)


@pytest.fixture(scope="session")
def _catalog_snapshot(django_db_setup, django_db_blocker):
    from incidents.seeding import catalog_seed

    with django_db_blocker.unblock():
        return RowSnapshot.take(lambda: catalog_seed(language="en"), ["incidents"])


@pytest.fixture
def catalog(db, _catalog_snapshot):
    """The shipped catalog as `seed_catalog` leaves it (seeded once per session), and the
    seed's result."""
    result, snapshot = _catalog_snapshot
    snapshot.restore()
    return copy.deepcopy(result)


@pytest.fixture(scope="session")
def _runbooks_snapshot(django_db_setup, django_db_blocker):
    from runbooks.seeding import runbook_catalog_seed

    with django_db_blocker.unblock():
        return RowSnapshot.take(lambda: runbook_catalog_seed(language="en"), ["runbooks"])


@pytest.fixture
def runbooks(db, _runbooks_snapshot):
    """The shipped runbooks, seeded in English with Chinese as translation (once per session)."""
    result, snapshot = _runbooks_snapshot
    snapshot.restore()
    return copy.deepcopy(result)


@pytest.fixture
def redis():
    """A private redis-server on a free port: a test may stop and start it at will."""
    need(have_redis_server(), "redis-server is not installed")
    server = RedisServer(free_port())
    server.start()
    yield server
    server.stop()


@pytest.fixture
def workers(redis, catalog):
    """Start real `celery worker` processes on the private Redis; all stopped at the end."""
    started: list[Worker] = []

    def start(name: str = "w1", **extra_env: str) -> Worker:
        worker = Worker(redis.url, name, extra_env=extra_env)
        started.append(worker)
        assert wait_until(worker.ready, 60), worker.log.read_text()[-3000:]
        return worker

    with broker(redis.url):
        yield start
    for worker in started:
        worker.stop()
