"""Webhooks: the team's chat hears of each failure kb caught, and a broken one harms nothing."""

import json
import queue
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from config.celery import app
from incidents.models import Analysis, Webhook
from incidents.services import JobOrigin, analysis_request, analysis_run
from tests.incidents.test_analysis_lifecycle import OOM_TAIL
from tests.services import free_port

pytestmark = pytest.mark.django_db

ORIGIN = JobOrigin(command="python train.py --lr 3e-4", exit_status=3, host="gpu-07", job_id="4242")


@pytest.fixture
def receiver():
    """A chat server on localhost: every JSON body posted to it lands in `received`."""
    received: queue.Queue = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            received.put((self.path, json.loads(body)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"code": 0}')

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    server.received = received
    server.url = f"http://127.0.0.1:{server.server_port}"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def eager():
    """Tasks run in this process as they are queued (the broker is not what is tested)."""
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = False


def _finish(user, source, django_capture_on_commit_callbacks) -> Analysis:
    with django_capture_on_commit_callbacks(execute=False):  # its own queueing: not here
        analysis = analysis_request(data=OOM_TAIL, user=user, source=source, origin=ORIGIN)
    with django_capture_on_commit_callbacks(execute=True):
        analysis_run(analysis_id=analysis.pk)
    analysis.refresh_from_db()
    return analysis


def test_slack_and_feishu_hear_of_a_caught_failure_and_not_of_a_paste(
    catalog, alice, receiver, eager, django_capture_on_commit_callbacks
):
    Webhook.objects.create(name="ops", url=f"{receiver.url}/slack", format="slack")
    Webhook.objects.create(
        name="飞书", url=f"{receiver.url}/feishu", format="feishu", secret="s3", language="zh-hans"
    )
    caught = _finish(alice, Analysis.Source.KB_RUN, django_capture_on_commit_callbacks)
    assert caught.status == "done" and caught.top_incident.slug == "gpu-oom"
    payloads = dict(receiver.received.get(timeout=10) for _ in range(2))

    slack = payloads["/slack"]["text"]
    assert "python train.py --lr 3e-4" in slack and "gpu-07" in slack and "4242" in slack
    assert "[gpu-oom]" in slack and f"/analyses/{caught.pk}/" in slack
    feishu = payloads["/feishu"]
    assert feishu["msg_type"] == "post" and feishu["sign"] and feishu["timestamp"]
    post = feishu["content"]["post"]["zh_cn"]
    assert "python train.py" in post["title"]
    assert any("[gpu-oom]" in part["text"] for line in post["content"] for part in line)
    assert post["content"][-1][0]["href"].endswith(f"/analyses/{caught.pk}/")
    assert Webhook.objects.filter(last_sent_at__isnull=False, last_error="").count() == 2

    _finish(alice, Analysis.Source.WEB, django_capture_on_commit_callbacks)
    assert receiver.received.empty()  # eager: anything sent would be there already


def test_an_unexplained_failure_is_announced_as_a_new_gap(
    catalog, alice, receiver, eager, django_capture_on_commit_callbacks
):
    Webhook.objects.create(name="钉钉", url=f"{receiver.url}/ding", format="dingtalk", secret="s")
    with django_capture_on_commit_callbacks(execute=False):
        analysis = analysis_request(
            data="frobnicator exploded at step 7\n", user=alice, source="kb-watch", origin=ORIGIN
        )
    with django_capture_on_commit_callbacks(execute=True):
        analysis_run(analysis_id=analysis.pk)
    path, body = receiver.received.get(timeout=10)
    assert path.startswith("/ding?timestamp=") and "&sign=" in path
    assert body["msgtype"] == "markdown"
    assert "unexplained — a new knowledge gap" in body["markdown"]["text"]


def test_a_failing_webhook_never_affects_the_analysis(
    catalog, alice, eager, django_capture_on_commit_callbacks
):
    Webhook.objects.create(name="gone", url=f"http://127.0.0.1:{free_port()}/", format="slack")
    analysis = _finish(alice, Analysis.Source.KB_RUN, django_capture_on_commit_callbacks)
    assert analysis.status == "done" and analysis.top_incident.slug == "gpu-oom"
    assert "Gave up after retries" in Webhook.objects.get().last_error
