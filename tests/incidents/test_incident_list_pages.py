"""The incident list pages by next and previous links, like the API: a deep page costs what the
first one does, and the count stops at a cap instead of counting every match."""

import html
import re
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from incidents import services
from incidents.filters import IncidentFilterSet
from incidents.models import Incident, Tag
from incidents.views import incidents as views
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

LIST = reverse("incidents:incident-list")


@pytest.fixture
def small_pages(monkeypatch):
    """Pages of 2 and a count that stops at 3, so that a handful of incidents spans pages."""
    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    monkeypatch.setattr(views, "COUNT_CAP", 3)


def _links(body: str) -> dict[str, str]:
    """The pagination's links by their rel (the first page's link as "first")."""
    nav = re.search(r'<nav class="pagination".*?</nav>', body, re.S)
    if not nav:
        return {}
    found = {}
    for href, rest in re.findall(r'<a href="([^"]*)"( rel="\w+")?', nav.group(0)):
        found[rest.split('"')[1] if rest else "first"] = html.unescape(href)
    return found


def _walk(client, query: dict) -> tuple[list[list[str]], list[dict[str, str]]]:
    """Every page from the first by its next links: the slugs and the links of each."""
    pages, links = [], []
    url = LIST + "?" + "&".join(f"{k}={v}" for k, v in query.items())
    while url:
        response = client.get(url)
        assert response.status_code == 200
        pages.append([incident.slug for incident in response.context["page"]])
        links.append(_links(response.content.decode()))
        url = LIST + links[-1]["next"] if "next" in links[-1] else ""
    return pages, links


def test_next_links_reach_every_incident_once_in_the_lists_order(alice_client, small_pages):
    for n in range(5):
        IncidentFactory(slug=f"inc-{n}")
    newest_first = list(Incident.objects.values_list("slug", flat=True))

    pages, links = _walk(alice_client, {})

    assert pages == [newest_first[0:2], newest_first[2:4], newest_first[4:]]
    assert "prev" not in links[0] and "first" not in links[0]
    assert "cursor=" in links[2]["prev"] and links[2]["first"] == "?"


def test_previous_links_come_back_through_the_same_pages(alice_client, small_pages):
    for n in range(5):
        IncidentFactory(slug=f"inc-{n}")
    pages, links = _walk(alice_client, {})

    back = alice_client.get(LIST + links[2]["prev"])

    assert [incident.slug for incident in back.context["page"]] == pages[1]


def test_the_links_keep_the_search_filters_and_sort_in_chinese(alice_client, small_pages):
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    for n in range(5):
        IncidentFactory(slug=f"oom-{n}", title=f"显存不足 {n}", stage="serve")
    IncidentFactory(slug="other", title="磁盘已满", stage="serve")
    query = {"q": "显存", "stage": "serve", "sort": "title"}

    pages, links = _walk(alice_client, query)

    assert pages == [["oom-0", "oom-1"], ["oom-2", "oom-3"], ["oom-4"]]
    for link in (links[0]["next"], links[1]["next"], links[2]["prev"], links[2]["first"]):
        assert "q=%E6%98%BE%E5%AD%98" in link and "stage=serve" in link and "sort=title" in link
    assert "下一页" in alice_client.get(LIST, query).content.decode()


def test_the_count_is_exact_up_to_the_cap_then_says_more(alice_client, small_pages):
    for n in range(3):
        IncidentFactory(slug=f"inc-{n}")
    assert "3 incidents" in alice_client.get(LIST).content.decode()

    IncidentFactory(slug="inc-3")

    body = alice_client.get(LIST).content.decode()
    assert "More than 3 incidents" in body and "4 incidents" not in body


def test_a_cursor_of_another_sort_is_no_page_of_this_list(alice_client, small_pages):
    for n in range(3):
        IncidentFactory(slug=f"inc-{n}")
    _, links = _walk(alice_client, {})

    sorted_by_title = alice_client.get(LIST + links[0]["next"] + "&sort=title")
    garbled = alice_client.get(LIST, {"cursor": "not-a-cursor"})

    assert sorted_by_title.status_code == 404 and garbled.status_code == 404


def test_a_page_number_from_an_old_link_shows_the_first_page(alice_client, small_pages):
    for n in range(3):
        IncidentFactory(slug=f"inc-{n}")

    response = alice_client.get(LIST, {"page": "2"})

    assert response.status_code == 200
    assert [i.slug for i in response.context["page"]] == ["inc-2", "inc-1"]


