"""After the incident book changes, stored analyses are ranked again: only those the change
can affect, a burst of edits at once, in batches, and the page says what changed."""

import pytest

from incidents.models import Analysis, KnowledgeChange, KnowledgeGap
from incidents.services import analyses_rescore, analysis_request, analysis_run
from incidents.services import analysis as analysis_service
from incidents.services import rescore as rescore_service
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.78 GiB total)\n"
DISK = "OSError: [Errno 28] No space left on device: 'exp/tri3/ali.1.gz'\n"
UNKNOWN = "step 7 loss 2.1\nERROR: frobnicator quux exploded at stage 7 with code 0x2f\n"
FROBNICATOR = "ERROR: frobnicator quux exploded at stage 12 with code 0x11"


@pytest.fixture
def stored(alice, catalog):
    """Three analysed tails, and no change waiting (the seed's own were taken)."""
    analyses = {}
    for name, tail in (("oom", OOM), ("disk", DISK), ("unknown", UNKNOWN)):
        analysis = analysis_request(data=tail, user=alice)
        analysis_run(analysis_id=analysis.pk)
        analyses[name] = Analysis.objects.get(pk=analysis.pk)
    KnowledgeChange.objects.all().delete()
    return analyses


@pytest.fixture
def ranked(monkeypatch):
    """The analyses the engine ran on again, in order."""
    seen: list[int] = []
    run = analysis_service.analyze_stored

    def counting(analysis, *args, **kwargs):
        seen.append(analysis.pk)
        return run(analysis, *args, **kwargs)

    monkeypatch.setattr(analysis_service, "analyze_stored", counting)
    return seen


def test_a_new_incident_reranks_only_the_tails_it_can_explain(stored, ranked):
    assert not stored["unknown"].confident
    IncidentFactory(slug="frobnicator", title="Frobnicator explodes", symptom=FROBNICATOR)

    result = analyses_rescore()

    assert (result.changes, result.candidates, result.rescored) == (1, 1, 1)
    assert ranked == [stored["unknown"].pk]
    unknown = Analysis.objects.get(pk=stored["unknown"].pk)
    assert unknown.confident and unknown.top_incident.slug == "frobnicator"
    assert (unknown.reranked_from, unknown.reranked_at is not None) == ("", True)
    assert result.newly_explained == [unknown.gap_id]
    assert KnowledgeGap.objects.get(pk=unknown.gap_id).explained_at is not None
    for name in ("oom", "disk"):
        untouched = Analysis.objects.get(pk=stored[name].pk)
        assert untouched.reranked_at is None and untouched.report == stored[name].report


def test_an_edited_incident_reranks_the_tails_that_suggested_it(stored, ranked, lena):
    from incidents.models import Signature
    from incidents.services import signature_update

    signature = Signature.objects.filter(incident__slug="disk-full").first()
    signature_update(signature=signature, data={"note": "edited"}, actor=lena)

    analyses_rescore()
    assert ranked == [stored["disk"].pk]
    disk = Analysis.objects.get(pk=stored["disk"].pk)
    assert disk.reranked_at is None  # still first: nothing to say on its page


def test_a_burst_of_edits_is_one_reranking(stored, ranked):
    for n in range(3):
        IncidentFactory(slug=f"frob-{n}", title=f"Frobnicator {n}", symptom=FROBNICATOR)
    assert KnowledgeChange.objects.filter(taken_at__isnull=True).count() == 3

    first = analyses_rescore()
    assert (first.changes, first.rescored) == (3, 1)
    again = analyses_rescore()
    assert (again.changes, again.rescored) == (0, 0)
    assert ranked == [stored["unknown"].pk]


def test_the_work_comes_in_batches_and_the_rest_is_handed_on(stored, ranked, monkeypatch):
    monkeypatch.setattr(rescore_service, "BATCH_TAILS", 1)
    IncidentFactory(slug="frobnicator", title="Frobnicator explodes", symptom=FROBNICATOR)
    IncidentFactory(slug="no-space", title="No space", symptom=DISK.strip())

    first = analyses_rescore()
    assert first.rescored == 1 and len(first.remaining) == 1
    rest = analyses_rescore(analysis_ids=first.remaining)
    assert rest.rescored == 1 and rest.remaining == []
    assert sorted(ranked) == sorted([stored["unknown"].pk, stored["disk"].pk])


def test_the_page_says_when_the_ranking_changed_after_the_fact(stored, alice_client):
    IncidentFactory(slug="frobnicator", title="Frobnicator explodes", symptom=FROBNICATOR)
    analyses_rescore()
    page = alice_client.get(stored["unknown"].get_absolute_url()).content.decode()
    assert 'id="reranked"' in page
    assert "after the incident book changed" in page
    assert "Before, nothing explained it." in page
    assert (
        'id="reranked"' not in alice_client.get(stored["oom"].get_absolute_url()).content.decode()
    )


def test_the_reranking_has_a_queue_of_its_own(db, django_capture_on_commit_callbacks):
    from django.conf import settings

    from incidents.services.knowledge import _enqueue_rescore

    assert settings.CELERY_TASK_ROUTES["incidents.tasks.analyses_rescore"] == {"queue": "rescore"}
    assert settings.CELERY_TASK_DEFAULT_QUEUE == "analyses"
    with django_capture_on_commit_callbacks() as callbacks:
        IncidentFactory(slug="a")
        IncidentFactory(slug="b")
    assert callbacks.count(_enqueue_rescore) == 1  # one transaction, one task for both
