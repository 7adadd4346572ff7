"""Sessions live in the database and are read with one statement: signing out ends a session
for every browser that holds its cookie, an expired or unknown session signs nobody in, and
a deactivated user is signed out on their next request."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

pytestmark = pytest.mark.django_db

ACCOUNT = reverse("account")
LOGIN = reverse("login")


def _same_session_as(client) -> Client:
    other = Client()
    other.cookies[settings.SESSION_COOKIE_NAME] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return other


def test_a_page_reads_its_session_in_one_statement(alice_client):
    alice_client.get(ACCOUNT)
    with CaptureQueriesContext(connection) as queries:
        response = alice_client.get(ACCOUNT)
    assert response.status_code == 200 and response.context["user"].username == "alice"
    reads = [q["sql"] for q in queries.captured_queries if "django_session" in q["sql"]]
    assert len(reads) == 1 and reads[0].startswith("SELECT")


def test_signing_out_ends_the_session_in_every_browser_that_holds_it(alice_client):
    elsewhere = _same_session_as(alice_client)
    assert elsewhere.get(ACCOUNT).status_code == 200

    alice_client.post(reverse("logout"))

    response = elsewhere.get(ACCOUNT)
    assert response.status_code == 302 and response["Location"].startswith(LOGIN)
    assert not Session.objects.exists()


def test_an_expired_session_signs_nobody_in_and_is_not_renewed(alice_client):
    key = alice_client.session.session_key
    Session.objects.filter(session_key=key).update(
        expire_date=timezone.now() - timedelta(seconds=1)
    )

    response = alice_client.get(ACCOUNT)

    assert response.status_code == 302 and response["Location"].startswith(LOGIN)
    assert not Session.objects.filter(session_key=key, expire_date__gt=timezone.now()).exists()


@pytest.mark.parametrize("cookie", ["no-such-session-key-0123456789ab", "", "'; DROP TABLE x;--"])
def test_an_unknown_session_key_signs_nobody_in(client, alice, cookie):
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie
    response = client.get(ACCOUNT)
    assert response.status_code == 302 and response["Location"].startswith(LOGIN)


def test_a_deactivated_user_is_signed_out_on_the_next_request(alice, alice_client):
    assert alice_client.get(ACCOUNT).status_code == 200
    alice.is_active = False
    alice.save(update_fields=["is_active"])

    response = alice_client.get(ACCOUNT)

    assert response.status_code == 302 and response["Location"].startswith(LOGIN)
