"""A process brings its compiled index up to date with what changed since it was built,
instead of reading and compiling the whole book again."""

from __future__ import annotations

import pytest

from incidents import services
from incidents.knowledge import knowledge_index, knowledge_state_forget
from incidents.logmatch import analyze
from incidents.models import Incident, KnowledgeChange, KnowledgeState
from tests.admin_forms import admin_change
from tests.factories import IncidentFactory

QUUX = "RuntimeError: the quux lost its shard index"


def _fresh_look() -> None:
    """As another process sees the book: the state is read again on the next call."""
    knowledge_state_forget()


def _top(text: str) -> str | None:
    report = analyze(text, knowledge_index())
    return report.suggestions[0].slug if report.confident else None


def test_a_filed_incident_is_compiled_alone_and_matched_at_once(catalog):
    before = knowledge_index()

    IncidentFactory(slug="quux-shard", symptom=QUUX)
    after = knowledge_index()

    assert after.changes == 1  # one incident compiled; the book was not read again
    assert after.incidents.keys() == before.incidents.keys() | {"quux-shard"}
    assert _top(f"step 3\n{QUUX}") == "quux-shard"


def test_bringing_an_index_up_to_date_costs_four_queries(catalog, django_assert_max_num_queries):
    knowledge_index()
    IncidentFactory(slug="quux-shard", symptom=QUUX)

    # the state, the changes, the changed incidents and their signatures
    with django_assert_max_num_queries(4):
        knowledge_index()


def test_edits_signatures_and_deletions_are_followed(catalog, lena):
    incident = IncidentFactory(slug="quux-shard", symptom=QUUX)
    knowledge_index()
    services.incident_update(
        incident=incident, data={"symptom": "quux: the shard map went stale"}, actor=lena
    )
    signature = services.signature_create(
        incident=incident,
        pattern=r"frobnicator \d+ overheated",
        examples="ERROR frobnicator 3 overheated",
        author=lena,
    )

    assert _top("frobnicator 7 overheated at step 90") == "quux-shard"
    assert _top(f"step 3\n{QUUX}") != "quux-shard"  # the old symptom no longer matches

    services.signature_delete(signature=signature)
    assert _top("frobnicator 7 overheated at step 90") is None

    services.incident_delete(incident=Incident.objects.get(slug="quux-shard"))
    index = knowledge_index()
    assert "quux-shard" not in index.incidents
    assert "quux-shard" not in {s.slug for s in analyze(QUUX, index).suggestions}


def test_a_change_made_by_another_process_is_followed_too(catalog):
    knowledge_index()
    IncidentFactory(slug="quux-shard", symptom=QUUX)
    IncidentFactory(slug="quux-other", symptom="RuntimeError: the quux ran out of shards")
    _fresh_look()

    index = knowledge_index()

    assert {"quux-shard", "quux-other"} <= index.incidents.keys()
    assert index.changes == 2


def test_a_bulk_write_without_changes_reads_the_whole_book(catalog):
    knowledge_index()
    IncidentFactory(slug="quux-shard", symptom=QUUX)
    assert knowledge_index().changes == 1

    KnowledgeState.replace("token")  # as the demo generator does after writing in bulk
    _fresh_look()

    index = knowledge_index()
    assert index.changes == 0
    assert "quux-shard" in index.incidents
    IncidentFactory(slug="quux-other", symptom="RuntimeError: the quux ran out of shards")
    assert knowledge_index().changes == 1  # and the next change is followed again


def test_an_index_older_than_the_log_of_changes_reads_the_whole_book(catalog):
    knowledge_index()
    IncidentFactory(slug="quux-shard", symptom=QUUX)
    KnowledgeChange.objects.all().delete()  # as the re-ranking prunes changes a month old
    IncidentFactory(slug="quux-other", symptom="RuntimeError: the quux ran out of shards")
    _fresh_look()

    index = knowledge_index()

    assert index.changes == 0
    assert {"quux-shard", "quux-other"} <= index.incidents.keys()


def test_an_index_of_another_history_is_never_brought_up_to_date(catalog):
    """A database restored from a backup, or a test's: ids go on, the history differs."""
    IncidentFactory(slug="quux-shard", symptom=QUUX)
    knowledge_index()
    Incident.objects.filter(slug="quux-shard").delete()
    KnowledgeChange.objects.update(token="another-history")
    IncidentFactory(slug="quux-other", symptom="RuntimeError: the quux ran out of shards")

    index = knowledge_index()

    assert index.changes == 0
    assert "quux-shard" not in index.incidents


@pytest.mark.django_db(transaction=True)
def test_many_changes_read_the_whole_book_again_in_the_background(catalog, monkeypatch):
    from incidents import knowledge

    monkeypatch.setattr(knowledge, "REBUILD_AFTER", 2)
    knowledge_index()
    IncidentFactory(slug="quux-shard", symptom=QUUX)
    assert knowledge_index().changes == 1
    IncidentFactory(slug="quux-other", symptom="RuntimeError: the quux ran out of shards")

    assert knowledge_index().changes == 2  # served at once, as it is
    knowledge._rebuilding.join(timeout=120)
    index = knowledge_index()

    assert not knowledge._rebuilding.is_alive()
    assert index.changes == 0
    assert {"quux-shard", "quux-other"} <= index.incidents.keys()


def test_an_incident_renamed_in_the_admin_leaves_no_trace_under_its_old_slug(catalog, lena):
    incident = IncidentFactory(slug="quux-shard", symptom=QUUX)
    knowledge_index()

    admin_change(incident, lena, slug="quux-renamed")
    index = knowledge_index()

    assert "quux-shard" not in index.incidents
    assert _top(f"step 3\n{QUUX}") == "quux-renamed"


def test_a_signature_moved_in_the_admin_leaves_its_old_incident(catalog, lena):
    first = IncidentFactory(slug="quux-shard", symptom=QUUX)
    second = IncidentFactory(slug="quux-other", symptom="RuntimeError: the quux ran out of shards")
    signature = services.signature_create(
        incident=first,
        pattern=r"frobnicator \d+ overheated",
        examples="ERROR frobnicator 3 overheated",
        author=lena,
    )
    assert _top("frobnicator 7 overheated at step 90") == "quux-shard"

    admin_change(signature, lena, incident=second.pk)

    assert _top("frobnicator 7 overheated at step 90") == "quux-other"
    slugs = {s.slug for s in analyze("frobnicator 7 overheated", knowledge_index()).suggestions}
    assert "quux-shard" not in slugs


def test_a_signatures_example_lines_let_a_new_wording_find_its_incident(catalog, lena):
    incident = IncidentFactory(
        slug="quux-shard", title="Quux index", symptom=QUUX, description="Rebuild it."
    )
    new_wording = "ERROR frobnicator unit 4 is overheating, fan at 0 rpm\n"
    knowledge_index()
    assert "quux-shard" not in {s.slug for s in analyze(new_wording, knowledge_index()).suggestions}

    services.signature_create(
        incident=incident,
        pattern=r"frobnicator \d+ overheated",
        examples="2024-05-01 12:00:01 WARN frobnicator 3 overheated, fan at 0 rpm",
        author=lena,
    )
    report = analyze(new_wording, knowledge_index())

    assert report.suggestions[0].slug == "quux-shard"  # as a lead: the expression did not match
    assert report.suggestions[0].evidence[0].kind == "similar"
