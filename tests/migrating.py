"""Moving the test database's schema to a migration and back, for the upgrade tests."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_to(target: tuple[str, str] | None = None):
    """Migrate to `target` (the latest schema when None); the apps as of that migration."""
    executor = MigrationExecutor(connection)
    targets = [target] if target else executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps
