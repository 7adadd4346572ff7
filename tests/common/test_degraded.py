"""With the shared cache down (a Redis that CACHE_URL names, stopped), the API keeps
answering: throttles let calls through with a warning in the log, never a 500. The pages
compute again what they would have read from it."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from incidents.models import Incident
from tests.factories import IncidentFactory
from tests.services import free_port

pytestmark = pytest.mark.django_db
INCIDENTS = reverse("incidents-api:incident-list")


@pytest.fixture
def cache_down(settings):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/1",
        }
    }


def test_the_api_answers_and_says_so_in_the_log(cache_down, alice, caplog):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=alice).key)
    responses = [api.get(INCIDENTS) for _ in range(3)]
    assert [response.status_code for response in responses] == [200, 200, 200]
    assert responses[0].json()["results"] == []
    assert "the cache is unreachable" in caplog.text


def test_an_anonymous_call_is_still_refused_not_a_500(cache_down):
    response = APIClient().get(INCIDENTS)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_submitting_a_tail_still_works(cache_down, alice, catalog):
    api = APIClient()
    api.force_authenticate(alice)
    response = api.post(
        reverse("incidents-api:analysis-list"), {"log": "OSError: [Errno 28] x"}, format="json"
    )
    assert response.status_code == 202
    assert response.json()["status"] == "queued"


def test_pages_work_too(cache_down, alice_client):
    assert alice_client.get(reverse("incidents:incident-list")).status_code == 200


def test_an_incident_page_ranks_its_similar_incidents_itself(
    cache_down, alice_client, alice, catalog, caplog
):
    symptom = Incident.objects.get(slug="host-oom").symptom
    IncidentFactory(slug="host-oom-again", title="Host OOM again", symptom=symptom, reporter=alice)

    response = alice_client.get(reverse("incidents:incident-detail", args=["host-oom"]))

    assert response.status_code == 200
    assert "host-oom-again" in [incident.slug for incident, _ in response.context["similar"]]
    assert "the cache is unreachable" in caplog.text
