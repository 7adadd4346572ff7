"""config.forking: what gunicorn's master and Celery's parent do before they fork."""

import pytest
from django.db import connections

from config.forking import prepare_to_fork
from incidents import knowledge


@pytest.mark.django_db(transaction=True)
def test_it_compiles_warms_and_leaves_no_connection_to_share(catalog):
    done = prepare_to_fork(web=True)

    assert done[0].startswith("knowledge compiled ahead")
    assert done[1].startswith("web warmed")
    assert knowledge._cached is not None
    assert all(connection.connection is None for connection in connections.all())


@pytest.mark.django_db(transaction=True)
def test_a_worker_parent_compiles_only_the_knowledge(catalog):
    done = prepare_to_fork(web=False)

    assert len(done) == 1 and done[0].startswith("knowledge compiled ahead")
    assert all(connection.connection is None for connection in connections.all())
