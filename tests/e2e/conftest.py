"""Real-browser journeys: Debian Chromium driven by plain Playwright against `live_server`.

Analyses really run: `analyses` gives a journey a private Redis and a real `celery worker`
process on the test database. Each journey checks what the user sees and ends with
`visit.finish(name)`: a screenshot of its last screen in test-artifacts/screenshots/, no
request that left the machine, no script error in the page, and within its time budget.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.utils import translation
from playwright.sync_api import Browser, ConsoleMessage, Page, expect, sync_playwright

from tests.services import ROOT, RedisServer, Worker, broker, free_port, have_redis_server, need

# Playwright's sync API keeps an event loop running in this thread; Django would refuse
# the test's own ORM calls (SynchronousOnlyOperation) without this.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOTS = ARTIFACTS / "screenshots"
VIEWPORT = {"width": 1280, "height": 800}
# Every wait is bounded, so that a journey fails within its budget instead of hanging:
# a step gets STEP_TIMEOUT_MS, waiting for a real worker to start and finish a tail
# WORKER_TIMEOUT_MS, and a whole journey JOURNEY_BUDGET_S.
STEP_TIMEOUT_MS = 10_000
WORKER_TIMEOUT_MS = 40_000
JOURNEY_BUDGET_S = 60
LOCAL_SCHEMES = {"data", "blob", "about"}  # never leave the machine

expect.set_options(timeout=STEP_TIMEOUT_MS)


def zh(message: str) -> str:
    """`message` as the Chinese UI shows it today: the translation if the catalog has one.

    The Chinese catalog is being written while these journeys exist, so they assert on what
    the catalog says rather than on a copy of it.
    """
    with translation.override("zh-hans"):
        return translation.gettext(message)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.e2e_failed = report.failed
    return report


@pytest.fixture(scope="package")
def browser() -> Browser:
    """One Chromium for all journeys. Package scope, not session: Playwright's event loop
    must not outlive the journeys, or the rest of the suite would run inside it."""
    need(CHROMIUM is not None, "chromium is not installed (bin/browser installs it)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


class Visit:
    """One user's browser tab on the live server, with a record of what the page did."""

    def __init__(self, page: Page, base_url: str):
        self.page = page
        self.base_url = base_url
        self.host = urlsplit(base_url).netloc
        self.started = time.monotonic()
        self.requests: list[str] = []
        self.problems: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("console", self._console)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text} ({message.location['url']})")

    def go(self, path: str) -> None:
        self.page.goto(self.base_url + path)

    def sign_in(self, username: str) -> None:
        """Through the login form, as a person does (the cast's password is pw-<name>)."""
        page = self.page
        if "/login/" not in page.url:
            self.go("/login/")
        expect(page.locator("h1")).to_have_text("Sign in")
        page.locator("#id_username").fill(username)
        page.locator("#id_password").fill("pw-" + username)
        page.get_by_role("button", name="Sign in").click()
        expect(page.locator(".usernav .who")).to_contain_text(username)

    def finish(self, journey: str) -> Path:
        """Save the last screen, then check that nothing left the machine or broke."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{journey}.png"
        self.page.screenshot(path=path)
        remote = [
            url
            for url in self.requests
            if urlsplit(url).scheme not in LOCAL_SCHEMES and urlsplit(url).netloc != self.host
        ]
        assert remote == [], f"requests left the machine: {remote}"
        assert self.problems == [], "\n".join(self.problems)
        took = time.monotonic() - self.started
        assert took < JOURNEY_BUDGET_S, f"{journey} took {took:.0f} s"
        return path


@pytest.fixture
def visit(request, browser, live_server):
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    context.set_default_timeout(STEP_TIMEOUT_MS)
    page = context.new_page()
    yield Visit(page, live_server.url)
    if getattr(request.node, "e2e_failed", False):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / f"FAILED-{request.node.name}.png")
    context.close()


class Analyses:
    """A real worker process for the journey. It starts on demand, so that a journey can
    watch a tail wait in the queue first."""

    def __init__(self, broker_url: str):
        self.broker_url = broker_url
        self.worker: Worker | None = None

    def start(self) -> None:
        if self.worker is None:
            self.worker = Worker(self.broker_url, "e2e")

    def stop(self) -> None:
        if self.worker is not None:
            self.worker.stop()
            # Shown by pytest only when the journey failed.
            print("worker log, last lines:\n" + self.worker.log.read_text(errors="replace")[-3000:])


@pytest.fixture
def analyses(live_server):
    """A private Redis that this process, and so the live server's thread, sends tasks to."""
    need(have_redis_server(), "redis-server is not installed")
    redis = RedisServer(free_port())
    redis.start()
    runner = Analyses(redis.url)
    try:
        with broker(redis.url):
            yield runner
    finally:
        runner.stop()
        redis.stop()
