"""A report as JSON: the `analyze_log --json` object of DESIGN.md, and, bounded, what the
product stores and shows whatever was pasted."""

from __future__ import annotations

from dataclasses import dataclass

from common.phrases import phrase_dict

from .types import Group, Level, Report

SEVERITY = {Level.ERROR: 2, Level.WARNING: 1, Level.INFO: 0}


@dataclass(frozen=True)
class Bounds:
    """How much of a report is kept: the most severe and most frequent groups, the last
    error lines, and line text clipped (the tail itself keeps every line whole)."""

    groups: int = 100
    errors: int = 100
    chars: int = 500


def report_as_dict(report: Report, bounds: Bounds | None = None) -> dict:
    """The report as JSON, plus the extra keys the pages use (errors, key line and template,
    stage reason, redactions, reading counts, flood flags, and why each suggestion beats the
    next, each sentence also as a phrase for the web to translate). With `bounds`, at most
    that much, whatever the size of the tail: `groups_total` then counts every group, and
    the per-line `line_groups` are left out."""
    clip = _clipper(bounds.chars if bounds else None)
    groups = list(report.groups)
    kept = _kept_groups(groups, bounds.groups) if bounds else groups
    errors = report.errors[-bounds.errors :] if bounds else report.errors
    as_dict = {
        "stage": report.stage,
        "levels": dict(report.levels),
        "groups": [_group_dict(found, clip) for found in kept],
        "groups_total": len(groups),
        "suggestions": [
            {
                "slug": suggestion.slug,
                "title": suggestion.title,
                "score": suggestion.score,
                "confident": suggestion.confident,
                "evidence": [
                    {
                        "line": evidence.line,
                        "text": clip(evidence.text),
                        "signature": evidence.signature,
                        "kind": evidence.kind,
                    }
                    for evidence in suggestion.evidence
                ],
                "why": suggestion.why,
                "why_phrase": phrase_dict(suggestion.why),
            }
            for suggestion in report.suggestions
        ],
        "confident": report.confident,
        "stage_reason": report.stage_reason,
        "stage_phrase": phrase_dict(report.stage_reason),
        "errors": [{"line": line.number, "text": clip(line.text)} for line in errors],
        "key_line": (
            {"line": report.key_line.number, "text": clip(report.key_line.text)}
            if report.key_line
            else None
        ),
        "key_template": report.key_template,
        "line_count": report.line_count,
        "invalid_bytes": report.invalid_bytes,
        "cut_lines": report.cut_lines,
        "redactions": report.redactions,
        **report.extra,
        "floods": [number for number, found in enumerate(kept) if found.flood],
    }
    if bounds is None:
        as_dict["line_groups"] = list(report.line_groups)
    return as_dict


def _kept_groups(groups: list[Group], limit: int) -> list[Group]:
    """The `limit` most severe, then most frequent groups, in the order of the tail."""
    if len(groups) <= limit:
        return groups
    ranked = sorted(groups, key=lambda found: (-SEVERITY[found.level], -found.count))
    return sorted(ranked[:limit], key=lambda found: found.first_line)


def _clipper(chars: int | None):
    def clip(text: str) -> str:
        return text if chars is None or len(text) <= chars else text[: chars - 1] + "…"

    return clip


def _group_dict(found: Group, clip) -> dict:
    return {
        "template": clip(found.template),
        "level": found.level.value,
        "count": found.count,
        "first_line": found.first_line,
        "last_line": found.last_line,
        "example": clip(found.example),
        "flood": found.flood,
    }
