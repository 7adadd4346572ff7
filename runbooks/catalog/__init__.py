"""The runbooks shipped with the product, read from `runbooks.toml`.

Plain Python (no Django): the seed command, the runbook pages and the tests all read it here.
Stages and disciplines are the product's one vocabulary (`common.vocabulary`), so a runbook and
an incident that name the same stage or discipline always agree.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from common.vocabulary import DISCIPLINES, LANGUAGES, STAGES

RUNBOOKS_PATH = Path(__file__).with_name("runbooks.toml")
KINDS = ("diagnose", "checklist", "trial", "rhythm", "guide")
CALCULATORS = ("memory-headroom", "scaling-efficiency")

__all__ = [
    "CALCULATORS",
    "DISCIPLINES",
    "KINDS",
    "LANGUAGES",
    "RUNBOOKS_PATH",
    "STAGES",
    "CatalogRunbook",
    "RunbookStep",
    "RunbookText",
    "load_runbooks",
]


@dataclass(frozen=True)
class RunbookStep:
    text: str
    command: str = ""  # verbatim shell, identical in every language
    expected: str = ""


@dataclass(frozen=True)
class RunbookText:
    title: str
    summary: str
    steps: tuple[RunbookStep, ...]


@dataclass(frozen=True)
class CatalogRunbook:
    slug: str
    kind: str
    stage: str  # "" when the runbook spans every stage
    discipline: str  # "" when it is not one discipline's checklist
    calculator: str  # "" when the page shows no calculator
    texts: dict[str, RunbookText]

    def text(self, language: str) -> RunbookText:
        return self.texts.get(language) or self.texts["en"]


def load_runbooks(path: Path = RUNBOOKS_PATH) -> list[CatalogRunbook]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [_runbook(raw) for raw in data["runbook"]]


def _runbook(raw: dict) -> CatalogRunbook:
    return CatalogRunbook(
        slug=raw["slug"],
        kind=raw["kind"],
        stage=raw.get("stage", ""),
        discipline=raw.get("discipline", ""),
        calculator=raw.get("calculator", ""),
        texts={lang: _text(raw[lang]) for lang in LANGUAGES if lang in raw},
    )


def _text(raw: dict) -> RunbookText:
    return RunbookText(
        title=raw["title"],
        summary=raw["summary"],
        steps=tuple(
            RunbookStep(
                text=step["text"],
                # A trailing newline is an artefact of TOML's ''' strings, not part of the command.
                command=step.get("command", "").strip("\n"),
                expected=step.get("expected", ""),
            )
            for step in raw.get("steps", ())
        ),
    )
