"""The Django admin: leads only, on every URL the admin registers."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.urls import NoReverseMatch, reverse

from incidents.models import Incident
from tests.security.conftest import World
from tests.security.routes import ADMIN, ALICE, BOB, LENA, ROLES, ROUTES, role_client, to_login

pytestmark = pytest.mark.django_db


def _admin_kwargs(name: str, world: World, users: dict) -> dict:
    """Real objects for the admin's URL arguments, derived from the URL's name."""
    pattern = next(p for n, p, _ in ROUTES if n == name)
    kwargs = {}
    if "<app_label>" in pattern:
        kwargs["app_label"] = "incidents"
    if "<path:object_id>" in pattern or "<object_id>" in pattern:
        model = _admin_model(name)
        row = model.objects.order_by("pk").first() if model else None
        kwargs["object_id"] = str(row.pk) if row else "1"
    if "<int:content_type_id>" in pattern or "<path:content_type_id>" in pattern:
        kwargs["content_type_id"] = ContentType.objects.get_for_model(Incident).pk
        kwargs["object_id"] = str(world.incident.pk)
    if "<id>" in pattern:
        kwargs["id"] = str(users[BOB].pk)
    return kwargs


def _admin_model(name: str):
    from django.contrib import admin

    for model in admin.site._registry:
        prefix = f"admin:{model._meta.app_label}_{model._meta.model_name}_"
        if name.startswith(prefix):
            return model
    return None


@pytest.mark.parametrize("name", ADMIN)
def test_only_leads_open_the_admin(name, world, alice, bob, lena):
    users = {ALICE: alice, BOB: bob, LENA: lena}
    try:
        if name.endswith("_simple_history"):  # one historical version of an object
            row = _admin_model(name).objects.order_by("pk").first()
            url = reverse(name, args=[row.pk, row.history.earliest().history_id])
        else:
            url = reverse(name, kwargs=_admin_kwargs(name, world, users) or None)
    except NoReverseMatch as error:  # pragma: no cover - a new kind of admin argument
        pytest.fail(f"Fill the arguments of {name}: {error}")
    login = reverse("admin:login")
    wrong = []
    for role in ROLES:
        client = role_client(role, users, api=False)
        response = client.get(url)
        status = response.status_code
        got = f"{role}: GET {url} → {status}"
        if status >= 500:
            wrong.append(f"{got} (server error)")
        elif name == "admin:login":
            continue  # the sign-in form itself; it tells a signed-in engineer they may not enter
        elif role == LENA:
            if status in (301, 302) and response["Location"].startswith(login):
                wrong.append(f"{got}: a lead was sent to sign in")
        elif name == "admin:logout" and response.get("Location") == reverse("admin:index"):
            continue  # the admin sends a non-member on to its index, which asks to sign in
        elif not (to_login(response) or response["Location"].startswith(login)):
            wrong.append(f"{got}, expected a redirect to a sign-in page")
    assert not wrong, "\n".join(wrong)


def test_a_lead_opens_the_admin_and_an_engineer_does_not(alice_client, lena_client):
    assert lena_client.get(reverse("admin:index")).status_code == 200
    assert lena_client.get(reverse("admin:incidents_incident_changelist")).status_code == 200
    assert alice_client.get(reverse("admin:index")).status_code == 302