@pytest.fixture
def small_probe(monkeypatch):
    """A bounded walk of 3 rows: a filter that matches only older incidents is found past it."""
    from common import keyset

    monkeypatch.setattr(keyset, "PROBE_ROWS", 3)
    monkeypatch.setattr(keyset, "PROBE_ROWS_PER_ROW", 1)


@pytest.mark.parametrize("sort", ["", "occurred", "-recurrences"])
def test_filters_that_rarely_meet_are_paged_like_any_other(
    alice_client, small_pages, small_probe, sort
):
    for n in range(3):  # the oldest: the only ones with both
        IncidentFactory(
            slug=f"both-{n}",
            severity="high",
            tags=["nccl"],
            occurred_on=None if n == 1 else date(2026, 1, 1 + n),
        )
        Incident.objects.filter(slug=f"both-{n}").update(recurrence_count=n)
    for n in range(6):  # newer, each with one of the two
        IncidentFactory(
            slug=f"one-{n}",
            severity="high" if n % 2 else "low",
            tags=["gpu"] if n % 2 else ["nccl"],
            occurred_on=date(2026, 2, 1 + n),
        )
    query = {"tag": "NCCL", "severity": "high", **({"sort": sort} if sort else {})}
    expected = [
        incident.slug
        for incident in Incident.objects.filter(severity="high", tags__name="nccl").order_by(
            *IncidentFilterSet({"sort": sort} if sort else {}).qs.query.order_by or ["-updated_at"],
            "-id",
        )
    ]

    pages, links = _walk(alice_client, query)

    assert [slug for page in pages for slug in page] == expected
    assert sorted(expected) == ["both-0", "both-1", "both-2"]
    back = alice_client.get(LIST + links[-1]["prev"])
    assert [incident.slug for incident in back.context["page"]] == pages[0]
    assert back.context["count"] == 3


def test_a_tag_renamed_or_deleted_in_the_admin_moves_its_incidents(lena_client):
    IncidentFactory(slug="tagged", tags=["nccl", "gpu"])
    tag = Tag.objects.get(name="nccl")

    lena_client.post(reverse("admin:incidents_tag_change", args=[tag.pk]), {"name": "hccl"})

    assert _slugs_tagged(lena_client, "hccl") == ["tagged"]
    assert _slugs_tagged(lena_client, "nccl") == []
    assert Incident.objects.get(slug="tagged").tag_list == "gpu, hccl"
    lena_client.post(reverse("admin:incidents_tag_delete", args=[tag.pk]), {"post": "yes"})
    assert _slugs_tagged(lena_client, "hccl") == []
    assert Incident.objects.get(slug="tagged").tag_list == "gpu"


@pytest.mark.parametrize(
    ("language", "message"),
    [("en", "A tag name cannot hold a comma."), ("zh-hans", "标签名不能包含逗号。")],
)
def test_a_tag_renamed_in_the_admin_shows_on_its_rows_and_may_not_hold_a_comma(
    lena_client, language, message
):
    """A row reads its tags off the names the incident stores, joined by commas: a renamed tag
    shows under its new name, and a name with a comma in it is refused, not split in two."""
    IncidentFactory(slug="tagged", tags=["nccl", "gpu"])
    tag = Tag.objects.get(name="nccl")
    change = reverse("admin:incidents_tag_change", args=[tag.pk])

    refused = lena_client.post(change, {"name": "nccl, hccl"}, HTTP_ACCEPT_LANGUAGE=language)
    lena_client.post(change, {"name": "hccl"})

    assert message in refused.content.decode()
    assert Incident.objects.get(slug="tagged").tag_list == "gpu, hccl"
    row = lena_client.get(LIST).content.decode()
    assert 'href="?tag=hccl">hccl</a>' in row
    assert ">nccl</a>" not in row


def _slugs_tagged(client, tag: str) -> list[str]:
    return [incident.slug for incident in client.get(LIST, {"tag": tag}).context["page"]]


