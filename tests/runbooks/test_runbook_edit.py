"""Leads edit runbooks in the browser, with history; engineers read them."""

import json

import pytest
from django.urls import reverse

from accounts.roles import roles_ensure
from runbooks.models import Runbook
from runbooks.seeding import runbook_catalog_seed

pytestmark = pytest.mark.django_db

SLUG = "checklist-version-lock"
EDIT = reverse("runbooks:runbook-edit", args=[SLUG])


def _payload(runbook: Runbook, language: str = "en", **changes) -> dict:
    """What the edit form posts back untouched, with `changes` applied on top."""
    text = runbook.text(language)
    data = {
        "title": text.title,
        "summary": text.summary,
        "kind": runbook.kind,
        "stage": runbook.stage,
        "discipline": runbook.discipline,
        "calculator": runbook.calculator,
        "text_language": text.language,
        "revision": runbook.updated_at.isoformat(),
        "steps-TOTAL_FORMS": str(len(text.steps) + 2),
        "steps-INITIAL_FORMS": str(len(text.steps)),
        "steps-MIN_NUM_FORMS": "0",
        "steps-MAX_NUM_FORMS": "60",
    }
    for i, step in enumerate(text.steps):
        data.update(
            {
                f"steps-{i}-text": step.text,
                f"steps-{i}-command": step.command,
                f"steps-{i}-expected": step.expected,
                f"steps-{i}-ORDER": str(i + 1),
            }
        )
    for i in range(len(text.steps), len(text.steps) + 2):
        data.update({f"steps-{i}-{name}": "" for name in ("text", "command", "expected", "ORDER")})
    data.update(changes)
    return data


@pytest.fixture
def runbook(runbooks) -> Runbook:
    return Runbook.objects.get(slug=SLUG)


@pytest.mark.parametrize(("who", "status"), [("alice_client", 403), ("lena_client", 200)])
def test_it_opens_the_edit_form_to_leads_only(request, runbook, who, status):
    assert request.getfixturevalue(who).get(EDIT).status_code == status


def test_an_engineer_cannot_save_an_edit(alice_client, runbook):
    response = alice_client.post(EDIT, _payload(runbook, summary="Hijacked."))
    assert response.status_code == 403
    runbook.refresh_from_db()
    assert runbook.summary != "Hijacked."


def test_saving_an_untouched_form_changes_nothing(lena_client, runbook):
    before = Runbook.objects.filter(pk=runbook.pk).values().get()
    response = lena_client.post(EDIT, _payload(runbook))
    assert response.status_code == 302
    assert Runbook.objects.filter(pk=runbook.pk).values().get() == before
    assert runbook.history.count() == 1  # still the catalog's, still translated


def test_a_leads_edit_is_saved_with_history_and_marked_edited(lena_client, lena, runbook):
    response = lena_client.post(EDIT, _payload(runbook, summary="Lock every version we ship."))
    assert response.status_code == 302
    assert response["Location"] == runbook.get_absolute_url()
    runbook.refresh_from_db()
    assert runbook.summary == "Lock every version we ship."
    assert runbook.catalog_digest == ""
    assert runbook.translations == {}  # the Chinese text no longer says the same thing
    record = runbook.history.first()
    assert record.history_user == lena
    assert record.prev_record.summary != record.summary
    page = lena_client.get(runbook.get_absolute_url()).content.decode()
    assert "lena" in page and "(edited)" in page


def test_the_edit_survives_reseeding(lena_client, runbook):
    lena_client.post(EDIT, _payload(runbook, title="Version lock, our way"))
    result = runbook_catalog_seed(language="en")
    runbook.refresh_from_db()
    assert runbook.title == "Version lock, our way"
    assert SLUG in result.kept_edited


def test_a_classification_change_keeps_the_translations(lena_client, runbook):
    response = lena_client.post(EDIT, _payload(runbook, stage="build"))
    assert response.status_code == 302
    runbook.refresh_from_db()
    assert runbook.stage == "build"
    assert "zh-hans" in runbook.translations
    assert runbook.catalog_digest == ""


