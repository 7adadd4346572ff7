import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_it_remembers_the_language_per_user_across_browsers(alice_client, alice):
    response = alice_client.post(
        reverse("language-set"), {"language": "zh-hans", "next": "/incidents/"}
    )
    assert response.status_code == 302
    other_browser = Client()
    other_browser.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    page = other_browser.get(reverse("incidents:incident-list"))
    assert page["Content-Language"] == "zh-hans"
    assert "事故" in page.content.decode()


def test_it_refuses_an_unknown_language(alice_client):
    response = alice_client.post(reverse("language-set"), {"language": "klingon"})
    assert response.status_code == 400


def test_it_does_not_redirect_to_another_site(alice_client):
    response = alice_client.post(
        reverse("language-set"), {"language": "en", "next": "https://evil.example/"}
    )
    assert response["Location"] == "/"
