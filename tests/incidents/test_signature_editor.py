"""Leads write signatures in the browser, test them live, and only sound ones are saved."""

import pytest
from django.urls import reverse

from incidents.models import Signature
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident():
    return IncidentFactory(slug="shard-loss", symptom="FooRuntimeError: shard 7 lost")


def _save(client, incident, **data):
    url = reverse("incidents:signature-create", args=[incident.slug])
    return client.post(url, {"note": "", "enabled": "on", **data})


def test_it_saves_a_sound_expression_and_the_incident_matches_it(lena_client, incident):
    response = _save(
        lena_client,
        incident,
        pattern=r"FooRuntimeError: shard \d+ lost",
        examples="FooRuntimeError: shard 12 lost",
    )
    assert response.status_code == 302
    signature = Signature.objects.get()
    assert signature.author.username == "lena"
    assert signature.history.count() == 1


@pytest.mark.parametrize(
    ("pattern", "examples", "reason"),
    [
        (r"(foo", "foo", "missing )"),
        (r"(a)\1", "aa", "invalid escape"),
        (r"x*", "x", "empty"),
        (r".*", "anything", "empty"),
        (r"shard \d+ lost", "nothing like it", "none of its"),
        (r"shard \d+ lost", "", "example"),
        (r"INFO", "INFO start", "healthy"),
    ],
)
def test_it_refuses_an_unsound_expression_with_the_reason(
    lena_client, incident, pattern, examples, reason
):
    response = _save(lena_client, incident, pattern=pattern, examples=examples)
    assert response.status_code == 400
    assert reason.lower() in response.content.decode().lower()
    assert not Signature.objects.exists()


def test_a_catastrophic_backtracking_expression_is_harmless(lena_client, incident):
    response = _save(lena_client, incident, pattern=r"(a+)+$", examples="a" * 40 + "b")
    # RE2 runs it in linear time (`re` would not return): a clear refusal, as it matches none
    # of its examples.
    assert response.status_code == 400
    assert "none of its" in response.content.decode()


def test_the_live_test_shows_matching_sample_lines_and_problems(lena_client):
    url = reverse("incidents:signature-try")
    response = lena_client.post(
        url,
        {
            "pattern": r"shard \d+ lost",
            "examples": "FooRuntimeError: shard 1 lost",
            "sample": "ok\nFooRuntimeError: shard 9 lost\nok",
        },
    )
    assert response.status_code == 200
    result = response.context["result"]
    assert result.matched == ((2, "FooRuntimeError: shard 9 lost"),)
    assert result.problems == ()
    bad = lena_client.post(url, {"pattern": "(", "examples": "", "sample": "x"})
    assert bad.context["result"].problems
    assert bad.context["result"].matched == ()


@pytest.mark.parametrize("who", ["alice_client", "bob_client"])
def test_engineers_cannot_manage_signatures(request, who, incident):
    client = request.getfixturevalue(who)
    assert (
        client.get(reverse("incidents:signature-create", args=[incident.slug])).status_code == 403
    )
    assert client.post(reverse("incidents:signature-try"), {"pattern": "x"}).status_code == 403


def test_a_lead_edits_and_disables_a_signature(lena_client, incident):
    _save(lena_client, incident, pattern=r"shard \d+ lost", examples="shard 1 lost")
    signature = Signature.objects.get()
    url = reverse("incidents:signature-edit", args=[signature.pk])
    response = lena_client.post(
        url, {"pattern": r"shard \d+ lost", "examples": "shard 1 lost", "note": "off for now"}
    )
    assert response.status_code == 302
    signature.refresh_from_db()
    assert not signature.enabled
    assert signature.history.count() == 2


def test_a_counter_pattern_is_saved_and_rules_the_signature_out_of_a_tail(lena_client, incident):
    from incidents.knowledge import knowledge_index
    from incidents.logmatch import analyze

    response = _save(
        lena_client,
        incident,
        pattern=r"FooRuntimeError: shard \d+ lost",
        examples="FooRuntimeError: shard 12 lost",
        unless=r"shard \d+ rebalanced",
    )
    assert response.status_code == 302
    assert Signature.objects.get().unless == r"shard \d+ rebalanced"
    page = lena_client.get(incident.get_absolute_url()).content.decode()
    assert "ruled out by" in page and r"shard \d+ rebalanced" in page

    def kinds(tail: str) -> set[str]:
        (suggestion,) = analyze(tail, knowledge_index()).suggestions
        return {evidence.kind for evidence in suggestion.evidence}

    lost = "FooRuntimeError: shard 3 lost"
    assert kinds(lost) == {"signature"}
    # Ruled out, the signature takes the line it recognises with it, resemblance included.
    ruled_out = analyze(f"{lost}\nINFO shard 3 rebalanced", knowledge_index())
    assert incident.slug not in {suggestion.slug for suggestion in ruled_out.suggestions}


@pytest.mark.parametrize(
    ("unless", "reason"),
    [
        (r"(shard", "counter-pattern does not compile"),
        (r"(?:x)?", "counter-pattern matches the empty string"),
        (r"shard \d+ lost", "rules out its own example 1"),
    ],
)
def test_it_refuses_a_useless_counter_pattern_under_its_own_field(
    lena_client, incident, unless, reason
):
    response = _save(
        lena_client,
        incident,
        pattern=r"FooRuntimeError: shard \d+ lost",
        examples="FooRuntimeError: shard 12 lost",
        unless=unless,
    )
    assert response.status_code == 400
    assert reason in " ".join(response.context["form"].errors["unless"])
    assert not Signature.objects.exists()


def test_the_live_test_says_which_sample_line_rules_the_signature_out(lena_client):
    response = lena_client.post(
        reverse("incidents:signature-try"),
        {
            "pattern": r"shard \d+ lost",
            "examples": "FooRuntimeError: shard 1 lost",
            "unless": "rebalanced",
            "sample": "FooRuntimeError: shard 9 lost\nshard 9 rebalanced",
        },
    )
    assert response.context["result"].ruled_out_by == (2, "shard 9 rebalanced")
    assert "Ruled out in this sample by line 2" in response.content.decode()


def test_a_lead_only_signature_ranks_its_incident_but_never_makes_it_the_answer(lena_client):
    from incidents.knowledge import knowledge_index
    from incidents.logmatch import analyze

    incident = IncidentFactory(slug="feature-width", symptom="feature width differs from model")
    bare = "RuntimeError: mat1 and mat2 shapes cannot be multiplied (512x83 and 80x256)"
    response = _save(
        lena_client,
        incident,
        pattern=r"shapes cannot be multiplied \(\d+x\d+ and \d+x\d+\)",
        examples=bare,
        lead_only="on",
    )
    assert response.status_code == 302
    assert Signature.objects.get().lead_only
    page = lena_client.get(incident.get_absolute_url()).content.decode()
    assert "a lead only" in page

    first = analyze(bare, knowledge_index()).suggestions[0]
    assert first.slug == "feature-width" and not first.confident
    assert "several usual causes" in str(first.why)

    Signature.objects.update(lead_only=False)
    from incidents.services import knowledge_changed

    knowledge_changed(slugs=["feature-width"])
    assert analyze(bare, knowledge_index()).suggestions[0].confident
