"""The knowledge base stays in step with people's edits, and the queue with its workers."""

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.db import OperationalError, connection
from django.urls import reverse
from rest_framework.test import APIClient

from incidents import logmatch, tasks
from incidents.knowledge import knowledge_index
from incidents.models import Analysis, Incident, Signature
from incidents.seeding import catalog_seed
from incidents.services import analysis as analysis_service
from incidents.services import analysis_request, analysis_run, knowledge
from incidents.services.analysis import analysis_fail
from incidents.services.knowledge import _enqueue_rescore
from tests.html_forms import as_posted

pytestmark = pytest.mark.django_db
TAIL = "OSError: [Errno 28] No space left on device: 'exp/tri3/ali.1.gz'\n"


def _admin_change(client, obj, **changes):
    url = reverse(f"admin:incidents_{obj._meta.model_name}_change", args=[obj.pk])
    return client.post(url, {**as_posted(client.get(url).content.decode()), **changes})


def test_an_admin_edit_survives_reseeding_and_drops_stale_translations(lena_client, catalog):
    incident = Incident.objects.get(slug="disk-full")
    assert incident.translations
    response = _admin_change(lena_client, incident, remedy="tools/cleanup-exp.sh --older-than 14d")
    assert response.status_code == 302, response.content.decode()[-2000:]
    incident.refresh_from_db()
    assert incident.catalog_digest == ""
    assert incident.translations == {}
    assert catalog_seed(language="en").kept_edited == ["disk-full"]
    incident.refresh_from_db()
    assert incident.remedy == "tools/cleanup-exp.sh --older-than 14d"


def test_an_admin_edit_of_a_shipped_signature_survives_reseeding(lena_client, catalog):
    signature = Signature.objects.filter(incident__slug="disk-full").first()
    assert signature.catalog_digest
    response = _admin_change(lena_client, signature, note="ours now")
    assert response.status_code == 302, response.content.decode()[-2000:]
    signature.refresh_from_db()
    assert (signature.note, signature.catalog_digest) == ("ours now", "")
    assert catalog_seed(language="en").signatures_kept_edited == [signature.catalog_key]


def test_a_deleted_catalog_signature_stays_deleted(lena, catalog):
    api = APIClient()
    api.force_authenticate(lena)
    signature = Signature.objects.filter(incident__slug="gpu-oom").first()
    url = reverse("incidents-api:signature-detail", args=[signature.pk])
    assert api.delete(url).status_code == 204
    result = catalog_seed(language="en")
    assert result.signatures_created == 0
    assert not Signature.objects.filter(catalog_key=signature.catalog_key).exists()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("method", ["post", "patch", "delete"])
def test_every_signature_change_through_the_api_reranks_stored_analyses(
    lena, catalog, monkeypatch, method
):
    scheduled = []
    monkeypatch.setattr(knowledge, "_enqueue_rescore", lambda: scheduled.append(method))
    api = APIClient()
    api.force_authenticate(lena)
    signature = Signature.objects.filter(incident__slug="disk-full").first()
    detail = reverse("incidents-api:signature-detail", args=[signature.pk])
    calls = {
        "post": lambda: api.post(
            reverse("incidents-api:signature-list"),
            {"incident": "disk-full", "pattern": r"ENOSPC on \S+", "examples": "ENOSPC on /data"},
            format="json",
        ),
        "patch": lambda: api.patch(detail, {"enabled": False}, format="json"),
        "delete": lambda: api.delete(detail),
    }
    assert calls[method]().status_code in (200, 201, 204)
    assert scheduled == [method]  # once the change is committed


