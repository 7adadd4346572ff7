"""PostgreSQL cuts its clients off while analyses run; nothing is lost and nothing 500s.

Restarting the shared cluster under a test run is intrusive, so the default test does to the
clients what a restart does: it terminates every other backend of the test database
(`pg_terminate_backend`), between web requests and while the worker is in the middle of
analyses. The web (gunicorn, which keeps its connections) must notice the dead connection
before using it (CONN_HEALTH_CHECKS); the worker must give its claim back on a new connection
and retry. With FAULTS_RESTART_POSTGRES=1 a second test restarts the real cluster
(`pg_ctlcluster --skip-systemctl-redirect 15 main restart`), which also drops every other
client of that cluster on this machine: keep it for a machine of your own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection

from incidents.models import Analysis
from tests.faults.harness import (
    PASSWORD,
    TAILS,
    Browser,
    WebServer,
    all_finished,
    assert_done_exactly_once,
    page_status,
)
from tests.services import need, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# About a second of matching: long enough to be cut off in the middle of it.
SLOW_TAIL = (
    "\n".join(
        f"WARNING (gmm-align-compiled[5.5]:AlignUtteranceWrapper():align-utils.cc:93) "
        f"Retrying utterance spk{n:05d}-utt{n:06d} with beam {n % 40}"
        for n in range(15_000)
    )
    + "\n"
    + TAILS[0][1]
)


@pytest.fixture
def postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("the test database is not PostgreSQL (set DATABASE_URL=postgres://…)")


@pytest.fixture
def web(postgres, redis, workers, engineer):
    # The web process hashes with Django's defaults, not the tests' fast MD5.
    engineer.password = PBKDF2PasswordHasher().encode(PASSWORD, "faultsalt", iterations=1000)
    engineer.save(update_fields=["password"])
    server = WebServer(redis.url)
    yield server
    server.stop()
    log = server.log.read_text()
    assert not re.search(r'" 5\d\d ', log), "a request failed with a server error"


def cut_connections() -> int:
    """What a restart does to the clients: end every other backend of the test database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def _submit(browser: Browser, log_path: str, text: str) -> int:
    response = browser.submit_tail(text, log_path)
    assert response.status_code == 302, (response.status_code, response.text[:300])
    location = response.headers["Location"]
    assert page_status(browser.get(location)) in ("queued", "running", "done")
    return int(location.rstrip("/").rsplit("/", 1)[-1])


def _retries(worker) -> int:
    return len(re.findall(r"analysis_run\[[^]]+\] retry: Retry in", worker.log.read_text()))


def test_cut_connections_mid_analysis_lose_nothing(web, workers, engineer):
    worker = workers("pg")
    browser = Browser(web.url, engineer.username, PASSWORD)

    # One cut that surely lands in the middle of a run: the worker's connection is gone when
    # it comes to store the report.
    slow = _submit(browser, "exp/tri3/log/align.1.log", SLOW_TAIL)
    assert wait_until(
        lambda: Analysis.objects.filter(pk=slow, status="running").exists(), 30, 0.005
    )
    assert cut_connections() >= 1
    ids = [slow]

    # Then cuts between every two requests while the worker runs what they queue: the web's
    # kept-alive connections are dead by the next request, the worker's at any moment.
    for log_path, text in TAILS[:20]:
        ids.append(_submit(browser, log_path, text))
        cut_connections()
    assert wait_until(lambda: all_finished(ids), 90), (
        Analysis.objects.exclude(status="done").values_list("pk", "status", "attempts"),
        worker.log.read_text()[-3000:],
    )

    assert_done_exactly_once(ids)
    assert _retries(worker) >= 1, "no cut landed in the middle of an analysis"
    for analysis_id in ids:  # and the pages show the results, on connections cut once more
        cut_connections()
        assert page_status(browser.get(f"/analyses/{analysis_id}/")) == "done"


@pytest.mark.skipif(
    os.environ.get("FAULTS_RESTART_POSTGRES") != "1",
    reason="restarts the whole PostgreSQL cluster: set FAULTS_RESTART_POSTGRES=1 to run it",
)
def test_a_real_postgres_restart_mid_analysis_loses_nothing(web, workers, engineer):
    need(shutil.which("pg_ctlcluster") is not None, "pg_ctlcluster is not installed")
    worker = workers("pg-restart")
    browser = Browser(web.url, engineer.username, PASSWORD)
    ids = [_submit(browser, log_path, text) for log_path, text in TAILS[:10]]
    ids.append(_submit(browser, "exp/tri3/log/align.1.log", SLOW_TAIL))
    assert wait_until(
        lambda: Analysis.objects.filter(pk=ids[-1], status="running").exists(), 60, 0.005
    )
    version, cluster = os.environ.get("FAULTS_POSTGRES_CLUSTER", "15/main").split("/")
    started = time.monotonic()
    subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, "restart"],
        check=True,
        timeout=120,
    )
    restart_seconds = time.monotonic() - started
    connection.close()  # ours was cut too
    assert wait_until(lambda: all_finished(ids), 120), worker.log.read_text()[-3000:]
    assert_done_exactly_once(ids)
    for analysis_id in ids:
        assert page_status(browser.get(f"/analyses/{analysis_id}/")) == "done"
    print(f"cluster restart took {restart_seconds:.1f} s")
