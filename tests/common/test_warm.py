"""common.warm: what gunicorn's master loads before it forks (config/gunicorn.py)."""

from pathlib import Path

from django.conf import settings
from django.template import engines

from common.warm import web_warm


def test_it_parses_every_template_of_the_project_and_loads_each_language():
    templates = [p for d in engines["django"].dirs for p in Path(d).rglob("*.html")]

    said = web_warm()

    assert said == (
        f"web warmed: {len(templates)} templates parsed, {len(settings.LANGUAGES)} languages loaded"
    )
    assert len(templates) > 30
