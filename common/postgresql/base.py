"""Django's PostgreSQL backend, with a health check that costs no round trip.

A persistent connection is checked before each request uses it (CONN_HEALTH_CHECKS), so
that a server that restarted or cut its clients off costs no request a 500. Django checks
with `SELECT 1`: one more query on every request, a sixth of a page's queries. A server that
ends a connection says so first (a FATAL message, then the socket closes), and an idle
connection that is alive has nothing to read: so the socket is asked, without waiting,
whether anything arrived. Anything there (the end of the connection, or an unexpected
message) makes the connection unusable, and Django opens a new one.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        if connection.info.transaction_status != pq.TransactionStatus.IDLE:
            return super().is_usable()
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):
            return False
        return not readable
