"""Production settings pass `check --deploy`; every page carries a CSP with no inline scripts
or styles, and the templates give the browser nothing inline to run."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DJANGO_DEBUG": "0",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "ALLOWED_HOSTS": "kb.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://kb.example.com",
    "SECURE_COOKIES": "1",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_SSL_REDIRECT": "1",
    "DATABASE_URL": "postgres://kb:secret@db.invalid:5432/incident_kb",
    "CELERY_BROKER_URL": "redis://redis.invalid:6379/0",
}
STRICT = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "frame-ancestors": ["'none'"],
    "form-action": ["'self'"],
    "base-uri": ["'self'"],
}


def _check_deploy(tmp_path, extra: dict[str, str]) -> subprocess.CompletedProcess:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SECURE_", "DJANGO_", "SECRET_KEY", "ALLOWED_HOSTS"))
    }
    env.update(extra, VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings")
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.processes
def test_check_deploy_is_clean_with_the_production_variables(tmp_path):
    result = _check_deploy(tmp_path, PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert "WARNINGS" not in result.stderr


@pytest.mark.processes
def test_check_deploy_complains_without_them(tmp_path):
    """The check is not vacuous: the development defaults fail it."""
    result = _check_deploy(tmp_path, {"DJANGO_DEBUG": "1"})
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W018"):
        assert warning in result.stderr


def _policy(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    policy = {}
    for directive in filter(None, (part.strip() for part in header.split(";"))):
        name, *values = directive.split()
        policy[name] = values
    return policy


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    ["/incidents/", "/analyses/new/", "/matrix/", "/runbooks/", "/api/v1/incidents/"],
)
def test_every_page_carries_the_strict_policy(alice_client, path):
    response = alice_client.get(path)
    assert response.status_code == 200
    assert _policy(response) == STRICT
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"


@pytest.mark.django_db
def test_the_sign_in_page_has_the_policy_for_anonymous_visitors(client):
    assert _policy(client.get(reverse("login"))) == STRICT


@pytest.mark.django_db
def test_cookies_are_http_only_and_secure_in_production(client, alice, settings):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    page = client.get(reverse("login"))
    csrf = page.cookies[settings.CSRF_COOKIE_NAME]
    assert csrf["httponly"] and csrf["secure"] and csrf["samesite"] == "Lax"
    client.post(reverse("login"), {"username": "alice", "password": "pw-alice"})
    session = client.cookies[settings.SESSION_COOKIE_NAME]
    assert session["httponly"] and session["secure"]


@pytest.mark.django_db
def test_https_redirect_and_hsts_in_production(settings):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 31536000
    settings.SECURE_HSTS_INCLUDE_SUBDOMAINS = settings.SECURE_HSTS_PRELOAD = True
    client = Client()  # the security middleware reads its settings when the client loads it
    plain = client.get(reverse("login"))
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    secure = client.get(reverse("login"), secure=True)
    assert secure["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains; preload"
    # Behind the proxy, X-Forwarded-Proto says the request came in over HTTPS.
    proxied = client.get(reverse("login"), HTTP_X_FORWARDED_PROTO="https")
    assert proxied.status_code == 200


# --- the API docs: working, offline, and without inline scripts -----------------------------

_INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
_HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
_STYLE = re.compile(r"<style\b|\sstyle\s*=", re.I)
_EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I)


@pytest.mark.django_db
def test_swagger_ui_works_without_inline_script_or_style(lena_client):
    page = lena_client.get(reverse("api-docs"))
    assert page.status_code == 200
    html = page.text
    assert 'id="swagger-ui"' in html
    assert not _INLINE_SCRIPT.search(html)
    assert not _STYLE.search(html)
    assert not _EXTERNAL.search(html)
    assert "fonts.googleapis.com" not in html
    assert _policy(page) == STRICT
    script = lena_client.get(reverse("api-docs") + "?script=")
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle(" in script.text
    assert reverse("api-schema") in script.text
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert lena_client.get(asset).status_code == 200, asset


@pytest.mark.django_db
def test_redoc_works_offline_with_inline_styles_only(lena_client):
    page = lena_client.get(reverse("api-redoc"))
    assert page.status_code == 200
    html = page.text
    assert f'<redoc spec-url="{reverse("api-schema")}"' in html
    assert "googleapis" not in html and "gstatic" not in html
    assert not _EXTERNAL.search(html)
    assert not _INLINE_SCRIPT.search(html)
    policy = _policy(page)
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'", "'unsafe-inline'"]
    for asset in re.findall(r'(?:src|href)="(/static/[^"]+)"', html):
        assert lena_client.get(asset).status_code == 200, asset


@pytest.mark.django_db
def test_the_schema_itself_is_served(lena_client):
    response = lena_client.get(reverse("api-schema"), HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    assert response.json()["info"]["title"] == "Incident KB API"


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["api-docs", "api-redoc"])
def test_the_docs_send_anonymous_visitors_to_sign_in(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


@pytest.mark.django_db
def test_the_trend_chart_keeps_its_own_stricter_policy(lena_client, lena):
    from common.weeks import week_last_completed
    from reports.services import report_week_build

    report = report_week_build(week_start=week_last_completed())
    chart = lena_client.get(reverse("reports:weekly-chart", args=[report.week_start]))
    assert chart.status_code == 200
    assert chart["Content-Security-Policy"] == "default-src 'none'; style-src 'unsafe-inline'"
    assert b"<script" not in chart.content


# --- the templates ---------------------------------------------------------------------------

# Mail is read in mail clients, not under the site's CSP: inline styles are how mail is styled.
PAGE_TEMPLATES = [
    path
    for path in sorted((ROOT / "templates").rglob("*.html"))
    if "email" not in path.relative_to(ROOT / "templates").parts
]


@pytest.mark.parametrize(
    "template", PAGE_TEMPLATES, ids=lambda p: str(p.relative_to(ROOT / "templates"))
)
def test_no_template_has_inline_script_handler_or_style(template):
    text = template.read_text()
    assert not _INLINE_SCRIPT.search(text), "inline <script>: move it to static/js"
    assert not _HANDLER.search(text), "on*= handler: listen from static/js instead"
    assert not _STYLE.search(text), "inline style: use a class in static/css"
    assert "javascript:" not in text.lower()
    assert "|safe" not in text and "{% autoescape off" not in text


def test_the_templates_were_found():
    assert len(PAGE_TEMPLATES) > 20
    assert settings.TEMPLATES[0]["DIRS"] == [ROOT / "templates"]
