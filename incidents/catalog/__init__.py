"""The starter knowledge base shipped with the product, read from `incidents.toml`.

Plain Python (no Django): the seed command, the tests and the benchmarks all read it here.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from incidents.logmatch import IncidentSpec, SignatureSpec

CATALOG_PATH = Path(__file__).with_name("incidents.toml")
LANGUAGES = ("en", "zh-hans")
STAGES = ("build", "data", "train", "serve")
DISCIPLINES = ("version-lock", "validate-first", "tiny-sample", "reconcile")
SEVERITIES = ("low", "medium", "high", "critical")


@dataclass(frozen=True)
class CatalogText:
    title: str
    symptom: str
    root_cause: str
    remedy: str
    prevention: str
    environment: str = ""


@dataclass(frozen=True)
class CatalogSignature:
    key: str
    pattern: str
    note: str
    examples: tuple[str, ...]


@dataclass(frozen=True)
class CatalogIncident:
    slug: str
    stage: str
    discipline: str
    severity: str
    tags: tuple[str, ...]
    texts: dict[str, CatalogText]
    signatures: tuple[CatalogSignature, ...]

    def text(self, language: str) -> CatalogText:
        return self.texts.get(language) or self.texts["en"]


def load_catalog(path: Path = CATALOG_PATH) -> list[CatalogIncident]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    return [_incident(raw) for raw in data["incident"]]


def engine_specs() -> tuple[list[IncidentSpec], list[SignatureSpec]]:
    """The catalog as the engine sees it after `seed_catalog` in English: the English texts,
    the Chinese ones joining the description (as `incidents.knowledge` builds it from the
    database), every signature; for tests and benchmarks that run without a database."""
    incidents, signatures = [], []
    for entry in load_catalog():
        en, zh = entry.text("en"), entry.text("zh-hans")
        english = (en.root_cause, en.remedy, en.prevention, en.environment, " ".join(entry.tags))
        chinese = (zh.title, zh.symptom, zh.root_cause, zh.remedy, zh.prevention)
        description = "\n".join(part for part in (*english, *chinese) if part)
        incidents.append(IncidentSpec(entry.slug, en.title, entry.stage, en.symptom, description))
        signatures += [SignatureSpec(s.key, entry.slug, s.pattern) for s in entry.signatures]
    return incidents, signatures


def _incident(raw: dict) -> CatalogIncident:
    return CatalogIncident(
        slug=raw["slug"],
        stage=raw["stage"],
        discipline=raw["discipline"],
        severity=raw.get("severity", "medium"),
        tags=tuple(raw.get("tags", ())),
        texts={lang: CatalogText(**raw[lang]) for lang in LANGUAGES if lang in raw},
        signatures=tuple(
            CatalogSignature(
                key=sig["key"],
                pattern=sig["pattern"],
                note=sig.get("note", ""),
                examples=tuple(sig.get("examples", ())),
            )
            for sig in raw.get("signatures", ())
        ),
    )
