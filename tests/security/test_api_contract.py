"""The API keeps its published contract under generated input (schemathesis over HTTP against
the live test server, with the schema that server publishes).

Every operation of the OpenAPI schema gets a bounded, deterministic set of valid and invalid
requests as a lead with a token: no answer may be a server error, and every documented answer
must match the schema. The world's objects have lost their people (a reporter who left is
`null`, which the schema marks required). `spectacular --validate --fail-on-warn` keeps the
schema itself valid.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
import schemathesis
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from rest_framework.authtoken.models import Token
from rest_framework.throttling import SimpleRateThrottle
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from incidents.models import Incident, Recurrence, Signature

ROOT = Path(__file__).resolve().parents[2]
MAX_EXAMPLES = 15
# Reads that refuse whatever their schema forbids. The lists' filters follow django-filter's
# convention instead: an empty or unknown value (`enabled=null`) filters nothing.
STRICT_READS = {"/api/v1/matrix/"}

# Path parameters whose explicit example stands for a real object of the test's world, so
# that the detail operations are also exercised on objects that exist.
REAL = {
    "/api/v1/analyses/{id}/": ("id", 910001, lambda w: w.analysis.pk),
    "/api/v1/analyses/{id}/feedback/": ("id", 910001, lambda w: w.analysis.pk),
    "/api/v1/checklist-runs/{id}/": ("id", 910002, lambda w: w.run.pk),
    "/api/v1/gaps/{id}/": ("id", 910003, lambda w: w.gap.pk),
    "/api/v1/recurrences/{id}/": ("id", 910004, lambda w: w.recurrence.pk),
    "/api/v1/signatures/{id}/": ("id", 910005, lambda w: w.signature.pk),
    "/api/v1/incidents/{slug}/": ("slug", "alice-incident", lambda w: w.incident.slug),
    "/api/v1/runbooks/{slug}/": ("slug", "the-runbook", lambda w: w.runbook.slug),
    "/api/v1/reports/weekly/{week}/": ("week", "2026-W01", lambda w: w.report.week),
    "/api/v1/reports/weekly/{week}/build/": ("week", "2026-W01", lambda w: w.report.week),
    "/api/v1/reports/weekly/{week}/review/": ("week", "2026-W01", lambda w: w.report.week),
}


def _raw_schema() -> dict:
    raw = SchemaGenerator().get_schema(request=None, public=True)
    for path, (name, example, _) in REAL.items():
        for operation in raw["paths"][path].values():
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "path" and parameter["name"] == name:
                    parameter["example"] = example
    return raw


schema = schemathesis.openapi.from_dict(_raw_schema())
schema.config.generation.update(max_examples=MAX_EXAMPLES, deterministic=True)


@pytest.fixture
def lead_token(transactional_db, world, lena, monkeypatch):
    """A lead's token. Real commits: the live server's thread has its own connection."""
    # Hundreds of calls in a few seconds: the rate limits are tested elsewhere.
    monkeypatch.setattr(SimpleRateThrottle, "allow_request", lambda self, request, view: True)
    Incident.objects.filter(pk=world.incident.pk).update(reporter=None)
    Signature.objects.filter(pk=world.signature.pk).update(author=None)
    Recurrence.objects.filter(pk=world.recurrence.pk).update(reported_by=None)
    return Token.objects.create(user=lena).key


def test_the_fuzzed_schema_is_the_one_the_server_publishes(live_server, lead_token):
    served = requests.get(
        live_server.url + reverse("api-schema"),
        headers={"Authorization": f"Token {lead_token}", "Accept": "application/json"},
        timeout=60,
    )
    assert served.status_code == 200
    assert served.json() == SchemaGenerator().get_schema(request=None, public=True)


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_the_api_keeps_its_contract(case, lead_token, world, live_server):
    name, example, real = REAL.get(case.path, (None, None, None))
    if name and case.path_parameters.get(name) == example:
        case.path_parameters[name] = real(world)
    checks = [
        not_a_server_error,
        status_code_conformance,
        response_schema_conformance,
        content_type_conformance,
        response_headers_conformance,
    ]
    if case.method == "GET":
        # A read has no rule beyond its schema: whatever the schema allows is answered.
        checks.append(positive_data_acceptance)
    if case.path in STRICT_READS:
        checks.append(negative_data_rejection)
    case.call_and_validate(
        base_url=live_server.url, headers={"Authorization": f"Token {lead_token}"}, checks=checks
    )


@pytest.mark.processes
def test_the_schema_is_valid_without_warnings(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "spectacular",
            "--validate",
            "--fail-on-warn",
            "--file",
            str(tmp_path / "schema.yaml"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "VAR_DIR": str(tmp_path)},
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Warning" not in result.stderr and "Error" not in result.stderr
