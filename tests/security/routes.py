"""The site's URLs as the resolver knows them, the roles that try them, and how a role's
client is made: shared by the authorization matrix and the admin's access test."""

from __future__ import annotations

from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from tests.security.conftest import api_client_for

ANONYMOUS, ALICE, BOB, LENA = "anonymous", "alice", "bob", "lena"
ROLES = (ANONYMOUS, BOB, ALICE, LENA)  # the lead last: her DELETE may remove the object


def _walk(resolver: URLResolver, namespace: str = "", prefix: str = ""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(filter(None, [namespace, entry.namespace or ""]))
            yield from _walk(entry, inner, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            name = f"{namespace}:{entry.name}" if namespace and entry.name else entry.name
            yield name, prefix + str(entry.pattern), entry.callback


ROUTES = list(_walk(get_resolver()))
SITE = sorted({name for name, pattern, _ in ROUTES if not pattern.startswith("admin/")} - {None})
ADMIN = sorted({name for name, pattern, _ in ROUTES if pattern.startswith("admin/")} - {None})


def role_client(role: str, users: dict, *, api: bool):
    if api:
        return api_client_for(users.get(role))
    client = Client()
    if role != ANONYMOUS:
        client.force_login(users[role])
    return client


def to_login(response) -> bool:
    return response.status_code == 302 and response["Location"].startswith(reverse("login"))


def excerpt(response) -> str:
    content = getattr(response, "content", b"")[:300]
    return content.decode("utf-8", "replace")
