"""The errors that mean "the database is out of reach just now", whichever layer raises them.

Django wraps its driver's errors in `django.db.OperationalError` and `InterfaceError`, but not
everywhere: closing a server-side cursor (`QuerySet.iterator()` on PostgreSQL) on a connection
the server has just terminated raises the driver's own error. Task retries and the release of
a worker's claim catch both.
"""

from django.db import InterfaceError, OperationalError, connection

DATABASE_ERRORS: tuple[type[Exception], ...] = (
    OperationalError,
    InterfaceError,
    connection.Database.OperationalError,  # type: ignore[attr-defined]
    connection.Database.InterfaceError,  # type: ignore[attr-defined]
)
