import html
import re
from datetime import date

import pytest
from django.urls import reverse

from incidents import knowledge, selectors
from incidents.models import Incident
from incidents.services import incident_record_recurrence, incident_update
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


def test_it_shows_the_four_columns_and_a_copyable_remedy(alice_client, catalog):
    body = alice_client.get(reverse("incidents:incident-detail", args=["gpu-oom"])).content.decode()
    incident = Incident.objects.get(slug="gpu-oom")
    for heading in ("Symptom", "Root cause", "Remedy", "Prevention"):
        assert heading in body
    assert 'id="remedy"' in body and 'data-copy="remedy"' in body
    assert incident.get_discipline_display() in body


def test_it_shows_who_changed_what_and_when(alice_client, alice):
    incident = IncidentFactory(reporter=alice, remedy="old remedy")
    incident_update(incident=incident, data={"remedy": "new remedy"}, actor=alice)
    response = alice_client.get(incident.get_absolute_url())
    history = response.context["history"]
    assert history[0].who == alice
    assert [(c.field, c.old, c.new) for c in history[0].changes] == [
        ("remedy", "old remedy", "new remedy")
    ]
    assert history[-1].kind == "+"
    shown = response.content.decode().split('id="history"', 1)[1]
    assert "<del>old remedy</del> → <ins>new remedy</ins>" in shown
    assert alice.username in shown


def test_it_offers_similar_incidents(alice_client, catalog):
    response = alice_client.get(reverse("incidents:incident-detail", args=["host-oom"]))
    similar = [incident.slug for incident, _ in response.context["similar"]]
    assert "host-oom" not in similar


