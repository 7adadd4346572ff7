"""Every accepted analysis ends done exactly once: real Redis, real worker processes.

The duplicate delivery, the dead worker and the broker that is down at submit time each
end with one stored result, one claim that won, and nothing lost.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from config.celery import app
from incidents.models import Analysis, AnalysisSuggestion, KnowledgeGap
from incidents.services import analysis_request, analysis_sweep
from incidents.tasks import analysis_run as analysis_run_task
from tests.services import Worker, broker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

OOM_TAIL = """\
[rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 211, in <module>
[rank0]:     loss.backward()
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.
"""


def _broker_has_messages() -> bool:
    """Waiting in the queue, or delivered and not yet acknowledged: with late acknowledgement
    a delivery leaves kombu's `unacked` hash only once its task has returned."""
    with app.connection_for_read() as connection:
        client = connection.default_channel.client
        return client.llen("celery") > 0 or client.hlen("unacked") > 0


def _done(analysis_id: int) -> bool:
    return Analysis.objects.filter(pk=analysis_id, status__in=["done", "failed"]).exists()


def test_it_runs_a_submitted_tail_in_a_real_worker(workers, alice):
    workers()
    analysis = analysis_request(data=OOM_TAIL, user=alice, log_path="exp/train/log/train.1.log")
    assert analysis.status == Analysis.Status.QUEUED
    assert wait_until(lambda: _done(analysis.pk), 30)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE
    assert analysis.attempts == 1
    assert analysis.confident
    assert analysis.top_incident.slug == "gpu-oom"
    assert analysis.report["suggestions"][0]["slug"] == "gpu-oom"


def test_a_task_delivered_twice_stores_one_result(workers, alice):
    analysis = analysis_request(data=OOM_TAIL, user=alice)  # queued once on commit
    analysis_run_task.apply_async((analysis.pk,))  # and delivered twice more
    analysis_run_task.apply_async((analysis.pk,))
    workers("a")
    workers("b")
    assert wait_until(lambda: _done(analysis.pk), 30)
    stored = list(AnalysisSuggestion.objects.filter(analysis=analysis).values_list("pk", flat=True))
    finished_at = Analysis.objects.get(pk=analysis.pk).finished_at
    # The other deliveries reach the workers too; each must find nothing left to do.
    assert wait_until(lambda: not _broker_has_messages(), 10)
    analysis.refresh_from_db()
    assert analysis.attempts == 1
    assert analysis.finished_at == finished_at  # stored once, never again
    assert (
        list(AnalysisSuggestion.objects.filter(analysis=analysis).values_list("pk", flat=True))
        == stored
    )
    assert len(stored) == len(analysis.report["suggestions"])


def test_a_broker_that_is_down_at_submit_leaves_the_tail_queued_until_the_sweep(
    redis, catalog, alice
):
    redis.stop()
    with broker(redis.url):
        analysis = analysis_request(data=OOM_TAIL, user=alice)  # no error for the user
        analysis.refresh_from_db()
        assert analysis.status == Analysis.Status.QUEUED
        redis.start()
        Analysis.objects.filter(pk=analysis.pk).update(
            queued_at=analysis.created_at.replace(year=2000)
        )
        assert analysis_sweep().requeued == [analysis.pk]
        worker = Worker(redis.url, "late")
        try:
            assert wait_until(lambda: _done(analysis.pk), 60), worker.log.read_text()[-2000:]
        finally:
            worker.stop()
    analysis.refresh_from_db()
    assert (analysis.status, analysis.attempts) == (Analysis.Status.DONE, 1)


def test_a_worker_killed_mid_run_does_not_lose_the_analysis(workers, alice):
    worker = workers("doomed")
    # A long tail keeps the worker busy long enough to be killed while it runs.
    big_tail = (
        "\n".join(
            f"WARNING (gmm-align-compiled[5.5]:AlignUtteranceWrapper():align-utils.cc:93) "
            f"Retrying utterance spk{n:05d}-utt{n:06d} with beam {n % 40}"
            for n in range(60_000)
        )
        + "\n"
        + OOM_TAIL
    )
    analysis = analysis_request(data=big_tail.encode()[: 2 * 1024 * 1024 - 1], user=alice)
    assert wait_until(
        lambda: Analysis.objects.filter(pk=analysis.pk, status="running").exists(), 30, 0.002
    )
    worker.kill()
    assert Analysis.objects.get(pk=analysis.pk).status == Analysis.Status.RUNNING
    assert analysis_sweep().requeued == []  # its claim is a lease that has not run out yet
    # Time passes: the lease runs out, and the next sweep takes the tail back.
    Analysis.objects.filter(pk=analysis.pk).update(claim_expires_at=timezone.now())
    assert analysis_sweep().requeued == [analysis.pk]
    workers("survivor")
    assert wait_until(lambda: _done(analysis.pk), 60)
    analysis.refresh_from_db()
    assert analysis.status == Analysis.Status.DONE
    assert analysis.attempts == 2


def test_an_unexplained_tail_becomes_a_knowledge_gap(workers, alice):
    workers()
    tail = "ERROR: frobnicator quux exploded at stage 7 with code 0x2f\n"
    first = analysis_request(data=tail, user=alice)
    second = analysis_request(data=tail.replace("7", "9"), user=alice)
    assert wait_until(lambda: _done(first.pk) and _done(second.pk), 30)
    gap = KnowledgeGap.objects.get()
    assert gap.analysis_count == 2
    assert not Analysis.objects.filter(confident=True).exists()
