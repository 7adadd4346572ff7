"""The API's rate limits apply, and a 429 speaks the API's error body with a Retry-After."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from tests.security.conftest import UNEXPLAINED_TAIL, api_client_for

pytestmark = pytest.mark.django_db

INCIDENTS = reverse("incidents-api:incident-list")
ANALYSES = reverse("incidents-api:analysis-list")


@pytest.fixture
def rates(monkeypatch):
    """Tiny rates. DRF copies DEFAULT_THROTTLE_RATES onto the class at import, so patch there."""
    tiny = {"anon": "2/min", "user": "3/min", "analyses": "2/min"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", tiny)
    return tiny


def _assert_throttled(response):
    assert response.status_code == 429
    assert int(response["Retry-After"]) > 0
    error = response.json()["error"]
    assert error["status"] == 429
    assert error["code"] == "throttled"
    assert "throttled" in error["message"].lower()
    assert error["fields"] == {}


def test_the_configured_rates():
    from django.conf import settings

    config = settings.REST_FRAMEWORK
    assert config["DEFAULT_THROTTLE_CLASSES"] == [
        "common.throttles.AnonRateThrottle",
        "common.throttles.UserRateThrottle",
    ]
    assert set(config["DEFAULT_THROTTLE_RATES"]) == {"anon", "user", "analyses"}


def test_a_user_past_the_rate_gets_429_with_the_error_body(rates, alice):
    api = api_client_for(alice)
    assert [api.get(INCIDENTS).status_code for _ in range(3)] == [200, 200, 200]
    _assert_throttled(api.get(INCIDENTS))


def test_the_rate_is_per_user(rates, alice, bob):
    alice_api = api_client_for(alice)
    for _ in range(3):
        alice_api.get(INCIDENTS)
    _assert_throttled(alice_api.get(INCIDENTS))
    assert api_client_for(bob).get(INCIDENTS).status_code == 200


def test_submitting_analyses_has_its_own_tighter_rate(rates, alice):
    api = api_client_for(alice)
    for _ in range(2):
        assert api.post(ANALYSES, {"log": UNEXPLAINED_TAIL}, format="json").status_code == 202
    _assert_throttled(api.post(ANALYSES, {"log": UNEXPLAINED_TAIL}, format="json"))
    # Reading is still within the user rate.
    assert api.get(ANALYSES).status_code == 200


def test_anonymous_callers_are_throttled_not_refused_forever(rates):
    anonymous = APIClient(REMOTE_ADDR="10.2.0.1")
    assert [anonymous.get(INCIDENTS).status_code for _ in range(2)] == [401, 401]
    _assert_throttled(anonymous.get(INCIDENTS))
    _assert_throttled(anonymous.post(INCIDENTS, {}, format="json"))
    # Another address has its own count.
    assert APIClient(REMOTE_ADDR="10.2.0.2").get(INCIDENTS).status_code == 401


def test_the_schema_is_throttled_for_anonymous_callers_too(rates):
    anonymous = APIClient(REMOTE_ADDR="10.2.0.3")
    schema = reverse("api-schema")
    for _ in range(2):
        assert anonymous.get(schema, HTTP_ACCEPT="application/json").status_code == 401
    assert anonymous.get(schema, HTTP_ACCEPT="application/json").status_code == 429


def test_a_throttled_session_user_gets_the_same_body(rates, alice_client):
    for _ in range(3):
        alice_client.get(INCIDENTS)
    _assert_throttled(alice_client.get(INCIDENTS))
