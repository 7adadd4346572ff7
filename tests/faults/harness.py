"""What the fault tests share: real tails, a signed-in browser over HTTP, and the checks."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import requests
from django.conf import settings
from django.db.models import Count

from incidents.models import Analysis, AnalysisSuggestion
from tests.services import ROOT, database_url, free_port, wait_until

CASES = Path(__file__).resolve().parent.parent / "logmatch" / "cases"
# Real tails from the engine's fixture cases: each (log path, text), in a stable order.
TAILS = [
    (f"exp/{path.stem}/log/run.1.log", path.read_text()) for path in sorted(CASES.glob("*.log"))
]
FINISHED = (Analysis.Status.DONE, Analysis.Status.FAILED)
PASSWORD = "pw-erin-1234"


class Browser:
    """A signed-in user over real HTTP: the sign-in form with its CSRF token, then pages."""

    def __init__(self, base_url: str, username: str, password: str):
        self.base_url = base_url
        self.session = requests.Session()
        page = self.get("/login/")
        response = self.session.post(
            base_url + "/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": csrf(page)},
            headers={"Referer": base_url + "/login/"},
            allow_redirects=False,
            timeout=30,
        )
        assert response.status_code == 302, response.text[:500]

    def get(self, path: str) -> str:
        response = self.session.get(self.base_url + path, timeout=30)
        assert response.status_code == 200, (path, response.status_code)
        return response.text

    def submit_tail(self, text: str, log_path: str = "") -> requests.Response:
        page = self.get("/analyses/new/")
        return self.session.post(
            self.base_url + "/analyses/new/",
            data={"log": text, "log_path": log_path, "csrfmiddlewaretoken": csrf(page)},
            headers={"Referer": self.base_url + "/analyses/new/"},
            allow_redirects=False,
            timeout=30,
        )


def csrf(page: str) -> str:
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, "no CSRF token in the page"
    return match.group(1)


def page_status(html: str) -> str:
    match = re.search(r'id="analysis-result"[^>]*data-status="(\w+)"', html)
    assert match, "no analysis status on the page"
    return match.group(1)


def all_finished(ids: Iterable[int]) -> bool:
    ids = list(ids)
    return Analysis.objects.filter(pk__in=ids, status__in=FINISHED).count() == len(ids)


def assert_done_exactly_once(ids: Iterable[int], *, attempts: dict[int, int] | None = None):
    """Each analysis is done, claimed the expected number of times, with one set of suggestions."""
    ids = sorted(ids)
    rows = {
        row["pk"]: row
        for row in Analysis.objects.filter(pk__in=ids).values("pk", "status", "attempts", "report")
    }
    assert sorted(rows) == ids
    expected = attempts or {}
    wrong = {
        pk: (row["status"], row["attempts"])
        for pk, row in rows.items()
        if (row["status"], row["attempts"]) != (Analysis.Status.DONE, expected.get(pk, 1))
    }
    assert not wrong, f"not done exactly once (status, attempts): {wrong}"
    stored = dict(
        AnalysisSuggestion.objects.filter(analysis__in=ids)
        .values_list("analysis")
        .annotate(n=Count("id"))
    )
    reported = {pk: len(row["report"]["suggestions"]) for pk, row in rows.items()}
    assert {pk: stored.get(pk, 0) for pk in ids} == reported
    ranks = AnalysisSuggestion.objects.filter(analysis__in=ids).values_list("analysis", "rank")
    assert len(set(ranks)) == len(ranks), "a rank was stored twice"


def pool_children(pid: int) -> list[int]:
    """The processes whose parent is `pid`: a prefork worker's pool children."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it exited while we looked
            continue
        if int(fields[1]) == pid:
            children.append(int(stat.parent.name))
    return children


class WebServer:
    """gunicorn on loopback, on the test database: a web process that keeps its connections."""

    def __init__(self, broker_url: str, name: str = "web", workers: int = 2):
        self.url = f"http://127.0.0.1:{free_port()}"
        self.log = Path(settings.VAR_DIR) / f"{name}.log"
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker_url,
            "VAR_DIR": str(settings.VAR_DIR),
        }
        self.process = subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "-c", "python:config.gunicorn", "config.wsgi"),
                *("--bind", self.url.removeprefix("http://"), "--workers", str(workers)),
                *("--access-logfile", "-", "--error-logfile", "-"),
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        if not wait_until(self._up, 60):
            self.stop()
            raise AssertionError(self.log.read_text()[-3000:])

    def _up(self) -> bool:
        try:
            return requests.get(self.url + "/healthz", timeout=10).status_code == 200
        except requests.RequestException:  # not listening yet, or still importing the app
            return False

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(30)
