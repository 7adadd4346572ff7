"""Guessing passwords: after LOGIN_FAILURE_LIMIT (5) wrong ones for a username from one address,
that pair is refused for the cool-off, the right password included, with a message saying so."""

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

LOGIN = reverse("login")
LOCKED = "Too many failed sign-ins for this account from your address"


def _sign_in(client: Client, username: str, password: str, address: str = "10.0.0.7"):
    return client.post(LOGIN, {"username": username, "password": password}, REMOTE_ADDR=address)


def _fail(client: Client, username: str, times: int, address: str = "10.0.0.7") -> list[int]:
    return [_sign_in(client, username, f"wrong-{n}", address).status_code for n in range(times)]


def test_the_limit_is_five_with_a_cool_off():
    assert settings.AXES_FAILURE_LIMIT == 5
    assert settings.AXES_COOLOFF_TIME.total_seconds() > 0
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"


def test_a_wrong_password_shows_the_usual_form_error(client, alice):
    response = _sign_in(client, "alice", "nope")
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.text
    assert LOCKED not in response.text


def test_it_refuses_the_right_password_after_five_wrong_ones(client, alice):
    assert _fail(client, "alice", 4) == [200] * 4
    fifth = _sign_in(client, "alice", "wrong-again")
    assert fifth.status_code == 429
    assert LOCKED in fifth.text
    right = _sign_in(client, "alice", "pw-alice")
    assert right.status_code == 429
    assert LOCKED in right.text
    assert "Try again in 15 minutes" in right.text
    assert "_auth_user_id" not in client.session
    # The page is the sign-in form again, with the username kept.
    assert 'name="password"' in right.text
    assert 'value="alice"' in right.text


def test_other_users_and_other_addresses_are_unaffected(client, alice, bob):
    _fail(client, "alice", 5)
    assert _sign_in(client, "alice", "pw-alice").status_code == 429
    assert _sign_in(Client(), "bob", "pw-bob").status_code == 302
    assert _sign_in(Client(), "alice", "pw-alice", address="10.0.0.8").status_code == 302


def test_a_success_before_the_limit_starts_the_count_again(client, alice):
    _fail(client, "alice", 4)
    assert _sign_in(client, "alice", "pw-alice").status_code == 302
    client.post(reverse("logout"))
    assert _fail(client, "alice", 4) == [200] * 4
    assert _sign_in(client, "alice", "pw-alice").status_code == 302


def test_the_cool_off_ends(client, alice, settings):
    from axes.models import AccessAttempt

    _fail(client, "alice", 5)
    assert _sign_in(client, "alice", "pw-alice").status_code == 429
    # Age the attempts past the cool-off instead of waiting for it.
    AccessAttempt.objects.update(
        attempt_time=AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME * 2
    )
    assert _sign_in(client, "alice", "pw-alice").status_code == 302


def test_an_unknown_username_is_locked_out_like_a_real_one(client, alice):
    """Same answers whether the account exists: the lockout reveals nothing about it."""
    assert _fail(client, "nobody", 5)[-1] == 429
    assert _fail(Client(), "alice", 5, address="10.0.0.9")[-1] == 429


def test_the_admin_sign_in_is_guarded_too(client, lena):
    for n in range(5):
        response = client.post(
            reverse("admin:login"),
            {"username": "lena", "password": f"x{n}"},
            REMOTE_ADDR="10.1.1.1",
        )
        assert response.status_code < 500
    response = client.post(
        reverse("admin:login"), {"username": "lena", "password": "pw-lena"}, REMOTE_ADDR="10.1.1.1"
    )
    assert response.status_code == 429
    assert LOCKED in response.text


def test_hostile_sign_in_bodies_never_fail_the_server(client, alice):
    for body in (
        {"username": "alice\x00", "password": "pw-alice"},
        {"username": "a" * 10_000, "password": "x"},
        {"username": "", "password": ""},
        {"username": ["alice", "bob"], "password": "x"},
        {},
    ):
        assert client.post(LOGIN, body).status_code in (200, 429)
        assert client.post(reverse("admin:login"), body).status_code in (200, 429)
    raw = client.post(LOGIN, b"\xff\xfe", content_type="application/x-www-form-urlencoded")
    assert raw.status_code == 200


def test_a_huge_username_is_counted_under_its_first_150_characters(client):
    """Stored whole it would not fit axes' table (a 500 on PostgreSQL)."""
    from axes.models import AccessAttempt

    for _ in range(5):
        response = _sign_in(client, "b" * 10_000, "x")
    assert response.status_code == 429
    assert AccessAttempt.objects.get().username == "b" * 150


def test_without_a_cool_off_the_message_says_whom_to_ask(client, alice, settings):
    settings.AXES_COOLOFF_TIME = None
    _fail(client, "alice", 5)
    response = _sign_in(client, "alice", "pw-alice")
    assert response.status_code == 429
    assert "Ask an administrator to unlock it." in response.text
