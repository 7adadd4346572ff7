"""A tail that kills its worker every time is given up after MAX_ATTEMPTS, and only that tail.

The worker's pool process is killed with SIGKILL while it analyses the poison tail, as the
kernel's OOM killer would: the worker's main process survives, forks a new pool process and
goes on with the queue. The sweep sends the tail again until it has taken down MAX_ATTEMPTS
pool processes, then marks it failed with a message that says why. The other tails, queued
behind it the whole time, are each analysed once.
"""

from __future__ import annotations

import os
import signal

import pytest

from incidents.models import Analysis
from incidents.services import analysis_request, analysis_sweep
from incidents.services.analysis import MAX_ATTEMPTS
from incidents.tasks import analysis_run as analysis_run_task
from tests.faults.harness import TAILS, all_finished, assert_done_exactly_once, pool_children
from tests.incidents.test_analysis_lifecycle import OOM_TAIL
from tests.services import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

# Long enough (seconds of matching) that the pool process is surely killed while it runs.
POISON = (
    "\n".join(
        f"WARNING (gmm-align-compiled[5.5]:AlignUtteranceWrapper():align-utils.cc:93) "
        f"Retrying utterance spk{n:05d}-utt{n:06d} with beam {n % 40}"
        for n in range(60_000)
    )
    + "\n"
    + OOM_TAIL
).encode()[: 2 * 1024 * 1024 - 1]


def _running(analysis_id: int, attempt: int) -> bool:
    return Analysis.objects.filter(pk=analysis_id, status="running", attempts=attempt).exists()


def test_a_tail_that_kills_its_worker_every_time_is_given_up_alone(workers, engineer, client):
    worker = workers("host")
    innocents = [analysis_request(data=TAILS[0][1], user=engineer).pk]
    assert wait_until(lambda: all_finished(innocents), 30)

    poison = analysis_request(data=POISON, user=engineer, log_path="exp/tri3/log/align.1.log")
    for attempt in range(1, MAX_ATTEMPTS + 1):
        assert wait_until(lambda: _running(poison.pk, attempt), 30, 0.002), attempt  # noqa: B023
        log_path, text = TAILS[attempt]
        innocents.append(analysis_request(data=text, user=engineer, log_path=log_path).pk)
        (child,) = pool_children(worker.process.pid)
        os.kill(child, signal.SIGKILL)
        # The main process reports the lost job and forks a new pool process; the poison's
        # message comes back (reject on worker lost), and since it is the very message the
        # dead process held, it takes the claim over at once: the next attempt, no waiting
        # for the claim to expire. After the last attempt it gives the tail up instead.
        assert wait_until(lambda: all_finished(innocents), 30), worker.log.read_text()[-3000:]
    assert wait_until(lambda: all_finished([poison.pk]), 30), worker.log.read_text()[-3000:]
    assert analysis_sweep().failed == []  # given up already, by the last delivery

    poison.refresh_from_db()
    assert (poison.status, poison.attempts) == (Analysis.Status.FAILED, MAX_ATTEMPTS)
    assert poison.error == f"The analysis stopped its worker {MAX_ATTEMPTS} times and was given up."
    assert not poison.suggestions.exists()
    assert worker.process.poll() is None, "the worker itself went down"

    # Given up is final: one more delivery of it does nothing, and the queue goes on.
    analysis_run_task.apply_async((poison.pk,))
    innocents.append(analysis_request(data=TAILS[-1][1], user=engineer).pk)
    assert wait_until(lambda: all_finished(innocents), 30)
    assert Analysis.objects.get(pk=poison.pk).attempts == MAX_ATTEMPTS
    assert_done_exactly_once(innocents)

    client.force_login(engineer)
    page = client.get(poison.get_absolute_url()).content.decode()
    assert "This analysis failed:" in page
    assert f"stopped its worker {MAX_ATTEMPTS} times" in page
