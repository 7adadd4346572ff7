import os

from celery import Celery, bootsteps, signals
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

# Redis URLs get the transport that drops a malformed message instead of dying on it.
TRANSPORT_ALIASES.update(
    redis="config.broker:Transport",
    rediss="config.broker:Transport",
    sentinel="config.broker:SentinelTransport",
)

app = Celery("incident_kb")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class Heartbeat(bootsteps.StartStopStep):
    """The worker says it is alive, with its queues, every few seconds (read by /healthz)."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **kwargs):
        super().__init__(worker, **kwargs)
        self.timer = None

    def start(self, worker):
        from common.health import HEARTBEAT_SECONDS

        self.beat(worker)
        self.timer = worker.timer.call_repeatedly(HEARTBEAT_SECONDS, self.beat, (worker,))

    def stop(self, worker):
        if self.timer is not None:
            self.timer.cancel()

    def beat(self, worker):
        from common.health import worker_heartbeat

        queues = ",".join(sorted(worker.app.amqp.queues.consume_from or ()))
        worker_heartbeat(hostname=worker.hostname, queues=queues)


app.steps["worker"].add(Heartbeat)


@signals.worker_init.connect
def compile_knowledge_ahead(**kwargs):
    """Before the pool forks its processes: the first analysis waits for no build, and the
    processes share the compiled knowledge (see config/forking.py)."""
    import logging

    from config.forking import prepare_to_fork

    for done in prepare_to_fork(web=False):
        logging.getLogger(__name__).info(done)