def test_it_suggests_existing_incidents_while_a_symptom_is_typed(alice_client, catalog):
    response = alice_client.get(
        reverse("incidents:incident-similar"),
        {"symptom": "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    first, _score = response.context["similar"][0]
    assert first.slug == "gpu-oom"


def test_it_shows_the_catalog_text_in_the_users_language(alice_client, catalog):
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    response = alice_client.get(reverse("incidents:incident-detail", args=["gpu-oom"]))
    assert response.context["text"].language == "zh-hans"
    assert response["Content-Language"] == "zh-hans"


def test_it_pages_the_recurrences_newest_first(alice_client, alice):
    incident = IncidentFactory()
    for day in range(1, 26):
        incident_record_recurrence(
            incident=incident,
            reported_by=alice,
            occurred_on=date(2026, 10, day),
            note=f"note of day {day:02d}",
        )

    first = alice_client.get(incident.get_absolute_url()).content.decode()
    following = html.unescape(re.search(r'href="(\?cursor=[^"]+)" rel="next"', first).group(1))
    second = alice_client.get(incident.get_absolute_url() + following).content.decode()

    def days(page: str) -> list[str]:
        return re.findall(r"note of day (\d\d)", page)

    assert days(first) == [f"{day:02d}" for day in range(25, 5, -1)]
    assert days(second) == ["05", "04", "03", "02", "01"]
    assert 'rel="next"' not in second and 'rel="prev"' in second


def test_shipped_signature_notes_read_in_chinese_and_edited_ones_as_written(
    alice_client, lena, catalog
):
    from incidents.models import Signature
    from incidents.services import signature_update

    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    page = alice_client.get(reverse("incidents:incident-detail", args=["gpu-oom"]))
    body = page.content.decode()
    assert "Ascend 上的 torch_npu 缓存分配器" in body
    assert "torch_npu caching allocator on Ascend" not in body
    signature = Signature.objects.get(note="torch_npu caching allocator on Ascend")
    signature_update(signature=signature, data={"note": "our own words"}, actor=lena)
    page = alice_client.get(reverse("incidents:incident-detail", args=["gpu-oom"]))
    assert "our own words" in page.content.decode()


def test_every_shipped_signature_note_has_its_chinese():
    import json

    from incidents.catalog import CATALOG_DIR, load_catalog

    notes = json.loads((CATALOG_DIR / "signature_notes.zh-hans.json").read_text())
    missing = [
        signature.note
        for incident in load_catalog()
        for signature in incident.signatures
        if signature.note and not notes.get(signature.note)
    ]
    assert missing == []


def test_similar_incidents_follow_the_knowledge_within_the_lag(
    alice_client, alice, catalog, settings, monkeypatch
):
    """The site keeps the engine's ranking of a symptom: an incident filed after a first
    view joins it once that ranking is SIMILAR_LAG_SECONDS old, while the incidents it names
    are read on every view (an edited title shows at once, a deleted incident is never
    offered)."""
    settings.SIMILAR_LAG_SECONDS = 60
    now = [1_000_000.0]
    monkeypatch.setattr(selectors, "_clock", lambda: now[0])
    page = reverse("incidents:incident-detail", args=["host-oom"])

    def similar() -> dict[str, str]:
        shown = alice_client.get(page).context["similar"]
        return {incident.slug: incident.title for incident, _ in shown}

    symptom = Incident.objects.get(slug="host-oom").symptom
    before = similar()
    IncidentFactory(slug="host-oom-again", title="Host OOM again", symptom=symptom, reporter=alice)
    lagging = similar()
    now[0] += 60
    after = similar()
    Incident.objects.filter(slug="host-oom-again").update(title="Renamed a moment ago")
    renamed = similar()
    Incident.objects.filter(slug="host-oom-again").delete()
    deleted = similar()

    assert "host-oom-again" not in before | lagging
    assert after["host-oom-again"] == "Host OOM again"
    assert renamed["host-oom-again"] == "Renamed a moment ago"
    assert "host-oom-again" not in deleted


def test_a_page_served_within_the_lag_leaves_the_compiled_index_as_it_is(
    alice_client, alice, catalog, settings, monkeypatch
):
    """Serving the kept ranking needs no index: the view does not make this process apply
    the book's latest changes; the first ranking after the lag does."""
    settings.SIMILAR_LAG_SECONDS = 60
    now = [1_000_000.0]
    monkeypatch.setattr(selectors, "_clock", lambda: now[0])
    page = reverse("incidents:incident-detail", args=["host-oom"])
    alice_client.get(page)
    compiled_before = knowledge.knowledge_current()[1]
    IncidentFactory(slug="host-oom-again", symptom="a symptom of its own", reporter=alice)

    alice_client.get(page)
    held_within_the_lag = knowledge._cached.token
    now[0] += 60
    alice_client.get(page)

    assert held_within_the_lag == compiled_before
    assert knowledge._cached.token == knowledge.knowledge_state().token != compiled_before


def test_without_a_lag_a_filing_is_among_the_similar_incidents_at_once(
    alice_client, alice, catalog
):
    page = reverse("incidents:incident-detail", args=["host-oom"])
    symptom = Incident.objects.get(slug="host-oom").symptom
    alice_client.get(page)
    IncidentFactory(slug="host-oom-again", title="Host OOM again", symptom=symptom, reporter=alice)

    shown = alice_client.get(page).context["similar"]

    assert "host-oom-again" in [incident.slug for incident, _ in shown]


def test_its_tags_and_signatures_read_in_both_languages_escaped(alice_client, lena_client):
    from incidents.models import Signature

    incident = IncidentFactory(slug="tagged", tags=["gpu memory", "<b>x</b>"])
    Signature.objects.create(
        incident=incident, pattern=r"a<b>&c", unless="ok & fine", lead_only=True, enabled=False
    )
    Signature.objects.create(incident=incident, pattern="plain", note="<i>our note</i>")
    page = reverse("incidents:incident-detail", args=["tagged"])

    for client, may_manage in ((alice_client, False), (lena_client, True)):
        for language, words in (
            ("en", ("edit", "disabled", "a lead only", "ruled out by")),
            ("zh-hans", ("编辑", "已停用", "仅作线索", "排除条件")),
        ):
            client.post(reverse("language-set"), {"language": language, "next": "/"})
            body = client.get(page).content.decode()
            edit, disabled, lead, ruled_out = words
            tags = re.findall(r'<a class="tag" href="/incidents/\?tag=([^"]*)">([^<]*)</a>', body)
            assert sorted(tags) == [
                ("%3Cb%3Ex%3C/b%3E", "&lt;b&gt;x&lt;/b&gt;"),
                ("gpu%20memory", "gpu memory"),
            ]
            first, second = incident.signatures.order_by("pk")
            items = dict(re.findall(r'<li id="signature-(\d+)">(.*?)</li>', body, re.S))
            assert '<code class="mono">a&lt;b&gt;&amp;c</code>' in items[str(first.pk)]
            assert f"({disabled})" in items[str(first.pk)]
            assert f"({lead})" in items[str(first.pk)]
            assert f'{ruled_out} <code class="mono">ok &amp; fine</code>' in items[str(first.pk)]
            assert "&lt;i&gt;our note&lt;/i&gt;" in items[str(second.pk)]
            assert f"({disabled})" not in items[str(second.pk)]
            edit_link = f'<a class="small" href="/signatures/{second.pk}/edit/">{edit}</a>'
            assert (edit_link in items[str(second.pk)]) is may_manage


def test_an_incident_without_signatures_says_its_symptom_matches_alone(alice_client):
    IncidentFactory(slug="bare")
    body = alice_client.get(reverse("incidents:incident-detail", args=["bare"])).content.decode()
    assert "No signature yet: the symptom line matches on its own." in body
