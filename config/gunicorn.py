"""gunicorn's settings wherever the web is started (Procfile, bin/start, the load bench, the
fault tests): `gunicorn -c python:config.gunicorn config.wsgi …`.

The master loads the app and compiles the knowledge once, before it forks the workers: no
worker's first request waits for the build (10 s at 50,000 signatures on 2 cores), and the
workers share the index's memory until they change it. It also parses the templates and loads
the URLs and translations (common/warm.py), which a worker's first pages would otherwise pay.
The master's database connections are closed before the fork: each worker opens its own.
"""

preload_app = True


def when_ready(server) -> None:
    from config.forking import prepare_to_fork

    for done in prepare_to_fork(web=True):
        server.log.info(done)
