"""Redis goes away while engineers are submitting tails through the web, then comes back.

Every request is still accepted (302 from the form, 202 from the API), people see "queued",
and once the broker is back the sweep sends what it never received: every accepted analysis
ends done exactly once. Redis here keeps nothing on disk, so the messages it held when it was
stopped are gone too; only the database rows survive, which is the point.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

import pytest
import requests
from rest_framework.authtoken.models import Token

from incidents.models import Analysis
from incidents.services import analysis_sweep
from incidents.services import sweep as sweep_service
from tests.faults.harness import (
    PASSWORD,
    TAILS,
    Browser,
    all_finished,
    assert_done_exactly_once,
    page_status,
)
from tests.services import wait_until

pytestmark = pytest.mark.django_db(transaction=True)

SUBMITTERS = 4
PER_PHASE = 8  # accepted submissions before, during and after the outage, at least
UP, DOWN, BACK = "up", "down", "back"


@dataclass
class Submission:
    via: str
    phase_started: str
    phase_ended: str
    status_code: int
    analysis_id: int | None = None
    seen_status: str = ""


class Outage:
    """The phase Redis is in, as the submitters see it."""

    def __init__(self):
        self.phase = UP
        self.stop = threading.Event()  # the test gave up: submitters stop too
        self.lock = threading.Lock()
        self.done: list[Submission] = []
        self.errors: list[BaseException] = []

    def accepted_in(self, phase: str) -> int:
        with self.lock:
            return sum(1 for s in self.done if s.phase_started == s.phase_ended == phase)

    def covered(self, phase: str) -> bool:
        """At least PER_PHASE accepted wholly within `phase`, through the form and the API."""
        with self.lock:
            within = [s for s in self.done if s.phase_started == s.phase_ended == phase]
        return len(within) >= PER_PHASE and {s.via for s in within} == {"form", "api"}


def _submit_form(browser: Browser, text: str, log_path: str) -> tuple[int, int | None, str]:
    response = browser.submit_tail(text, log_path)
    if response.status_code != 302:
        return response.status_code, None, ""
    location = response.headers["Location"]
    analysis_id = int(location.rstrip("/").rsplit("/", 1)[-1])
    return 302, analysis_id, page_status(browser.get(location))


def _submit_api(base_url: str, token: str, text: str, log_path: str) -> tuple[int, int | None, str]:
    response = requests.post(
        base_url + "/api/v1/analyses/",
        json={"log": text, "log_path": log_path},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    if response.status_code != 202:
        return response.status_code, None, ""
    body = response.json()
    return 202, body["id"], body["status"]


def _submitter(n: int, outage: Outage, browser: Browser, base_url: str, token: str, take) -> None:
    try:
        while outage.accepted_in(BACK) < PER_PHASE and not outage.stop.is_set():
            log_path, text = take()
            phase = outage.phase
            if n % 2:
                via, result = "form", _submit_form(browser, text, log_path)
            else:
                via, result = "api", _submit_api(base_url, token, text, log_path)
            with outage.lock:
                outage.done.append(Submission(via, phase, outage.phase, *result))
            time.sleep(0.05)
    except BaseException as error:  # reported by the test, not lost in a thread
        outage.errors.append(error)


def test_tails_submitted_while_redis_is_down_are_analysed_once_it_is_back(
    live_server, redis, workers, engineer, monkeypatch
):
    workers("steady")
    token = Token.objects.create(user=engineer).key
    outage = Outage()
    jobs = itertools.cycle(TAILS)
    jobs_lock = threading.Lock()

    def take() -> tuple[str, str]:
        with jobs_lock:
            return next(jobs)

    threads = [
        threading.Thread(
            target=_submitter,
            args=(
                n,
                outage,
                Browser(live_server.url, "erin", PASSWORD),
                live_server.url,
                token,
                take,
            ),
        )
        for n in range(SUBMITTERS)
    ]
    for thread in threads:
        thread.start()
    try:
        assert wait_until(lambda: outage.covered(UP) or outage.errors, 60)
        redis.stop()
        outage.phase = DOWN
        assert wait_until(lambda: outage.covered(DOWN) or outage.errors, 120)
        outage.phase = BACK  # before the start: a request that ends "down" surely missed it
        redis.start()
    except BaseException:
        outage.stop.set()
        raise
    finally:
        for thread in threads:
            thread.join(120)
    assert not outage.errors, outage.errors
    assert not any(thread.is_alive() for thread in threads)

    codes = {(s.via, s.status_code) for s in outage.done}
    assert codes <= {("form", 302), ("api", 202)}, codes
    accepted = [s.analysis_id for s in outage.done]
    assert len(set(accepted)) == len(accepted) == Analysis.objects.count()
    during = [s for s in outage.done if s.phase_started == s.phase_ended == DOWN]
    assert {s.seen_status for s in during} == {Analysis.Status.QUEUED}
    assert {s.via for s in during} == {"form", "api"}

    # The worker reconnects by itself and runs what is sent after the outage; what was
    # accepted during it was never sent, so it waits in the database for the sweep.
    back = [s.analysis_id for s in outage.done if s.phase_started == BACK]
    assert wait_until(
        lambda: Analysis.objects.filter(pk__in=back, status=Analysis.Status.DONE).exists(), 60
    )
    assert set(
        Analysis.objects.filter(pk__in=[s.analysis_id for s in during]).values_list(
            "status", flat=True
        )
    ) == {Analysis.Status.QUEUED}

    # What beat does every minute, here every second with no grace period: send again
    # whatever is still queued. A row whose message did arrive is delivered twice; its
    # claim makes the second delivery a no-op.
    monkeypatch.setattr(sweep_service, "QUEUED_GRACE", timedelta(0))

    def swept_and_finished() -> bool:
        if all_finished(accepted):
            return True
        analysis_sweep()
        return all_finished(accepted)

    assert wait_until(swept_and_finished, 120, every=1.0), Analysis.objects.exclude(
        status=Analysis.Status.DONE
    ).values_list("pk", "status")
    assert_done_exactly_once(accepted)
