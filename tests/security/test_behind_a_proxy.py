"""Behind the HTTPS proxy the README expects, every request comes from the proxy's address:
the lockout and the throttles count the client the proxy names instead (TRUSTED_PROXY_COUNT),
and a hop the client forges in X-Forwarded-For itself does not move it to another count."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")
PROXY = "10.0.0.2"
LOCKED = "Too many failed sign-ins for this account from your address"


@pytest.fixture(autouse=True)
def one_proxy(settings):
    settings.TRUSTED_PROXY_COUNT = 1


def _sign_in(password: str, forwarded_for: str):
    return Client().post(
        LOGIN,
        {"username": "lena", "password": password},
        REMOTE_ADDR=PROXY,
        HTTP_X_FORWARDED_FOR=forwarded_for,
    )


def test_a_lockout_holds_the_guessing_client_only(lena):
    for n in range(5):
        _sign_in(f"wrong-{n}", "203.0.113.7")
    locked = _sign_in("pw-lena", "203.0.113.7")
    assert locked.status_code == 429 and LOCKED in locked.text
    assert _sign_in("pw-lena", "198.51.100.4").status_code == 302


def test_a_forged_hop_does_not_escape_the_lockout(lena):
    for n in range(5):
        _sign_in(f"wrong-{n}", "203.0.113.7")
    # The client sends "X-Forwarded-For: 192.0.2.99"; the proxy appends what it saw.
    assert _sign_in("pw-lena", "192.0.2.99, 203.0.113.7").status_code == 429
    assert _sign_in("pw-lena", "garbage, 203.0.113.7").status_code == 429


def test_without_trusted_proxies_the_header_is_ignored(lena, settings):
    settings.TRUSTED_PROXY_COUNT = 0
    for n in range(5):
        _sign_in(f"wrong-{n}", f"203.0.113.{n}")
    assert _sign_in("pw-lena", "198.51.100.4").status_code == 429  # all from the proxy


def test_an_address_that_is_no_address_counts_as_the_proxy(lena):
    for n in range(5):
        _sign_in(f"wrong-{n}", "not-an-address")
    assert _sign_in("pw-lena", "").status_code == 429


def test_the_anonymous_rate_is_per_client_not_per_proxy(monkeypatch):
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "2/min"})
    url = reverse("incidents-api:incident-list")

    def call(forwarded_for: str) -> int:
        api = APIClient(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded_for)
        return api.get(url).status_code

    assert [call("203.0.113.7") for _ in range(3)] == [401, 401, 429]
    assert call("192.0.2.99, 203.0.113.7") == 429
    assert call("198.51.100.4") == 401
