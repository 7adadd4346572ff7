"""Pages cost a fixed number of queries however many rows there are: each is pinned at two
sizes with the same count."""

from urllib.parse import quote

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from incidents.models import Analysis, Incident, KnowledgeGap, Signature
from incidents.services import analysis_run, incident_record_recurrence
from incidents.views.incidents import PAGE_SIZE
from tests.factories import IncidentFactory
from tests.incidents.test_analysis_pages import OOM_TAIL, _submit

pytestmark = pytest.mark.django_db

SIZES = [3, 30]


def _incidents(n: int) -> None:
    for i in range(n):
        IncidentFactory(
            tags=["gpu", f"t{i % 3}"], symptom=f"显存不足 out of memory on rank {i}", reporter=None
        )


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("query", [{}, {"q": "sample"}, {"q": "显存 of"}, {"sort": "-recurrences"}])
def test_the_list_page_is_constant(alice_client, django_assert_num_queries, n, query):
    _incidents(n)
    # A search reads where the recent incidents end once in a few minutes (PostgreSQL).
    alice_client.get(reverse("incidents:incident-list"), query)
    # session, user (with its role), count (up to its cap), page of incidents (+ reporter,
    # their tag names); and a search's most recent matches, which it ranks
    with django_assert_num_queries(5 if "q" in query else 4):
        response = alice_client.get(reverse("incidents:incident-list"), query)
    assert response.status_code == 200
    if "q" not in query:
        shown = response.content.decode().count('class="tag" href=')
        assert shown == 2 * min(n, PAGE_SIZE)


@pytest.mark.parametrize("n", SIZES)
def test_a_deep_list_page_is_constant(alice_client, django_assert_num_queries, monkeypatch, n):
    from incidents.views import incidents as views

    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    _incidents(n)
    first = alice_client.get(reverse("incidents:incident-list"))
    last = first.context["page"].rows[-1]
    deeper = reverse("incidents:incident-list") + first.context["links"].next
    # as the first page: the cursor is a filter on the same order, not an offset
    with django_assert_num_queries(4):
        response = alice_client.get(deeper)
    assert last not in response.context["page"].rows


@pytest.mark.parametrize("n", [1, 30])
def test_the_detail_page_is_constant(alice_client, alice, catalog, django_assert_num_queries, n):
    incident = Incident.objects.get(slug="gpu-oom")
    # an incident filed twice: the page has a similar incident to read, whatever the catalog's
    # other incidents score against this symptom
    IncidentFactory(symptom=incident.symptom)
    for _ in range(n):
        incident_record_recurrence(incident=incident, reported_by=alice)
    alice_client.get(incident.get_absolute_url())  # warm the compiled knowledge base
    # session, user, incident (with its tag names), history, knowledge token (one row; in
    # production read at most once a second), recurrences, signatures, runbooks of
    # stage/discipline (the recurrences page by cursor: no count), the similar incidents
    # (ranked by the first view, read by every view)
    with django_assert_num_queries(9):
        response = alice_client.get(incident.get_absolute_url())
    assert response.status_code == 200
    for name in incident.tags.values_list("name", flat=True):
        assert f'?tag={quote(name)}">{name}</a>' in response.content.decode()


def _gaps(n: int) -> None:
    incident = IncidentFactory()
    for i in range(n):
        KnowledgeGap.objects.create(
            key_hash=f"h{i}",
            key_template=f"frobnicator <*> exploded {i}",
            example_line=f"frobnicator 7 exploded {i}",
            analysis_count=i,
            incident=incident if i % 2 else None,
            explained_at=timezone.now() if i % 2 else None,
        )


@pytest.mark.parametrize("n", SIZES)
def test_the_gaps_page_is_constant(alice_client, django_assert_num_queries, n):
    _gaps(n)
    # session, user, open gaps (+ incident), explained gaps (+ incident)
    with django_assert_num_queries(4):
        response = alice_client.get(reverse("incidents:gap-list"))
    assert response.status_code == 200


@pytest.mark.parametrize("n", [1, 6])
def test_the_analysis_page_is_constant(alice_client, catalog, django_assert_num_queries, n):
    for _ in range(n):
        analysis = _submit(alice_client, log=OOM_TAIL * n)
        analysis_run(analysis_id=analysis.pk)
    alice_client.get(analysis.get_absolute_url())  # warm the compiled knowledge base
    # session, user, analysis, its text and report, this user's feedback, suggestions
    # (+ incidents), runbook of the stage
    with django_assert_num_queries(7):
        response = alice_client.get(analysis.get_absolute_url())
    assert response.status_code == 200


API_LISTS = [
    "incidents-api:incident-list",
    "incidents-api:signature-list",
    "incidents-api:recurrence-list",
    "incidents-api:analysis-list",
    "incidents-api:gap-list",
]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", API_LISTS)
def test_the_api_lists_are_constant(alice, django_assert_num_queries, n, name):
    _incidents(n)
    _gaps(n)
    for incident in Incident.objects.all():
        incident_record_recurrence(incident=incident, reported_by=alice)
        Signature.objects.create(incident=incident, pattern=f"rank {incident.pk}")
        Analysis.objects.create(submitted_by=alice, text="x", top_incident=incident)
    client = APIClient()
    client.force_authenticate(alice)
    first = client.get(reverse(name), {"page_size": 2}).json()
    # the page (+ what it names: incident, author, reporter; an incident's tag names)
    with django_assert_num_queries(1):
        response = client.get(first["next"])
    assert response.status_code == 200
    if name == "incidents-api:incident-list":
        assert all(len(row["tags"]) == 2 for row in response.json()["results"])
    assert response.json()["results"]
