"""Search finds English and Chinese terms on whichever database the suite runs on."""

import pytest
from django.urls import reverse

from incidents.models import Incident
from incidents.views import incidents as views
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

LIST = reverse("incidents:incident-list")


def _slugs(client, query: str) -> list[str]:
    return _slugs_for(client, {"q": query})


def _slugs_for(client, query: dict) -> list[str]:
    response = client.get(LIST, query)
    assert response.status_code == 200
    return [incident.slug for incident in response.context["page"]]


@pytest.mark.parametrize(
    "query", ["显存", "显存不足", "out of memory", "OUT OF MEMORY", "cuda oom"]
)
def test_it_finds_gpu_oom_in_either_language(alice_client, catalog, query):
    assert "gpu-oom" in _slugs(alice_client, query)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_it_finds_both_languages_whatever_language_the_site_was_seeded_in(
    db, language, alice_client, request
):
    from incidents.seeding import catalog_seed

    if language == "en":
        request.getfixturevalue("catalog")  # the session's English seed, restored
    else:
        catalog_seed(language=language)
    assert "disk-full" in _slugs(alice_client, "No space left")
    assert "disk-full" in _slugs(alice_client, "磁盘")


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("out of memory", "gpu-oom"),
        ("显存", "gpu-oom"),
        ("磁盘", "disk-full"),
        ("nccl timeout", "collective-timeout"),
    ],
)
def test_it_puts_the_most_relevant_first(alice_client, catalog, query, first):
    assert _slugs(alice_client, query)[0] == first


def test_a_title_outranks_a_mention_whatever_was_updated_last(alice_client):
    IncidentFactory(slug="titled", title="Gradient overflow", symptom="loss is nan")
    IncidentFactory(slug="mentioned", title="Slow step", symptom="a gradient overflow warning")
    assert _slugs(alice_client, "gradient overflow") == ["titled", "mentioned"]


def test_an_explicit_sort_replaces_relevance(alice_client):
    IncidentFactory(slug="b-titled", title="Gradient overflow")
    IncidentFactory(slug="a-mentioned", title="Another", symptom="gradient overflow")
    response = alice_client.get(
        reverse("incidents:incident-list"), {"q": "gradient overflow", "sort": "title"}
    )
    assert [i.slug for i in response.context["page"]] == ["a-mentioned", "b-titled"]


def test_the_api_orders_a_search_by_relevance(alice_client, catalog):
    response = alice_client.get("/api/v1/incidents/", {"q": "显存"})
    assert response.status_code == 200
    assert response.json()["results"][0]["slug"] == "gpu-oom"


def test_it_requires_every_term(alice_client):
    IncidentFactory(slug="a", symptom="NCCL timeout on rank 3")
    IncidentFactory(slug="b", symptom="NCCL error on rank 1")
    assert _slugs(alice_client, "nccl timeout") == ["a"]


def test_it_searches_tags_and_short_terms(alice_client):
    IncidentFactory(slug="tagged", tags=["ascend", "卡"])
    assert _slugs(alice_client, "卡") == ["tagged"]
    assert _slugs(alice_client, "ascend") == ["tagged"]


def test_it_follows_edits(alice_client, alice):
    incident = IncidentFactory(slug="edited", reporter=alice, symptom="first words")
    from incidents.services import incident_update

    incident_update(incident=incident, data={"symptom": "梯度溢出 overflow"}, actor=alice)
    assert _slugs(alice_client, "梯度溢出") == ["edited"]
    assert _slugs(alice_client, "first words") == []


def test_it_treats_search_syntax_as_plain_text(alice_client):
    IncidentFactory(slug="quoted", symptom='error: "unterminated AND OR NEAR(x)')
    assert _slugs(alice_client, '"unterminated AND') == ["quoted"]
    assert _slugs(alice_client, "NEAR(x)") == ["quoted"]


def test_it_combines_search_with_filters(alice_client):
    IncidentFactory(slug="t", stage="train", symptom="segfault in loader")
    IncidentFactory(slug="s", stage="serve", symptom="segfault in loader")
    url = reverse("incidents:incident-list")
    response = alice_client.get(url, {"q": "segfault", "stage": "serve"})
    assert [i.slug for i in response.context["page"]] == ["s"]
    assert Incident.objects.count() == 2


