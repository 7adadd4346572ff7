"""Secrets typed into the book, not only pasted as a log, are redacted before they are stored:
an incident's texts (in both languages), a recurrence's note, a signature's examples and note,
a week's review notes, a checklist run's notes, a runbook's text."""

from __future__ import annotations

from datetime import date

import pytest
from django.urls import reverse

from incidents import services
from incidents.models import Incident, Recurrence, Signature
from reports.services import report_week_build, report_week_review
from runbooks.models import ChecklistRun, Runbook
from runbooks.services import checklist_run_start, checklist_run_update, runbook_update

pytestmark = pytest.mark.django_db

TOKEN = "hf_" + "Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Ji0HgFeDc"
PASSWORD = "Tr0ub4dor-and-3"
FILED = {
    "title": "Gated model download refused on the login node",
    "symptom": f"huggingface_hub.errors.GatedRepoError: 401 for token {TOKEN}",
    "root_cause": "The job ran with a token that has no access to the gated repository.",
    "remedy": f"Ask for access, then export HF_TOKEN=<yours>; the old one was {TOKEN}",
    "discipline": "validate-first",
    "prevention": "Check access with huggingface-cli whoami before submitting.",
    "stage": "data",
    "severity": "medium",
    "environment": f"login node, proxy http://svc:{PASSWORD}@proxy.example.com:3128",
    "tags": "hub",
}


def test_an_incident_filed_or_edited_with_a_secret_stores_none(alice_client):
    response = alice_client.post(reverse("incidents:incident-create"), FILED)
    assert response.status_code == 302
    incident = Incident.objects.get()
    stored = " ".join(getattr(incident, name) for name in ("symptom", "remedy", "environment"))
    assert TOKEN not in stored and PASSWORD not in stored
    assert "[REDACTED:huggingface-token]" in incident.symptom
    assert "HF_TOKEN=<yours>" in incident.remedy  # a placeholder is no secret

    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    edit = {**FILED, "symptom": f"401 未授权：令牌：{TOKEN}，下载失败", "occurred_on": "2026-11-30"}
    response = alice_client.post(reverse("incidents:incident-edit", args=[incident.slug]), edit)
    assert response.status_code == 302, response.content.decode()[-600:]
    incident.refresh_from_db()
    assert TOKEN not in incident.symptom
    assert incident.symptom.endswith("，下载失败")
    assert all(TOKEN not in str(record.symptom) for record in incident.history.all())


def test_translations_notes_and_examples_store_no_secret(alice):
    incident = services.incident_create(
        data={**FILED, "symptom": "GatedRepoError: 401"},
        reporter=alice,
        language="en",
        translations={"zh-hans": {"remedy": f"申请权限；旧的令牌是 {TOKEN}"}},
    )
    assert TOKEN not in str(incident.translations)

    services.incident_record_recurrence(
        incident=incident, reported_by=alice, note=f"again, with --token {TOKEN}"
    )
    assert TOKEN not in Recurrence.objects.get().note

    services.signature_create(
        incident=incident,
        pattern=r"GatedRepoError: 401",
        note=f"seen with password={PASSWORD}",
        examples=f"huggingface_hub.errors.GatedRepoError: 401 (token {TOKEN})",
        author=alice,
    )
    signature = Signature.objects.get(incident=incident)
    assert TOKEN not in signature.examples and PASSWORD not in signature.note


def test_review_and_checklist_notes_and_runbook_text_store_no_secret(lena, runbooks):
    report = report_week_build(week_start=date(2026, 11, 23))
    report_week_review(report=report, user=lena, notes=f"rotated the leaked {TOKEN}")
    report.refresh_from_db()
    assert TOKEN not in report.review_notes

    runbook = Runbook.objects.order_by("pk").first()
    run = checklist_run_start(runbook=runbook, user=lena)
    checklist_run_update(
        run=run, ticked=[0], step_notes={0: f"mysql -u root -p{PASSWORD} ok"}, note=f"{TOKEN}"
    )
    run = ChecklistRun.objects.get(pk=run.pk)
    assert PASSWORD not in str(run.step_notes) and TOKEN not in run.note

    text = runbook.text("en")
    runbook_update(
        runbook=runbook,
        data={"summary": f"{text.summary} Log in with {TOKEN}."},
        language="en",
        actor=lena,
    )
    runbook.refresh_from_db()
    assert TOKEN not in runbook.summary
