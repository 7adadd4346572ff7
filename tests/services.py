"""Real processes for tests: a private Redis server and Celery workers as separate processes.

Each test that needs them gets its own Redis on a free port, so a test may stop and start it
(or kill a worker) without touching anything else on the machine.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from kombu import pools as kombu_pools

from config.celery import app

ROOT = Path(__file__).resolve().parent.parent
REQUIRED = os.environ.get("REQUIRE_SERVICES") == "1"


def need(condition: bool, reason: str) -> None:
    """Skip when a service is missing, except in CI where that is a failure."""
    if not condition:
        if REQUIRED:
            pytest.fail(reason)
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate: Callable[[], bool], timeout: float = 20.0, every: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


class RedisServer:
    def __init__(self, port: int):
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert wait_until(self.ping, 10), "redis-server did not start"

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False


def database_url() -> str:
    """The URL of the test database this process uses, for worker processes to share it."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class Worker:
    """`celery -A config worker` in its own process, on the given broker and the test DB."""

    def __init__(self, broker_url: str, name: str, extra_env: dict[str, str] | None = None):
        env = {
            **os.environ,
            "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": broker_url,
            "VAR_DIR": str(settings.VAR_DIR),
            "PYTHONUNBUFFERED": "1",
            **(extra_env or {}),
        }
        self.log = Path(settings.VAR_DIR) / f"worker-{name}.log"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                "1",
                "--hostname",
                f"{name}@%h",
                "--loglevel",
                "INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--queues",
                "analyses,rescore",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def ready(self) -> bool:
        return self.log.exists() and b"ready." in self.log.read_bytes()

    def kill(self) -> None:
        """kill -9 the whole worker: main process and its pool child."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def have_redis_server() -> bool:
    return shutil.which("redis-server") is not None


@contextlib.contextmanager
def broker(url: str):
    """Point this process's Celery producer at `url` for the test."""
    # Celery prefers the CELERY_BROKER_URL variable (set in CI) to its configuration.
    previous, previous_env = app.conf.broker_url, os.environ.get("CELERY_BROKER_URL")
    os.environ["CELERY_BROKER_URL"] = url
    _reset_connections(url)
    try:
        yield
    finally:
        if previous_env is None:
            os.environ.pop("CELERY_BROKER_URL", None)
        else:
            os.environ["CELERY_BROKER_URL"] = previous_env
        _reset_connections(previous)


def _reset_connections(url: str) -> None:
    app.conf.broker_url = url
    kombu_pools.reset()  # kombu caches producer pools per broker URL, process-wide
    if app._pool is not None:
        app._pool.force_close_all()
        app._pool = None
    app.amqp._producer_pool = None