def test_it_explains_an_unknown_filter_value(alice_client):
    response = alice_client.get(reverse("incidents:incident-list"), {"stage": "deploy"})
    assert response.status_code == 200
    assert "Select a valid choice" in response.content.decode()


def test_it_finds_one_and_two_chinese_characters_anywhere_in_a_run(alice_client):
    IncidentFactory(slug="oom", symptom="训练时显存不足")
    IncidentFactory(slug="storage", symptom="存储满了")
    assert _slugs(alice_client, "显存") == ["oom"]
    assert _slugs(alice_client, "存不") == ["oom"]  # the middle of a run, not a word of it
    assert sorted(_slugs(alice_client, "存")) == ["oom", "storage"]
    assert _slugs(alice_client, "满") == ["storage"]
    assert _slugs(alice_client, "存满") == []  # the two are in the text, but not together


def test_it_finds_chinese_written_against_english(alice_client):
    IncidentFactory(slug="mixed", symptom="CUDA显存不足 on rank 3")
    IncidentFactory(slug="english", symptom="CUDA error on rank 3")
    assert _slugs(alice_client, "cuda 显存") == ["mixed"]
    assert _slugs(alice_client, "cuda显存") == ["mixed"]
    assert _slugs(alice_client, "显存 rank 3") == ["mixed"]
    assert sorted(_slugs(alice_client, "cuda 3")) == ["english", "mixed"]


def test_short_english_words_narrow_the_search(alice_client):
    IncidentFactory(slug="oom", symptom="CUDA out of memory")
    IncidentFactory(slug="offload", symptom="offload to CPU ran out of host memory")
    IncidentFactory(slug="proof", symptom="memory layout proof", title="Timeout on all ranks")
    assert sorted(_slugs(alice_client, "out of memory")) == ["offload", "oom"]
    assert sorted(_slugs(alice_client, "of")) == ["offload", "oom"]  # "proof" has no word "of…"
    assert _slugs(alice_client, "on all") == ["proof"]


def test_one_letter_or_digit_is_a_whole_word_and_two_start_one(alice_client):
    IncidentFactory(slug="rank", title="Watchdog", symptom="NCCL watchdog timeout on rank 3")
    IncidentFactory(slug="port", title="Bind", symptom="bind to port 30000 failed")
    IncidentFactory(slug="version", title="Toolkit", symptom="needs CANN 3.5 or newer")
    assert sorted(_slugs(alice_client, "3")) == ["rank", "version"]
    assert _slugs(alice_client, "timeout 3") == ["rank"]
    assert _slugs(alice_client, "30") == ["port"]


def test_a_short_term_with_punctuation_keeps_it(alice_client):
    IncidentFactory(slug="minus", symptom="exit code -1")
    IncidentFactory(slug="plus", symptom="exit code 1")
    assert _slugs(alice_client, "-1") == ["minus"]
    assert sorted(_slugs(alice_client, "1")) == ["minus", "plus"]
    assert sorted(_slugs(alice_client, ":")) == []


def test_a_search_ranks_its_most_recent_matches_and_says_it_shows_no_more(
    alice_client, monkeypatch
):
    from incidents import querysets

    monkeypatch.setattr(querysets, "RANKED_AT_MOST", 3)
    monkeypatch.setattr(views, "RANKED_AT_MOST", 3)
    IncidentFactory(slug="oldest-titled", title="Gradient overflow")
    IncidentFactory(slug="old-mentioned", symptom="gradient overflow")
    IncidentFactory(slug="new-mentioned", symptom="gradient overflow")
    IncidentFactory(slug="new-titled", title="Gradient overflow")

    response = alice_client.get(LIST, {"q": "gradient overflow"})

    assert [i.slug for i in response.context["page"]] == [
        "new-titled",
        "new-mentioned",
        "old-mentioned",
    ]
    assert "3 most recently updated matches" in response.content.decode()
    assert "most recently updated" not in alice_client.get(LIST, {"q": "titled"}).content.decode()


