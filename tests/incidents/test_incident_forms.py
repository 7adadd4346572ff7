"""Filing and editing: clear messages, nothing typed lost, nothing stored half-written."""

import pytest
from django.urls import reverse

from incidents.models import Incident
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

VALID = {
    "title": "NCCL watchdog timeout on 4 nodes",
    "symptom": "[E ProcessGroupNCCL.cpp:828] [Rank 3] Watchdog caught collective operation timeout",
    "root_cause": "A flapping NIC on node 3 dropped packets during all-reduce.",
    "remedy": "ethtool -S eth0 | grep -i err; NCCL_IB_TIMEOUT=22",
    "discipline": "tiny-sample",
    "prevention": "Run the two-node tiny sample after any network change.",
    "stage": "train",
    "severity": "high",
    "environment": "8x A100, NCCL 2.18",
    "tags": "nccl, network",
    "occurred_on": "2026-11-20",
    "resolved_on": "2026-11-21",
}


def _post(client, **changes):
    return client.post(reverse("incidents:incident-create"), {**VALID, **changes})


def test_it_files_an_incident_with_a_slug_from_its_title(alice_client, alice):
    response = _post(alice_client)
    incident = Incident.objects.get()
    assert response.status_code == 302
    assert response["Location"] == incident.get_absolute_url()
    assert incident.slug == "nccl-watchdog-timeout-on-4-nodes"
    assert incident.reporter == alice
    assert sorted(t.name for t in incident.tags.all()) == ["nccl", "network"]


def test_it_makes_a_unique_slug_for_a_repeated_title(alice_client):
    _post(alice_client)
    _post(alice_client)
    assert sorted(Incident.objects.values_list("slug", flat=True)) == [
        "nccl-watchdog-timeout-on-4-nodes",
        "nccl-watchdog-timeout-on-4-nodes-2",
    ]


def test_it_derives_a_slug_for_a_chinese_title(alice_client):
    _post(alice_client, title="显存不足导致训练中断")
    assert Incident.objects.get().slug == "incident"


def test_it_refuses_a_duplicate_slug_with_a_message(alice_client):
    IncidentFactory(slug="taken")
    response = _post(alice_client, slug="taken")
    assert response.status_code == 400
    assert "already exists" in response.content.decode()
    assert Incident.objects.count() == 1


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "x" * 201, "at most 200 characters"),
        ("symptom", "x" * 4001, "at most 4000 characters"),
        ("root_cause", "", "This field is required"),
        ("root_cause", "First line.\nSecond line.", "one sentence on one line"),
        ("stage", "deploy", "Select a valid choice"),
        ("discipline", "luck", "Select a valid choice"),
        ("occurred_on", "2026-02-30", "Enter a valid date"),
        ("resolved_on", "2026-11-01", "cannot be before it occurred"),
        ("tags", ",".join(f"t{n}" for n in range(20)), "At most 12 tags"),
    ],
)
def test_it_explains_bad_input_and_keeps_what_was_typed(alice_client, field, value, message):
    response = _post(alice_client, **{field: value})
    body = response.content.decode()
    assert response.status_code == 400
    assert message in body
    assert "ethtool -S eth0" in body  # what was typed is still there
    assert Incident.objects.count() == 0


def test_it_renders_html_in_any_field_inert(alice_client):
    script = "<script>alert('x')</script>"
    _post(alice_client, title=script, symptom=script, remedy=script, root_cause=script)
    body = alice_client.get(Incident.objects.get().get_absolute_url()).content.decode()
    assert script not in body
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body


def test_it_edits_without_losing_the_previous_version(alice_client, alice):
    incident = IncidentFactory(reporter=alice, title="Before")
    payload = {**VALID, "title": "After"}
    alice_client.post(reverse("incidents:incident-edit", args=[incident.slug]), payload)
    incident.refresh_from_db()
    assert incident.title == "After"
    assert [h.title for h in incident.history.all()] == ["After", "Before"]


def test_it_keeps_the_stored_incident_when_an_edit_is_invalid(alice_client, alice):
    incident = IncidentFactory(reporter=alice, title="Keep me")
    payload = {**VALID, "title": "Changed", "stage": "nowhere"}
    response = alice_client.post(reverse("incidents:incident-edit", args=[incident.slug]), payload)
    incident.refresh_from_db()
    assert response.status_code == 400
    assert incident.title == "Keep me"
    assert incident.history.count() == 1


def test_it_prefills_a_draft_from_the_query_string(alice_client):
    url = reverse("incidents:incident-create") + "?symptom=ERROR+(nnet3-train)&stage=train"
    body = alice_client.get(url).content.decode()
    assert "ERROR (nnet3-train)" in body


def _as_posted(incident: Incident, **changes) -> dict:
    fields = [name for name in VALID if name != "tags"]
    payload = {name: getattr(incident, name) or "" for name in fields}
    return {**payload, "tags": incident.tag_list, **changes}


def test_a_page_edit_compares_with_the_stored_incident_not_with_the_form(lena_client, catalog):
    """The form writes onto the instance it was given before the service sees it: the
    service must tell changed text from the stored row, or translations would be kept for
    text that no longer says the same thing."""
    url = reverse("incidents:incident-edit", args=["disk-full"])
    incident = Incident.objects.get(slug="disk-full")
    assert "zh-hans" in incident.translations

    lena_client.post(url, _as_posted(incident, severity="critical"))
    incident.refresh_from_db()
    assert incident.severity == "critical"
    assert "zh-hans" in incident.translations  # the text is as shipped: still translated

    lena_client.post(url, _as_posted(incident, remedy="our own cleanup script"))
    incident.refresh_from_db()
    assert incident.remedy == "our own cleanup script"
    assert incident.translations == {}
    page = lena_client.get(reverse("incidents:incident-detail", args=["disk-full"]))
    assert "our own cleanup script" in page.content.decode()