def test_it_reorders_deletes_and_adds_steps(lena_client, runbook):
    count = len(runbook.steps)
    first, second = runbook.steps[0]["text"], runbook.steps[1]["text"]
    payload = _payload(
        runbook,
        **{
            "steps-0-ORDER": "2",
            "steps-1-ORDER": "1",
            "steps-2-DELETE": "on",
            f"steps-{count}-text": "Record the container image digest.",
            f"steps-{count}-command": "docker inspect --format '{{.Id}}' \"$IMAGE\"\n",
        },
    )
    assert lena_client.post(EDIT, payload).status_code == 302
    runbook.refresh_from_db()
    texts = [step["text"] for step in runbook.steps]
    assert texts[:2] == [second, first]
    assert len(texts) == count  # one deleted, one added
    assert runbook.steps[-1] == {
        "text": "Record the container image digest.",
        "command": "docker inspect --format '{{.Id}}' \"$IMAGE\"",
        "expected": "",
    }


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"title": ""}, "This field is required."),
        ({"steps-0-text": "", "steps-0-command": "make"}, "the command alone is not enough"),
        ({"kind": "recipe"}, "Select a valid choice."),
        ({"stage": "deploy"}, "Select a valid choice."),
    ],
)
def test_it_explains_bad_input_and_keeps_what_was_typed(lena_client, runbook, changes, message):
    response = lena_client.post(EDIT, _payload(runbook, summary="Kept while fixing.", **changes))
    assert response.status_code == 400
    page = response.content.decode()
    assert message in page
    assert "Kept while fixing." in page
    runbook.refresh_from_db()
    assert runbook.summary != "Kept while fixing."


def test_it_refuses_a_runbook_without_steps(lena_client, runbook):
    deleted = {f"steps-{i}-DELETE": "on" for i in range(len(runbook.steps))}
    response = lena_client.post(EDIT, _payload(runbook, **deleted))
    assert response.status_code == 400
    assert "A runbook needs at least one step." in response.content.decode()


def test_it_refuses_to_overwrite_a_newer_save(lena_client, lena, runbook):
    stale = _payload(runbook, summary="Mine.")
    lena_client.post(EDIT, _payload(runbook, summary="Theirs."))
    response = lena_client.post(EDIT, stale)
    assert response.status_code == 400
    assert "Someone else saved this runbook while you were editing it." in response.content.decode()
    runbook.refresh_from_db()
    assert runbook.summary == "Theirs."


def test_a_lead_reading_chinese_edits_the_chinese_text(lena_client, runbook):
    lena_client.post(reverse("language-set"), {"language": "zh-hans"})
    form = lena_client.get(EDIT).content.decode()
    assert runbook.translations["zh-hans"]["title"] in form
    response = lena_client.post(EDIT, _payload(runbook, "zh-hans", title="版本锁定（本组版）"))
    assert response.status_code == 302
    runbook.refresh_from_db()
    assert (runbook.language, runbook.title, runbook.translations) == (
        "zh-hans",
        "版本锁定（本组版）",
        {},
    )
    assert runbook.text("en").title == "版本锁定（本组版）"  # no stale English left to show


def test_the_admin_edit_also_marks_it_edited(lena_client, runbook):
    # On a fresh database the lead group is filled before the runbook permissions exist
    # (accounts migrates first); a second migrate, like this call, fills it.
    roles_ensure()
    url = reverse("admin:runbooks_runbook_change", args=[runbook.pk])
    response = lena_client.post(
        url,
        {
            "slug": runbook.slug,
            "kind": runbook.kind,
            "stage": "",
            "discipline": runbook.discipline,
            "calculator": "",
            "title": "Changed in the admin",
            "summary": runbook.summary,
            "steps": json.dumps(runbook.steps),
            "language": runbook.language,
            "position": runbook.position,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    runbook.refresh_from_db()
    assert runbook.title == "Changed in the admin"
    assert (runbook.catalog_digest, runbook.translations) == ("", {})
    assert SLUG in runbook_catalog_seed(language="en").kept_edited