def test_the_other_filters_choose_what_the_search_ranks(alice_client, monkeypatch):
    from incidents import querysets

    monkeypatch.setattr(querysets, "RANKED_AT_MOST", 2)
    for n in range(2):
        IncidentFactory(slug=f"train-{n}", stage="train", symptom="NCCL timeout")
    for n in range(3):
        IncidentFactory(slug=f"serve-{n}", stage="serve", symptom="NCCL timeout")

    for query in ({"q": "nccl", "stage": "train"}, {"stage": "train", "q": "nccl"}):
        assert sorted(_slugs_for(alice_client, query)) == ["train-0", "train-1"]
    oldest_first = {"q": "nccl", "stage": "serve", "sort": "updated"}
    assert _slugs_for(alice_client, oldest_first) == ["serve-1", "serve-2"]


def test_a_full_search_says_so_in_chinese(alice_client, monkeypatch):
    from incidents import querysets

    monkeypatch.setattr(querysets, "RANKED_AT_MOST", 1)
    monkeypatch.setattr(views, "RANKED_AT_MOST", 1)
    IncidentFactory(symptom="显存不足")
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    body = alice_client.get(LIST, {"q": "显存"}).content.decode()
    assert "显示最近更新的 1 条匹配" in body


@pytest.mark.parametrize("at_most, expected", [(1, ["m6"]), (3, ["m6", "m2", "m1"])])
def test_a_search_finds_its_most_recent_matches_among_the_older_ones_too(
    alice_client, monkeypatch, at_most, expected
):
    """PostgreSQL looks among the most recently updated incidents first, then among the older
    ones: together, the same matches as one look at all of them."""
    from datetime import timedelta

    from django.utils import timezone

    from common.memo import Memo
    from incidents import querysets

    monkeypatch.setattr(querysets, "RANKED_AT_MOST", at_most)
    monkeypatch.setattr(querysets, "RECENT_WINDOW", 3)
    monkeypatch.setattr(querysets, "_edges", Memo(size=4))
    start = timezone.now() - timedelta(days=1)
    for n in range(8):
        matches = n in (0, 1, 2, 6)
        made = IncidentFactory(
            slug=f"{'m' if matches else 'x'}{n}",
            symptom="gradient overflow" if matches else f"step {n} took long",
        )
        Incident.objects.filter(pk=made.pk).update(updated_at=start + timedelta(minutes=n))

    assert _slugs(alice_client, "gradient overflow") == expected


@pytest.mark.parametrize("few", [1, 2000])
def test_a_search_with_words_and_longer_terms_finds_the_same_older_matches(
    alice_client, monkeypatch, few
):
    """PostgreSQL reads a search's older matches by its words alone first when they are few
    (`few` or fewer), else by all its terms at once: the same matches either way."""
    from datetime import timedelta

    from django.utils import timezone

    from common.memo import Memo
    from incidents import querysets

    monkeypatch.setattr(querysets, "RANKED_AT_MOST", 3)
    monkeypatch.setattr(querysets, "RECENT_WINDOW", 3)
    monkeypatch.setattr(querysets, "FEW_WORD_MATCHES", few)
    monkeypatch.setattr(querysets, "_edges", Memo(size=4))
    start = timezone.now() - timedelta(days=1)
    symptoms = [
        "gradient overflow on rank 3",  # m0
        "gradient overflow on rank 4",
        "watchdog timeout on rank 3",
        "gradient overflow on rank 3",  # m3
        "gradient overflow on rank 5",
        "gradient overflow on rank 3",  # m5
        "gradient overflow on rank 6",
        "collective timeout on rank 3",
    ]
    for n, symptom in enumerate(symptoms):
        letter = "abcdefgh"[n]
        made = IncidentFactory(slug=f"case-{letter}", title=f"Case {letter}", symptom=symptom)
        Incident.objects.filter(pk=made.pk).update(updated_at=start + timedelta(minutes=n))

    assert _slugs(alice_client, "gradient 3") == ["case-f", "case-d", "case-a"]


def test_on_postgresql_a_saved_search_document_is_compressed_with_lz4(db):
    """A search decompresses every candidate's document: LZ4 does it in less than half
    pglz's time (migration 0028)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("SQLite compresses nothing")
    incident = IncidentFactory(remedy="nvidia-smi --query-gpu=memory.used --format=csv\n" * 40)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_column_compression(search_document) FROM incidents_incident WHERE id = %s",
            [incident.pk],
        )
        assert cursor.fetchone() == ("lz4",)
