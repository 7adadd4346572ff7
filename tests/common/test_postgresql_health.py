"""The PostgreSQL health check (common/postgresql): a live connection passes without a query,
one the server has ended fails, and the next query opens a new connection."""

from __future__ import annotations

import select

import psycopg
import pytest
from django.db import connection

from tests.services import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def postgres(db):
    if connection.vendor != "postgresql":
        pytest.skip("the test database is not PostgreSQL (set DATABASE_URL=postgres://…)")
    connection.ensure_connection()
    yield connection


def _other_connection() -> psycopg.Connection:
    params = connection.get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    return psycopg.connect(**params, autocommit=True)


def _last_query_of(pid: int) -> str:
    with _other_connection() as other:
        row = other.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
    return row[0]


def test_a_live_connection_is_usable_without_a_query(postgres):
    with postgres.cursor() as cursor:
        cursor.execute("SELECT 'the last query before the check'")
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
        cursor.execute("SELECT 'the last query before the check'")

    assert postgres.is_usable()

    assert _last_query_of(pid) == "SELECT 'the last query before the check'"


def test_a_connection_the_server_ended_is_replaced_before_a_request_uses_it(postgres):
    with postgres.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with _other_connection() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    socket = postgres.connection.fileno()
    assert wait_until(lambda: select.select([socket], [], [], 0.5)[0], timeout=30)

    assert not postgres.is_usable()

    postgres.health_check_done = False  # as at the start of a request
    with postgres.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
