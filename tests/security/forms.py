"""Valid bodies for every form and API write, so a refusal in a test is the gate, not the data."""

from __future__ import annotations

from itertools import count

from runbooks.models import Runbook

_serial = count(1)


def incident_form(incident=None, **changes) -> dict:
    n = next(_serial)
    data = {
        "title": f"Loader stalls on shard {n}",
        "symptom": f"RuntimeError: DataLoader worker (pid {4000 + n}) is killed by signal",
        "root_cause": "The shard list pointed at a deleted bucket.",
        "remedy": "python tools/reconcile.py --shards data/shards.txt",
        "discipline": "reconcile",
        "prevention": "",
        "stage": "data",
        "severity": "medium",
        "environment": "",
        "tags": "loader",
        "occurred_on": "",
        "resolved_on": "",
    }
    if incident is not None:
        data.update(
            {
                name: getattr(incident, name)
                for name in ("title", "symptom", "root_cause", "remedy", "discipline", "stage")
            }
        )
    data.update(changes)
    return data


def incident_api(**changes) -> dict:
    data = incident_form(**changes)
    data["tags"] = [tag for tag in data["tags"].split(",") if tag]
    for name in ("occurred_on", "resolved_on"):
        if not data[name]:
            data.pop(name)
    return data


def signature_form(**changes) -> dict:
    data = {
        "pattern": r"fused_adam kernel lost its (grip|footing)",
        "note": "Seen on rank 3 only.",
        "examples": "RuntimeError: fused_adam kernel lost its footing on rank 3",
        "enabled": "on",
    }
    data.update(changes)
    return data


def runbook_edit_form(runbook: Runbook, language: str = "en", **changes) -> dict:
    """What the edit form posts back untouched, with `changes` applied on top."""
    text = runbook.text(language)
    data = {
        "title": text.title,
        "summary": text.summary,
        "kind": runbook.kind,
        "stage": runbook.stage,
        "discipline": runbook.discipline,
        "calculator": runbook.calculator,
        "text_language": text.language,
        "revision": runbook.updated_at.isoformat(),
        "steps-TOTAL_FORMS": str(len(text.steps)),
        "steps-INITIAL_FORMS": str(len(text.steps)),
        "steps-MIN_NUM_FORMS": "0",
        "steps-MAX_NUM_FORMS": "60",
    }
    for i, step in enumerate(text.steps):
        data.update(
            {
                f"steps-{i}-text": step.text,
                f"steps-{i}-command": step.command,
                f"steps-{i}-expected": step.expected,
                f"steps-{i}-ORDER": str(i + 1),
            }
        )
    data.update(changes)
    return data


MEMORY_HEADROOM = {
    "batch_a": "4",
    "memory_a": "21000",
    "batch_b": "8",
    "memory_b": "33000",
    "memory_unit": "MiB",
    "card_memory": "64",
    "card_unit": "GiB",
    "margin_percent": "10",
}
SCALING_EFFICIENCY = {
    "compute_time": "420",
    "compute_unit": "ms",
    "communication_time": "60",
    "communication_unit": "ms",
    "cards": "16",
}
