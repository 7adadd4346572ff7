"""Compiling the knowledge ahead, as gunicorn's master and Celery's parent do before they fork
(config/gunicorn.py, config/celery.py): the index is ready, and a database that cannot answer
yet leaves the build to the first request instead of stopping the server."""

import pytest
from django.db import connection

from incidents import knowledge
from incidents.knowledge import knowledge_index, knowledge_state_forget, knowledge_warm
from incidents.models import Incident

pytestmark = pytest.mark.django_db


def test_it_compiles_the_book_and_says_how_much(catalog):
    knowledge_state_forget()

    said = knowledge_warm()

    assert said.startswith(f"knowledge compiled ahead: {Incident.objects.count()} incidents")
    assert knowledge_index() is knowledge._cached.index


def test_a_database_that_cannot_answer_leaves_it_to_the_first_request(catalog):
    knowledge_state_forget()
    table = Incident._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {table} RENAME TO away_for_the_test")
    knowledge._cached = None
    try:
        said = knowledge_warm()
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"ALTER TABLE away_for_the_test RENAME TO {table}")

    assert said.startswith("knowledge not compiled ahead: the database cannot answer yet")
    assert knowledge._cached is None
    assert "gpu-oom" in knowledge_index().incidents
