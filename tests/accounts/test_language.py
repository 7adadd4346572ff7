import re

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


MENU = [
    ("/analyses/new/", "Analyze a log", "分析日志"),
    ("/incidents/", "Incidents", "事故"),
    ("/gaps/", "Knowledge gaps", "知识缺口"),
    ("/matrix/", "Matrix", "速查矩阵"),
    ("/reports/weekly/", "Weekly report", "周报"),
    ("/runbooks/", "Runbooks", "操作手册"),
    ("/api/v1/docs/", "API docs", "接口文档"),
]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_main_menu_speaks_the_page_language_and_shows_admin_to_leads_only(
    alice_client, lena_client, language
):
    for client, is_lead in ((alice_client, False), (lena_client, True)):
        client.post(reverse("language-set"), {"language": language, "next": "/"})
        body = client.get(reverse("incidents:incident-list")).content.decode()
        nav = body.split('<nav class="mainnav"', 1)[1].split("</nav>", 1)[0]
        links = re.findall(r'<a href="([^"]+)">([^<]+)</a>', nav)
        expected = [(href, en if language == "en" else zh) for href, en, zh in MENU]
        if is_lead:
            expected.append(("/admin/", "Admin" if language == "en" else "管理后台"))
        assert links == expected
