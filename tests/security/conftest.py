"""The security tests' world: one real object behind every kind of URL argument.

alice (engineer) reported an incident and started a checklist run; bob is another engineer;
lena is a lead. Nothing here goes through a broker: analyses run in-process.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.core.cache import cache
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from common.weeks import week_last_completed
from incidents import services
from incidents.models import Analysis, Incident, KnowledgeGap, Recurrence, Signature
from reports.models import WeeklyReport
from reports.services import report_week_build
from runbooks.models import ChecklistRun, Runbook
from runbooks.services import checklist_run_start
from tests.factories import IncidentFactory

ALICE_SYMPTOM = "RuntimeError: fused_adam kernel lost its grip on rank 3"
EXPLAINED_TAIL = f"step 118 loss 2.31\n{ALICE_SYMPTOM}\nTraceback (most recent call last):\n"
UNEXPLAINED_TAIL = "step 7 loss 9.9\nValueError: the flux capacitor reports 0 gigawatts\n"


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Throttle counters live in the (LocMem) cache: no test inherits another's."""
    cache.clear()
    yield
    cache.clear()


@dataclass
class World:
    incident: Incident  # alice's
    signature: Signature
    recurrence: Recurrence
    analysis: Analysis  # alice's, done, suggests alice's incident
    gap: KnowledgeGap
    runbook: Runbook  # one with a calculator
    run: ChecklistRun  # started by alice
    report: WeeklyReport


def analysis_done(tail: str, user) -> Analysis:
    analysis = services.analysis_request(data=tail, user=user)
    services.analysis_run(analysis_id=analysis.pk)
    return Analysis.objects.get(pk=analysis.pk)


@pytest.fixture
def world(alice, bob, lena, runbooks) -> World:
    incident = IncidentFactory(
        slug="alice-incident",
        title="Fused Adam lost its grip",
        symptom=ALICE_SYMPTOM,
        reporter=alice,
    )
    signature = services.signature_create(
        incident=incident,
        pattern=r"fused_adam kernel lost its grip",
        examples=ALICE_SYMPTOM,
        author=lena,
    )
    recurrence = services.incident_record_recurrence(incident=incident, reported_by=alice)
    analysis = analysis_done(EXPLAINED_TAIL, alice)
    assert analysis.suggestions.filter(incident=incident).exists(), analysis.report
    unexplained = analysis_done(UNEXPLAINED_TAIL, bob)
    assert unexplained.gap_id is not None, unexplained.report
    runbook = Runbook.objects.exclude(calculator="").order_by("position").first()
    run = checklist_run_start(runbook=runbook, user=alice)
    report = report_week_build(week_start=week_last_completed())
    return World(
        incident=incident,
        signature=signature,
        recurrence=recurrence,
        analysis=analysis,
        gap=unexplained.gap,
        runbook=runbook,
        run=run,
        report=report,
    )


def api_client_for(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    return client