def test_rare_matches_are_read_from_the_filters_not_by_walking_the_list(
    alice_client, small_pages, small_probe
):
    for n in range(3):
        IncidentFactory(slug=f"old-{n}", severity="high", tags=["nccl"])
    for n in range(6):
        IncidentFactory(slug=f"new-{n}", severity="low", tags=["nccl"])

    def fenced(query: dict) -> bool:
        with CaptureQueriesContext(connection) as queries:
            assert alice_client.get(LIST, query).status_code == 200
        return any("OFFSET 0" in query["sql"] for query in queries.captured_queries)

    # past the bounded walk: read through the filters, then sorted
    assert fenced({"tag": "nccl", "severity": "high"})
    # the newest rows match: the bounded walk finds the page
    assert not fenced({"tag": "nccl", "severity": "low"})


def test_facets_asked_together_are_read_as_pairs_and_find_what_each_filter_finds(alice_client):
    """PostgreSQL reads two or more facets from the pairs index (migration 0026); whatever
    the database, the list holds exactly the incidents that have every facet asked."""
    facets = [
        ("train", "high", "validate-first", ["nccl", "gpu"]),
        ("train", "low", "version-lock", ["nccl"]),
        ("serve", "high", "validate-first", ["gpu"]),
        ("serve", "high", "reconcile", []),
        ("data", "medium", "reconcile", ["显存", "nccl"]),
    ]
    for n, (stage, severity, discipline, tags) in enumerate(facets):
        IncidentFactory(
            slug=f"f-{n}", stage=stage, severity=severity, discipline=discipline, tags=tags
        )
    asked = [
        {"tag": "NCCL", "severity": "high"},
        {"tag": "gpu", "stage": "serve"},
        {"stage": "serve", "severity": "high", "discipline": "reconcile"},
        {"tag": "显存", "discipline": "reconcile", "stage": "data", "severity": "medium"},
        {"tag": "nccl", "stage": "serve"},
        {"stage": "train", "discipline": "version-lock"},
    ]
    for query in asked:
        expected = {
            f"f-{n}"
            for n, (stage, severity, discipline, tags) in enumerate(facets)
            if query.get("tag", "").lower() in [*tags, ""]
            and query.get("stage", stage) == stage
            and query.get("severity", severity) == severity
            and query.get("discipline", discipline) == discipline
        }
        with CaptureQueriesContext(connection) as queries:
            page = alice_client.get(LIST, query).context["page"]

        assert {incident.slug for incident in page} == expected, query
        paired = any("incident_facet_pairs" in q["sql"] for q in queries.captured_queries)
        assert paired == (connection.vendor == "postgresql"), query


def test_counts_by_tag_stage_and_discipline_are_read_off_the_rollups(alice, alice_client):
    """A count by tag, stage and discipline reads the rollups, not the rows, whatever the size
    of the book; it stays exact as incidents are retagged, moved and deleted."""
    for n, (stage, discipline, tags) in enumerate(
        [
            ("train", "validate-first", ["nccl", "gpu"]),
            ("train", "version-lock", ["nccl"]),
            ("serve", "validate-first", ["gpu"]),
            ("data", "reconcile", ["显存"]),
        ]
    ):
        IncidentFactory(slug=f"c-{n}", stage=stage, discipline=discipline, tags=tags)
    moved = Incident.objects.get(slug="c-2")
    services.incident_update(
        incident=moved, data={"stage": "train"}, tags=["nccl", "显存"], actor=alice
    )
    services.incident_delete(incident=Incident.objects.get(slug="c-1"))
    asked = [
        {},
        {"tag": "NCCL"},
        {"tag": "nccl", "stage": "train"},
        {"tag": "显存", "stage": "train", "discipline": "validate-first"},
        {"stage": "train"},
        {"discipline": "validate-first"},
        {"tag": "gpu", "stage": "serve"},
        {"tag": "nowhere"},
    ]
    for query in asked:
        with CaptureQueriesContext(connection) as queries:
            response = alice_client.get(LIST, query)
        rows = IncidentFilterSet(query, queryset=Incident.objects.all()).qs.count()

        assert response.context["count"] == rows, query
        sql = [q["sql"] for q in queries.captured_queries]
        assert any('SUM("incidents_' in s and "cell" in s for s in sql), query
        assert not any("COUNT(" in s for s in sql), query


def test_other_filters_count_the_rows(alice_client):
    IncidentFactory(slug="high", severity="high", tags=["nccl"])
    IncidentFactory(slug="low", severity="low", tags=["nccl"])

    response = alice_client.get(LIST, {"tag": "nccl", "severity": "high"})

    assert response.context["count"] == 1
