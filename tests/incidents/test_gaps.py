"""The gaps list: each unexplained key line once, what explained it since, one-click drafts."""

import pytest
from django.urls import reverse

from incidents.models import KnowledgeGap
from incidents.services import analysis_run
from tests.factories import IncidentFactory
from tests.incidents.test_analysis_pages import UNKNOWN_TAIL, _submit

pytestmark = pytest.mark.django_db

GAPS = reverse("incidents:gap-list")


def _gap(client) -> KnowledgeGap:
    analysis_run(analysis_id=_submit(client, log=UNKNOWN_TAIL).pk)
    return KnowledgeGap.objects.get()


def test_the_list_shows_a_key_line_once(alice_client, catalog):
    _gap(alice_client)
    assert alice_client.get(GAPS).content.decode().count("frobnicator quux exploded") == 1


def test_a_draft_starts_with_a_title_as_well_as_the_symptom(alice_client, catalog):
    gap = _gap(alice_client)
    form = alice_client.get(reverse("incidents:gap-draft", args=[gap.pk]), follow=True)
    assert form.context["form"].initial["title"] == UNKNOWN_TAIL.strip()
    assert form.context["form"].initial["symptom"] == UNKNOWN_TAIL.strip()


def test_a_long_key_line_is_cut_at_a_word_for_the_title(alice_client, catalog):
    gap = _gap(alice_client)
    gap.example_line = "ERROR: " + "frobnicator " * 20
    gap.save()
    form = alice_client.get(reverse("incidents:gap-draft", args=[gap.pk]), follow=True)
    title = form.context["form"].initial["title"]
    assert len(title) <= 100 and title.endswith("frobnicator…")


def test_explained_since_links_the_incident_that_explained_it(alice_client, catalog):
    gap = _gap(alice_client)
    IncidentFactory(
        slug="frobnicator-explodes",
        title="Frobnicator explodes",
        symptom="ERROR: frobnicator quux exploded at stage 7 with code 0x2f",
    )
    analysis_run(analysis_id=_submit(alice_client, log=UNKNOWN_TAIL).pk)
    gap.refresh_from_db()
    assert gap.explained_at is not None
    assert gap.incident.slug == "frobnicator-explodes"
    page = alice_client.get(GAPS).content.decode()
    assert 'href="/incidents/frobnicator-explodes/"' in page


def test_the_edit_form_never_offers_the_incident_being_edited(alice_client, alice, catalog):
    incident = IncidentFactory(slug="mine", reporter=alice, symptom=UNKNOWN_TAIL.strip())
    page = alice_client.get(reverse("incidents:incident-edit", args=["mine"])).content.decode()
    assert """hx-vals='{"exclude": "mine"}'""" in page
    url = reverse("incidents:incident-similar")
    offered = alice_client.get(url, {"symptom": incident.symptom}).content.decode()
    assert 'href="/incidents/mine/"' in offered  # a new incident would be told of it
    editing = alice_client.get(url, {"symptom": incident.symptom, "exclude": "mine"})
    assert 'href="/incidents/mine/"' not in editing.content.decode()
