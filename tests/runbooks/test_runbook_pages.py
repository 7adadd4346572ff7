"""Everyone signed in reads the runbooks, in their language; anonymous visitors see the login."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from runbooks.models import Runbook
from runbooks.services import checklist_run_start

pytestmark = pytest.mark.django_db

LIST = reverse("runbooks:runbook-list")


def _detail(slug: str) -> str:
    return reverse("runbooks:runbook-detail", args=[slug])


def test_it_lists_the_runbooks_grouped_by_kind(alice_client, runbooks):
    page = alice_client.get(LIST).content.decode()
    for heading in ("Diagnose by stage", "Discipline checklists", "Trial runs", "Guides"):
        assert heading in page
    assert page.index("Diagnose a failed build") < page.index("Checklist: version lock")
    assert _detail("weekly-rhythm") in page


def test_it_shows_ordered_steps_with_copyable_commands_and_expected_output(alice_client, runbooks):
    response = alice_client.get(_detail("diagnose-build"))
    page = response.content.decode()
    assert response.status_code == 200
    runbook = Runbook.objects.get(slug="diagnose-build")
    first, second = runbook.steps[0], runbook.steps[1]
    assert page.index("Confirm the break is in the build") < page.index(
        "Keep the whole build output"
    )
    assert 'data-copy="step-1-command"' in page
    assert 'id="step-1-command"' in page
    assert escape('grep -rn "ERROR" exp/*/log | head -n 20') in page
    assert escape(first["expected"]) in page
    assert escape(second["command"]) in page  # multi-line commands kept verbatim
    assert "<script" not in page.split("</head>", 1)[1]  # no inline script: the CSP forbids them


def test_a_step_without_a_command_has_no_copy_button(alice_client, runbooks):
    runbook = Runbook.objects.get(slug="weekly-rhythm")
    without = [n for n, step in enumerate(runbook.steps, start=1) if not step["command"]]
    page = alice_client.get(_detail("weekly-rhythm")).content.decode()
    assert without
    for number in without:
        assert f'data-copy="step-{number}-command"' not in page


@pytest.mark.parametrize(
    ("slug", "calculator"),
    [
        ("diagnose-train", "Memory headroom per card"),
        ("tiny-sample-trial", "Memory headroom per card"),
        ("multi-node-communication", "Scaling efficiency"),
    ],
)
def test_it_shows_the_calculator_where_the_runbook_needs_it(
    alice_client, runbooks, slug, calculator
):
    page = alice_client.get(_detail(slug)).content.decode()
    assert 'id="calculator"' in page
    assert calculator in page
    assert reverse("runbooks:runbook-calculate", args=[slug]) in page


def test_it_shows_no_calculator_elsewhere(alice_client, runbooks):
    page = alice_client.get(_detail("diagnose-build")).content.decode()
    assert 'id="calculator"' not in page


def test_it_shows_the_edit_button_to_leads_only(alice_client, lena_client, runbooks):
    edit = reverse("runbooks:runbook-edit", args=["weekly-rhythm"])
    assert edit not in alice_client.get(_detail("weekly-rhythm")).content.decode()
    assert edit in lena_client.get(_detail("weekly-rhythm")).content.decode()


def test_it_answers_404_for_an_unknown_runbook(alice_client, runbooks):
    assert alice_client.get(_detail("no-such-runbook")).status_code == 404


def test_it_switches_to_chinese_and_back(alice_client, runbooks):
    language = reverse("language-set")
    alice_client.post(language, {"language": "zh-hans", "next": "/runbooks/"})
    page = alice_client.get(_detail("diagnose-train"))
    assert page["Content-Language"] == "zh-hans"
    body = page.content.decode()
    assert "训练失败排查" in body
    assert "Diagnose a failed training stage" not in body
    assert "grep -rn" in body  # commands are the same in every language
    assert "每周例行" in alice_client.get(LIST).content.decode()
    alice_client.post(language, {"language": "en"})
    assert (
        "Diagnose a failed training stage"
        in alice_client.get(_detail("diagnose-train")).content.decode()
    )


def test_it_says_when_a_page_is_shown_in_translation(alice_client, db):
    from runbooks.seeding import runbook_catalog_seed

    runbook_catalog_seed(language="zh-hans")
    page = alice_client.get(_detail("weekly-rhythm")).content.decode()
    assert "The weekly rhythm" in page
    assert "Shown in your language; the original is written in another." in page


@pytest.mark.parametrize(
    "url",
    [
        LIST,
        reverse("runbooks:runbook-detail", args=["weekly-rhythm"]),
        reverse("runbooks:runbook-edit", args=["weekly-rhythm"]),
        reverse("runbooks:run-list"),
    ],
)
def test_it_shows_anonymous_visitors_the_login_page_only(client, runbooks, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_it_links_the_runbooks_from_the_navigation(alice_client, runbooks):
    page = alice_client.get(reverse("incidents:incident-list")).content.decode()
    assert f'href="{LIST}"' in page


@pytest.mark.parametrize("extra_runs", [0, 12])
def test_the_list_page_is_constant(
    alice_client, alice, runbooks, django_assert_num_queries, extra_runs
):
    for _ in range(extra_runs):
        checklist_run_start(runbook=Runbook.objects.get(slug="weekly-rhythm"), user=alice)
    # session, user, runbooks
    with django_assert_num_queries(3):
        response = alice_client.get(LIST)
    assert response.status_code == 200


@pytest.mark.parametrize("runs", [1, 12])
def test_the_detail_page_is_constant(
    alice_client, alice, bob, lena, runbooks, django_assert_num_queries, runs
):
    from datetime import timedelta

    from django.utils import timezone

    from runbooks.services import runbook_update

    runbook = Runbook.objects.get(slug="diagnose-train")
    for n in range(runs):
        # A run a week apart each: the open run of one week is not reused in another.
        when = timezone.now() - timedelta(weeks=n)
        checklist_run_start(runbook=runbook, user=(alice, bob)[n % 2], now=when)
    runbook_update(runbook=runbook, data={"summary": "Edited."}, language="en", actor=lena)
    # session, user, runbook, recent runs (+ who started them), history (+ who)
    with django_assert_num_queries(5):
        response = alice_client.get(_detail("diagnose-train"))
    assert response.status_code == 200
    assert response.content.decode().count("/runbooks/runs/") >= min(runs, 10)
