"""Every form POST and every session-authenticated API write needs the CSRF token.

The token reaches htmx through `hx-headers` on <body> (the cookie is HttpOnly), and the
API's token authentication, which a browser never sends by itself, needs none.
"""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.security.conftest import UNEXPLAINED_TAIL, World, api_client_for
from tests.security.test_authorization_matrix import API, ARGS, PAGES

pytestmark = pytest.mark.django_db

PAGE_POSTS = sorted(name for name, methods in PAGES.items() if "POST" in methods)
API_WRITES = sorted(
    (name, method)
    for name, methods in API.items()
    for method in methods
    if method in ("POST", "PUT", "PATCH", "DELETE")
)


def _strict(user=None) -> Client:
    client = Client(enforce_csrf_checks=True)
    if user is not None:
        client.force_login(user)
    return client


def _token(client: Client) -> str:
    """The token as a page hands it to htmx: from <body hx-headers>, not from the cookie."""
    page = client.get(reverse("incidents:analysis-new"))
    headers = re.search(r"<body hx-headers='([^']+)'", page.content.decode()).group(1)
    return json.loads(headers)["X-CSRFToken"]


def _url(name: str, world: World) -> str:
    return reverse(name, kwargs=ARGS[name](world) if name in ARGS else None)


@pytest.mark.parametrize("name", PAGE_POSTS)
def test_every_form_post_needs_the_token(name, world, lena):
    spec = PAGES[name]["POST"]
    client = _strict(lena)
    url = _url(name, world)
    refused = client.post(url, spec.body(world, "lena"))
    assert refused.status_code == 403, (url, refused.status_code)
    assert b"CSRF" in refused.content


def test_a_form_post_with_the_token_goes_through(world, lena):
    client = _strict(lena)
    token = _token(client)
    body = {"log": UNEXPLAINED_TAIL, "csrfmiddlewaretoken": token}
    assert client.post(reverse("incidents:analysis-new"), body).status_code == 302
    # htmx sends it as a header.
    assert (
        client.post(
            reverse("incidents:signature-try"),
            {"pattern": "lost its grip"},
            HTTP_X_CSRFTOKEN=token,
            HTTP_HX_REQUEST="true",
        ).status_code
        == 200
    )


def test_signing_in_needs_the_token_too(alice):
    client = _strict()
    refused = client.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    assert refused.status_code == 403
    page = client.get(reverse("login"))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    body = {"username": "alice", "password": "pw-alice", "csrfmiddlewaretoken": token}
    assert client.post(reverse("login"), body).status_code == 302


def test_a_token_from_the_cookie_alone_is_not_readable_by_scripts(client):
    client.get(reverse("login"))
    assert client.cookies[settings.CSRF_COOKIE_NAME]["httponly"]


@pytest.mark.parametrize(("name", "method"), API_WRITES)
def test_session_authenticated_api_writes_need_the_token(name, method, world, lena):
    spec = API[name][method]
    client = _strict(lena)
    url = _url(name, world)
    send = getattr(client, method.lower())
    refused = send(url, json.dumps(spec.body(world, "lena")), content_type="application/json")
    assert refused.status_code == 403, (url, refused.status_code)
    assert "CSRF" in refused.json()["error"]["message"]
    accepted = send(
        url,
        json.dumps(spec.body(world, "lena")),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=_token(client),
    )
    assert accepted.status_code in spec.ok, (url, accepted.status_code, accepted.content[:300])


def test_token_authenticated_api_writes_need_no_csrf(world, alice):
    api = api_client_for(alice)
    api.handler.enforce_csrf_checks = True
    response = api.post(
        reverse("incidents-api:analysis-list"), {"log": UNEXPLAINED_TAIL}, format="json"
    )
    assert response.status_code == 202
