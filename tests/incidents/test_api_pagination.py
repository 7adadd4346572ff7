"""API lists page by cursor: every row once, in a stable order, whatever the sort."""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from incidents.models import Incident, Recurrence
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

LIST = reverse("incidents-api:incident-list")


@pytest.fixture
def api(alice):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=alice).key)
    return client


@pytest.fixture
def book(db):
    """Eleven incidents with ties in every sortable column, and some without a date."""
    same_time = timezone.now()
    for n in range(11):
        IncidentFactory(
            slug=f"i-{n:02}",
            title=f"Gradient overflow {n % 3}",
            symptom="gradient overflow" if n % 2 else "loss went up",
            occurred_on=datetime.date(2026, 11, 1 + n % 4) if n % 5 else None,
        )
    Incident.objects.filter(slug__in=["i-03", "i-04", "i-05", "i-06"]).update(
        updated_at=same_time, recurrence_count=2
    )


def _walk(api, url, params, *, key="slug"):
    """Every page by `next`, then back by `previous`: the rows of each, in order."""
    pages, body = [], api.get(url, params).json()
    assert body["previous"] is None
    while True:
        pages.append([row[key] for row in body["results"]])
        if body["next"] is None:
            break
        body = api.get(body["next"]).json()
    backwards = [pages[-1]]
    while body["previous"] is not None:
        body = api.get(body["previous"]).json()
        backwards.append([row[key] for row in body["results"]])
    assert backwards[::-1] == pages, "previous retraces the pages next went through"
    return pages


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"sort": "occurred"},
        {"sort": "-occurred"},
        {"sort": "-recurrences"},
        {"sort": "title"},
        {"ordering": "-title"},
        {"q": "gradient overflow"},
        {"q": "overflow", "sort": "-updated"},
    ],
)
def test_it_pages_through_every_incident_once_in_order(api, book, params):
    whole = [row["slug"] for row in api.get(LIST, {**params, "page_size": 200}).json()["results"]]
    pages = _walk(api, LIST, {**params, "page_size": 3})
    assert all(len(page) == 3 for page in pages[:-1])
    assert [slug for page in pages for slug in page] == whole
    assert len(set(whole)) == len(whole)


def test_it_orders_the_whole_list_as_the_database_does(api, book):
    slugs = [row["slug"] for row in api.get(LIST, {"page_size": 200}).json()["results"]]
    assert slugs == list(
        Incident.objects.order_by("-updated_at", "-id").values_list("slug", flat=True)
    )


def test_a_row_filed_while_paging_does_not_shift_the_pages(api, book):
    first = api.get(LIST, {"page_size": 4}).json()
    IncidentFactory(slug="late")
    second = api.get(first["next"]).json()
    seen = [row["slug"] for row in first["results"] + second["results"]]
    assert "late" not in seen and len(set(seen)) == 8


def test_it_pages_recurrences_with_many_on_one_day(api, alice):
    incident = IncidentFactory(slug="again")
    for n in range(7):
        Recurrence.objects.create(incident=incident, occurred_on=datetime.date(2026, 11, 1 + n % 2))
    url = reverse("incidents-api:recurrence-list")
    pages = _walk(api, url, {"page_size": 2}, key="id")
    ids = [pk for page in pages for pk in page]
    assert ids == list(Recurrence.objects.values_list("pk", flat=True))


def test_a_page_number_is_refused_in_words(api, book):
    response = api.get(LIST, {"page": "2"})
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "page": ["Pages follow the next link, not a number."]
    }


@pytest.mark.parametrize("cursor", ["garbage", "e30", "eyJrIjpbXSwidiI6W10sInIiOjB9"])
def test_a_cursor_not_made_by_the_list_is_no_page_of_it(api, book, cursor):
    response = api.get(LIST, {"cursor": cursor})
    assert response.status_code == 404
    assert response.json()["error"] == {
        "status": 404,
        "code": "not_found",
        "message": "Not a cursor of this list: follow its next link.",
        "fields": {},
    }


def test_an_empty_cursor_is_the_first_page(api, book):
    first = api.get(LIST, {"page_size": 2}).json()
    assert api.get(LIST, {"page_size": 2, "cursor": ""}).json() == first


def test_a_cursor_of_another_sort_is_refused(api, book):
    following = api.get(LIST, {"page_size": 2, "sort": "title"}).json()["next"]
    response = api.get(following.replace("sort=title", "sort=-recurrences"))
    assert response.status_code == 404
    assert response.json()["error"]["message"] == (
        "Not a cursor of this list: follow its next link."
    )


def test_the_browsable_api_links_the_next_page(alice_client, book):
    response = alice_client.get(LIST, {"page_size": 2}, HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert "cursor=" in response.content.decode()
