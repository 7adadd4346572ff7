"""The security tests' world: one real object behind every kind of URL argument.

alice (engineer) reported an incident and started a checklist run; bob is another engineer;
lena is a lead. Nothing here goes through a broker: analyses run in-process.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import override_settings
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.roles import ENGINEER, LEAD, user_set_role
from common.weeks import week_last_completed
from incidents import services
from incidents.models import Analysis, Incident, KnowledgeGap, Recurrence, Signature
from reports.models import WeeklyReport
from reports.services import report_week_build
from runbooks.models import ChecklistRun, Runbook
from runbooks.seeding import runbook_catalog_seed
from runbooks.services import checklist_run_start
from tests.factories import IncidentFactory, user_with_role
from tests.snapshots import RowSnapshot

ALICE_SYMPTOM = "RuntimeError: fused_adam kernel lost its grip on rank 3"
EXPLAINED_TAIL = f"step 118 loss 2.31\n{ALICE_SYMPTOM}\nTraceback (most recent call last):\n"
UNEXPLAINED_TAIL = "step 7 loss 9.9\nValueError: the flux capacitor reports 0 gigawatts\n"
MD5 = "django.contrib.auth.hashers.MD5PasswordHasher"


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
    users: dict[str, User]  # alice, bob and lena
    runbooks: Any  # what seeding the runbooks answered


def analysis_done(tail: str, user) -> Analysis:
    analysis = services.analysis_request(data=tail, user=user)
    services.analysis_run(analysis_id=analysis.pk)
    return Analysis.objects.get(pk=analysis.pk)


WORLD_APPS = ("auth", "incidents", "runbooks", "reports")
# Role groups are rows a migration wrote; a transactional test's flush writes them again under
# new ids, so each restore gives the cast its roles anew instead of replaying memberships.
ROLES = {"alice": ENGINEER, "bob": ENGINEER, "lena": LEAD}


def _world_seed() -> World:
    with override_settings(PASSWORD_HASHERS=[MD5], LANGUAGE_CODE="en"):
        alice, bob, lena = (user_with_role(name, role) for name, role in ROLES.items())
        runbooks = runbook_catalog_seed(language="en")
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
        users={"alice": alice, "bob": bob, "lena": lena},
        runbooks=runbooks,
    )


@pytest.fixture(scope="session")
def _world_snapshot(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock():
        return RowSnapshot.take(_world_seed, WORLD_APPS, leave_out=[User.groups.through])


@pytest.fixture
def world(db, _world_snapshot) -> World:
    """The world, built once per session and written again before each test (a few bulk
    inserts). Here the cast and the runbooks come with it."""
    built, snapshot = _world_snapshot
    moved = {model: offset for model, offset in snapshot.restore().items() if offset}
    assert not moved, f"the world must be the first rows of its tables: {moved}"
    world = copy.deepcopy(built)
    for name, role in ROLES.items():
        user_set_role(user=world.users[name], role=role)
    return world


def _cast(request, username: str, role: str):
    """The world's user when the test has the world (it brings its own cast), else a new one."""
    if "world" in request.fixturenames:
        return request.getfixturevalue("world").users[username]
    return user_with_role(username, role)


@pytest.fixture
def alice(request, db):
    return _cast(request, "alice", ENGINEER)


@pytest.fixture
def bob(request, db):
    return _cast(request, "bob", ENGINEER)


@pytest.fixture
def lena(request, db):
    return _cast(request, "lena", LEAD)


@pytest.fixture
def runbooks(request, db, _runbooks_snapshot):
    """The shipped runbooks: the world's when the test has the world (it seeds them too)."""
    if "world" in request.fixturenames:
        return request.getfixturevalue("world").runbooks
    result, snapshot = _runbooks_snapshot
    snapshot.restore()
    return copy.deepcopy(result)


def api_client_for(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=user).key)
    return client
