"""The signed-in user comes with their role, in the one query that reads them; a change of
role shows on the next request; sessions signed in before the backend existed stay signed
in."""

import importlib

import pytest
from django.apps import apps
from django.contrib.auth import BACKEND_SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.roles import ENGINEER, LEAD, user_set_role

pytestmark = pytest.mark.django_db

ACCOUNT = reverse("account")


def test_a_page_knows_a_lead_from_the_query_that_reads_the_user(lena_client):
    lena_client.get(ACCOUNT)
    with CaptureQueriesContext(connection) as queries:
        response = lena_client.get(ACCOUNT)
    about_groups = [q["sql"] for q in queries.captured_queries if "auth_group" in q["sql"]]
    assert len(about_groups) == 1 and 'FROM "auth_user"' in about_groups[0]
    assert sum('"auth_user"' in q["sql"] for q in queries.captured_queries) == 1
    assert response.context["user_is_lead"] is True
    assert "lead" in response.content.decode()


def test_a_change_of_role_shows_on_the_next_request(alice, alice_client):
    assert alice_client.get(ACCOUNT).context["user_is_lead"] is False

    user_set_role(user=alice, role=LEAD)
    assert alice_client.get(ACCOUNT).context["user_is_lead"] is True

    user_set_role(user=alice, role=ENGINEER)
    assert alice_client.get(ACCOUNT).context["user_is_lead"] is False


def test_sessions_signed_in_through_django_s_backend_stay_signed_in(alice, client):
    before = "django.contrib.auth.backends.ModelBackend"
    client.force_login(alice, backend=before)
    key = client.session.session_key
    assert SessionStore(session_key=key)[BACKEND_SESSION_KEY] == before

    migration = importlib.import_module(
        "accounts.migrations.0002_sessions_signed_in_through_roles_backend"
    )
    migration.forwards(apps, None)

    assert SessionStore(session_key=key)[BACKEND_SESSION_KEY] == "accounts.backends.RolesBackend"
    assert client.get(ACCOUNT).context["user"] == alice
    migration.backwards(apps, None)
    assert SessionStore(session_key=key)[BACKEND_SESSION_KEY] == before
    assert Session.objects.count() == 1
