"""The cast: alice and bob are engineers, lena is a lead. `catalog` is the real seed."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.roles import ENGINEER, LEAD, user_set_role


@pytest.fixture(autouse=True)
def _fast_and_quiet(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.LANGUAGE_CODE = "en"


def _user(username: str, role: str):
    user = get_user_model().objects.create_user(username=username, password="pw-" + username)
    user_set_role(user=user, role=role)
    return user


@pytest.fixture
def alice(db):
    return _user("alice", ENGINEER)


@pytest.fixture
def bob(db):
    return _user("bob", ENGINEER)


@pytest.fixture
def lena(db):
    return _user("lena", LEAD)


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def alice_client(alice):
    return _client_for(alice)


@pytest.fixture
def bob_client(bob):
    return _client_for(bob)


@pytest.fixture
def lena_client(lena):
    return _client_for(lena)


@pytest.fixture
def catalog(db):
    from incidents.seeding import catalog_seed

    return catalog_seed(language="en")
