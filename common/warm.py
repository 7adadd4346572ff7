"""What a web process would otherwise load on its first requests, loaded ahead by gunicorn's
master before it forks the workers (config/gunicorn.py): the URLs and the views they import,
the translation catalogs, and the project's templates, parsed."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.template import engines
from django.urls import get_resolver
from django.utils import translation


def web_warm() -> str:
    get_resolver().url_patterns  # noqa: B018 — importing every view is the point
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            translation.gettext("Incident KB")
    engine = engines["django"]
    parsed = 0
    for folder in (Path(d) for d in engine.dirs):
        for path in sorted(folder.rglob("*.html")):
            engine.get_template(str(path.relative_to(folder)))
            parsed += 1
    return f"web warmed: {parsed} templates parsed, {len(settings.LANGUAGES)} languages loaded"