def test_seeding_schedules_one_reranking(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        catalog_seed(language="en")
    assert callbacks.count(_enqueue_rescore) == 1


def test_a_tail_that_runs_out_of_time_fails_with_a_message(alice, catalog, monkeypatch):
    analysis = analysis_request(data=TAIL, user=alice)

    def too_slow(*args, **kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(logmatch, "analyze", too_slow)
    analysis_run(analysis_id=analysis.pk)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.FAILED
    assert "took too long" in analysis.error


def test_giving_up_leaves_an_analysis_another_worker_is_running(alice, catalog):
    analysis = analysis_request(data=TAIL, user=alice)
    Analysis.objects.filter(pk=analysis.pk).update(status=Analysis.Status.RUNNING, attempts=1)
    analysis_fail(analysis_id=analysis.pk, message="retries exhausted")
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.RUNNING


# The same outage as Django reports it, and as the driver does where Django does not wrap it
# (closing a server-side cursor on a connection the server has terminated).
OUTAGES = [
    OperationalError("server closed the connection"),
    connection.Database.OperationalError("terminating connection due to administrator command"),
]


@pytest.mark.parametrize("outage", OUTAGES, ids=["django", "driver"])
def test_a_task_out_of_retries_fails_its_tail_unless_the_database_was_the_trouble(
    alice, catalog, outage
):
    waiting, broken = (analysis_request(data=TAIL, user=alice) for _ in range(2))
    give_up = tasks.analysis_run.on_failure
    give_up(outage, "t1", (waiting.pk,), {}, None)
    give_up(ValueError("bad state"), "t2", (broken.pk,), {}, None)

    assert Analysis.objects.get(pk=waiting.pk).status == Analysis.Status.QUEUED  # the sweep's
    broken.refresh_from_db()
    assert broken.status == Analysis.Status.FAILED
    assert "bad state" in broken.error


@pytest.mark.django_db(transaction=True)  # the release reconnects, as a worker does
@pytest.mark.parametrize("outage", OUTAGES, ids=["django", "driver"])
def test_an_outage_mid_run_gives_the_claim_back_for_the_tasks_retry(
    alice, catalog, monkeypatch, outage
):
    analysis = analysis_request(data=TAIL, user=alice)

    def cut_off():
        raise outage

    monkeypatch.setattr(analysis_service, "knowledge_index", cut_off)
    with pytest.raises(tasks.analysis_run.autoretry_for):
        analysis_run(analysis_id=analysis.pk)

    analysis.refresh_from_db()
    assert (analysis.status, analysis.attempts) == (Analysis.Status.QUEUED, 0)


def test_the_seeded_database_gives_the_engine_what_the_catalog_gives_the_benchmarks(catalog):
    """bench/eval_engine.py and the engine tests stand in for the database with
    `engine_specs()`; their figures hold for the product only while both see the same."""
    from incidents.catalog import engine_specs
    from incidents.knowledge import knowledge_index

    incidents, signatures = engine_specs()
    stored = knowledge_index()

    assert dict(stored.incidents) == {spec.slug: spec for spec in incidents}
    stored_patterns = sorted(
        (found.slug, found.pattern)
        for found in stored.signatures.signatures
        if found.kind == "signature"
    )
    assert stored_patterns == sorted((spec.slug, spec.pattern) for spec in signatures)


def test_noticing_a_change_costs_no_query_within_a_second(
    catalog, settings, django_assert_num_queries
):
    from incidents.knowledge import knowledge_index
    from incidents.models import KnowledgeState
    from tests.factories import IncidentFactory

    settings.KNOWLEDGE_CHECK_SECONDS = 60
    before = knowledge_index()
    KnowledgeState.replace("token")  # as another process's change would
    with django_assert_num_queries(0):
        assert knowledge_index() is before  # seen within the interval, not at once
    IncidentFactory(slug="seen-at-once", symptom="RuntimeError: the quux lost its shard index")
    after = knowledge_index()  # this process's own change: seen at once
    assert "seen-at-once" in after.incidents


def test_the_compiled_book_offers_each_kind_of_lead_the_catalog_names(catalog):
    specs = knowledge_index().incidents

    assert specs["build-failure"].stage_lead
    assert specs["host-oom"].kill_lead
    assert specs["python-api-drift"].drift_lead
    assert not any(spec.drift_lead for slug, spec in specs.items() if slug != "python-api-drift")
    assert specs["stale-recipe-config"].config_lead


def test_an_analysis_of_an_api_error_inside_remote_code_leads_to_a_moved_dependency(alice, catalog):
    tail = (
        'File "transformers_modules/Chat-8B/configuration_chat.py", line 51, in __init__\n'
        "    if llm_config['architectures'][0] == 'LlamaForCausalLM':\n"
        "KeyError: 'architectures'\n"
    )
    analysis = analysis_request(data=tail, user=alice, log_path="")
    analysis_run(analysis_id=analysis.pk, task_id="")

    top = Analysis.objects.get(pk=analysis.pk).suggestions.order_by("rank").first()
    assert top.incident.slug == "python-api-drift"
    assert not top.confident
