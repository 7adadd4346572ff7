"""The starter knowledge base shipped with the product, read from the TOML files here
(`incidents.toml` first, then the others by name; each holds `[[incident]]` tables).

Plain Python (no Django): the seed command, the tests and the benchmarks all read it here.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from common.vocabulary import LANGUAGES
from incidents.logmatch import IncidentSpec, SignatureSpec, telling_examples

CATALOG_DIR = Path(__file__).parent
# What the engine's text similarity reads besides an incident's title and symptom: these
# columns in the incident's own language, and these of each translation.
DESCRIBED = ("root_cause", "remedy", "prevention", "environment")
DESCRIBED_TRANSLATED = ("title", "symptom", "root_cause", "remedy", "prevention")


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
    unless: str = ""  # RE2: what rules the signature out (see SignatureSpec.unless)
    lead_only: bool = False  # the line has several usual causes (see SignatureSpec.lead_only)


@dataclass(frozen=True)
class CatalogIncident:
    slug: str
    stage: str
    discipline: str
    severity: str
    tags: tuple[str, ...]
    texts: dict[str, CatalogText]
    signatures: tuple[CatalogSignature, ...]
    stage_lead: bool = False  # the stage's usual failure, offered when nothing else matches
    kill_lead: bool = False  # the usual cause of a process killed without a word
    drift_lead: bool = False  # the usual cause of an API error raised inside library code
    config_lead: bool = False  # the usual cause of a key missing from a configuration
    mismatch_lead: bool = False  # what ranks waiting in different collectives at one step prove
    record_lead: bool = False  # the usual cause of a field missing from one record of the data
    pin_lead: bool = False  # what pip offering only releases newer than a pinned one proves

    def text(self, language: str) -> CatalogText:
        return self.texts.get(language) or self.texts["en"]


def signature_note_in(note: str, language: str) -> str:
    """A shipped signature's note in `language` (signature_notes.<language>.json holds them,
    keyed by the English note); a note someone wrote or edited stays as written."""
    return _signature_notes(language).get(note, note)


@cache
def _signature_notes(language: str) -> dict[str, str]:
    path = CATALOG_DIR / f"signature_notes.{language}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def catalog_files(directory: Path = CATALOG_DIR) -> list[Path]:
    return sorted(
        directory.glob("*.toml"), key=lambda path: (path.name != "incidents.toml", path.name)
    )


def load_catalog(directory: Path = CATALOG_DIR) -> list[CatalogIncident]:
    """Every shipped incident; a slug, or a signature key within an incident, given twice is
    refused (the seed keys what it wrote by them)."""
    entries = []
    for path in catalog_files(directory):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        entries.extend(_incident(raw) for raw in data.get("incident", []))
    keys = [entry.slug for entry in entries] + [
        f"{entry.slug}:{signature.key}" for entry in entries for signature in entry.signatures
    ]
    repeated = sorted(key for key, n in Counter(keys).items() if n > 1)
    if repeated:
        raise ValueError(f"The catalog gives these slugs or signature keys twice: {repeated}")
    return entries


LEAD_KINDS = ("stage", "kill", "drift", "config", "mismatch", "record", "pin")


@cache
def lead_slugs(kind: str) -> frozenset[str]:
    """The shipped incidents offered as leads of `kind` (`stage_lead`, `kill_lead`,
    `drift_lead`, `config_lead`, `mismatch_lead`, `record_lead`, `pin_lead` = true in the
    catalog), read
    from the catalog files once per process: a process that follows a change to the book asks
    again each time."""
    return frozenset(entry.slug for entry in load_catalog() if getattr(entry, f"{kind}_lead"))


def tag_name_normalized(name: str) -> str:
    """A tag name as tags are kept: trimmed, in lower case."""
    return name.strip().lower()


def tag_names_normalized(names: Iterable[str]) -> list[str]:
    """Tag names trimmed, in lower case, sorted, each once."""
    return sorted({normal for normal in map(tag_name_normalized, names) if normal})


def tag_list_text(names: Iterable[str]) -> str:
    """Tags as an incident stores them for its history and the engine: "a, b, c"."""
    return ", ".join(tag_names_normalized(names))


def incident_description(
    text: Mapping[str, str], tags: str, translations: Iterable[Mapping[str, str]]
) -> str:
    """The description the engine compares tails with, the same for a stored incident and a
    catalog entry."""
    parts = [*(text.get(name, "") for name in DESCRIBED), tags]
    for other in translations:
        parts.extend(other.get(name, "") for name in DESCRIBED_TRANSLATED)
    return "\n".join(part for part in parts if part)


def engine_specs() -> tuple[list[IncidentSpec], list[SignatureSpec]]:
    """The catalog as the engine sees it after `seed_catalog` in English, for tests and
    benchmarks that run without a database."""
    incidents, signatures = [], []
    for entry in load_catalog():
        en = entry.text("en")
        others = [asdict(text) for language, text in entry.texts.items() if language != "en"]
        description = incident_description(asdict(en), tag_list_text(entry.tags), others)
        incidents.append(
            IncidentSpec(
                entry.slug,
                en.title,
                entry.stage,
                en.symptom,
                description,
                entry.stage_lead,
                entry.kill_lead,
                entry.drift_lead,
                entry.config_lead,
                entry.mismatch_lead,
                entry.record_lead,
                entry.pin_lead,
                telling_examples(
                    (s.pattern, s.examples) for s in entry.signatures if not s.lead_only
                ),
            )
        )
        signatures += [
            SignatureSpec(s.key, entry.slug, s.pattern, s.unless, s.lead_only)
            for s in entry.signatures
        ]
    return incidents, signatures


def _incident(raw: dict) -> CatalogIncident:
    return CatalogIncident(
        slug=raw["slug"],
        stage=raw["stage"],
        discipline=raw["discipline"],
        severity=raw.get("severity", "medium"),
        tags=tuple(raw.get("tags", ())),
        stage_lead=bool(raw.get("stage_lead", False)),
        kill_lead=bool(raw.get("kill_lead", False)),
        drift_lead=bool(raw.get("drift_lead", False)),
        config_lead=bool(raw.get("config_lead", False)),
        mismatch_lead=bool(raw.get("mismatch_lead", False)),
        record_lead=bool(raw.get("record_lead", False)),
        pin_lead=bool(raw.get("pin_lead", False)),
        texts={lang: _text(raw[lang]) for lang in LANGUAGES if lang in raw},
        signatures=tuple(
            CatalogSignature(
                key=sig["key"],
                pattern=sig["pattern"],
                note=sig.get("note", ""),
                examples=tuple(sig.get("examples", ())),
                unless=sig.get("unless", ""),
                lead_only=bool(sig.get("lead_only", False)),
            )
            for sig in raw.get("signatures", ())
        ),
    )


def _text(raw: dict) -> CatalogText:
    # Trailing newlines are an artefact of TOML's multi-line strings, and a form would strip
    # them: kept, they would make an unchanged form look like an edit.
    return CatalogText(**{name: value.strip() for name, value in raw.items()})
