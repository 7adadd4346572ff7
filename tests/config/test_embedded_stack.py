"""The embedded default: supervisord runs every process and Redis is the broker; beat and the
workers survive what used to take them down."""

import shelve

import pytest
import redis as redis_client

from config import supervise
from config.beat import Scheduler
from config.celery import app
from incidents.models import Analysis
from incidents.services import analysis_request
from tests.services import wait_until

OOM = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"


def test_the_supervisor_runs_web_workers_beat_and_a_private_redis(tmp_path):
    conf = supervise.write(tmp_path, {"WEB_PORT": "8123", "WEB_WORKERS": "3"}).read_text()
    for program in ("web", "worker", "rescorer", "beat", "redis"):
        assert f"[program:{program}]" in conf
    assert conf.count("autorestart=true") == 5
    assert "--queues analyses " in conf and "--queues rescore " in conf
    assert "--bind 127.0.0.1:8123 --workers 3" in conf
    redis_conf = (tmp_path / "redis" / "redis.conf").read_text()
    assert f"unixsocket {tmp_path}/redis/redis.sock" in redis_conf
    assert "appendonly yes" in redis_conf and "port 0" in redis_conf


def test_with_a_broker_of_its_own_no_private_redis_is_started(tmp_path):
    conf = supervise.write(tmp_path, {"CELERY_BROKER_URL": "redis://redis:6379/0"}).read_text()
    assert "[program:redis]" not in conf


def test_beat_starts_over_when_its_schedule_file_was_cut_short(tmp_path):
    path = tmp_path / "celerybeat-schedule"
    Scheduler(app=app, schedule_filename=str(path), lazy=True).setup_schedule()
    with shelve.open(str(path)) as store:
        store["entries"] = {"padding": "x" * 4000}
    data = path.with_suffix(".dat")
    data.write_bytes(data.read_bytes()[:100])  # killed in the middle of a write

    with shelve.open(str(path)) as store, pytest.raises(EOFError):
        store["entries"]  # what made beat die at every start
    scheduler = Scheduler(app=app, schedule_filename=str(path), lazy=True)
    scheduler.setup_schedule()
    assert "analysis-sweep" in scheduler.schedule


@pytest.mark.django_db(transaction=True)
def test_a_malformed_message_is_dropped_and_the_worker_reads_on(redis, workers, alice):
    worker = workers("sturdy")
    raw = redis_client.Redis.from_url(redis.url)
    raw.lpush("analyses", b"not json at all {", b"")

    analysis = analysis_request(data=OOM, user=alice)
    assert wait_until(
        lambda: Analysis.objects.filter(pk=analysis.pk, status="done").exists(), 30
    ), worker.log.read_text()[-3000:]
    assert worker.process.poll() is None
    assert "dropped a malformed message" in worker.log.read_text()
    assert raw.llen("analyses") == 0


def test_a_broker_lost_with_messages_unacknowledged_does_not_end_the_worker(redis):
    """kombu closes the connection, then the channel, which puts the unacknowledged messages
    back over a client of the closed connection: the worker died of an AttributeError."""
    from kombu import Connection
    from kombu.common import ignore_errors

    from config.broker import Transport

    connection = Connection(redis.url, transport=Transport)
    try:
        channel = connection.default_channel
        channel.qos._delivered["in-flight"] = None  # a task taken and not yet acknowledged
        channel._disconnect_pools()
        channel.connection.client = None  # what closing the lost connection leaves behind

        ignore_errors(connection, channel.close)  # what the worker's consumer calls

        assert channel.closed
    finally:
        ignore_errors(connection, connection.release)
