"""Pages cost a fixed number of queries however many incidents there are."""

import pytest
from django.urls import reverse

from incidents.services import incident_record_recurrence
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("n", [5, 40])
def test_the_list_page_is_constant(alice_client, django_assert_num_queries, n):
    for i in range(n):
        IncidentFactory(tags=["gpu", f"t{i % 3}"])
    # session, user, count, page of incidents (+ reporter), their tags, lead check
    with django_assert_num_queries(6):
        response = alice_client.get(reverse("incidents:incident-list"), {"q": "sample"})
    assert response.status_code == 200


@pytest.mark.parametrize("n", [1, 30])
def test_the_detail_page_is_constant(alice_client, alice, catalog, django_assert_num_queries, n):
    from incidents.models import Incident

    incident = Incident.objects.get(slug="gpu-oom")
    for _ in range(n):
        incident_record_recurrence(incident=incident, reported_by=alice)
    alice_client.get(incident.get_absolute_url())  # warm the compiled knowledge base
    # session, user, incident, tags, history, knowledge token (one row; in production read
    # at most once a second), similar incidents, lead check, recurrences, signatures,
    # runbooks of stage/discipline, the recurrences' count for their pages
    with django_assert_num_queries(12):
        response = alice_client.get(incident.get_absolute_url())
    assert response.status_code == 200
