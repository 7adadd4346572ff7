"""A stored weekly snapshot as a page or an e-mail shows it: in one language, with stage and
discipline labels and links. Needs no query; the weekly rhythm run is the one live read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.urls import reverse

from common.choices import Discipline, Stage
from runbooks.selectors import rhythm_runs_for_week


def _title(titles: dict[str, str], language: str) -> str:
    return titles.get(language) or next(iter(titles.values()), "")


def _present_ref(item: dict[str, Any], language: str) -> dict[str, Any]:
    return {
        **item,
        "title": _title(item.get("titles", {}), language),
        "url": reverse("incidents:incident-detail", kwargs={"slug": item["slug"]}),
        "stage_label": _label(Stage, item.get("stage", "")),
        "discipline_label": _label(Discipline, item.get("discipline", "")),
    }


def _label(choices, value: str) -> str:
    try:
        return str(choices(value).label)
    except ValueError:
        return value or "—"


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def report_week_page(*, data: dict[str, Any], language: str) -> dict[str, Any]:
    """The snapshot as the page and the e-mail show it: titles in `language`, stage and
    discipline labels, incident links. Needs no query."""
    page = dict(data)
    page["new_incidents"] = {
        **data["new_incidents"],
        "items": [
            {**_present_ref(item, language), "created_at": _parse_time(item["created_at"])}
            for item in data["new_incidents"]["items"]
        ],
    }
    page["stages"] = [{**row, "label": _label(Stage, row["key"])} for row in data["stages"]]
    page["disciplines"] = [
        {**row, "label": _label(Discipline, row["key"])} for row in data["disciplines"]
    ]
    page["gaps"] = {
        **data["gaps"],
        "items": [
            {**item, "stage_label": _label(Stage, item["stage"]) if item["stage"] else "—"}
            for item in data["gaps"]["items"]
        ],
    }
    page["top_recurring"] = [_present_ref(item, language) for item in data["top_recurring"]]
    page["floods"] = [
        {**item, "stage_label": _label(Stage, item["stage"]) if item["stage"] else "—"}
        for item in data["floods"]
    ]
    page["stale_signatures"] = _stale_signatures(data["stale_signatures"], language)
    page["not_it"] = {
        **data["not_it"],
        "items": [_present_ref(item, language) for item in data["not_it"]["items"]],
    }
    attention = data.get("attention")
    page["attention"] = (
        {**attention, "label": _label(Discipline, attention["discipline"])} if attention else None
    )
    page["trend"] = [_trend_week(week) for week in data["trend"]]
    page["caught"] = _caught(data["caught"]) if data.get("caught") else None
    page["stage_labels"] = [str(label) for label in Stage.labels]
    page["analyses"] = _analyses(data["analyses"])
    return page


def _stale_signatures(section: dict[str, Any], language: str) -> dict[str, Any]:
    return {
        **section,
        "items": [
            {
                **item,
                "incident": _present_ref(item["incident"], language),
                "last_hit_at": _parse_time(item["last_hit_at"]),
                "edit_url": reverse("incidents:signature-edit", kwargs={"pk": item["id"]}),
            }
            for item in section["items"]
        ],
    }


def _trend_week(week: dict[str, Any]) -> dict[str, Any]:
    return {
        **week,
        "stage_counts": [week["stages"].get(stage, 0) for stage in Stage.values],
        "stage_items": [
            (str(label), week["stages"].get(stage, 0)) for stage, label in Stage.choices
        ],
    }


def _caught(caught: dict[str, Any]) -> dict[str, Any]:
    """Analyses `kb` caught, their stages busiest first."""
    by_count = sorted(caught["stages"].items(), key=lambda item: -item[1])
    return {**caught, "stages": [(_label(Stage, stage), count) for stage, count in by_count]}


def _analyses(analyses: dict[str, Any]) -> dict[str, Any]:
    """The explained share as percentages, and its change in points."""
    share, before = analyses["explained_share"], analyses["previous_share"]
    return {
        **analyses,
        "percent": None if share is None else round(share * 100),
        "previous_percent": None if before is None else round(before * 100),
        "change_points": None if share is None or before is None else round((share - before) * 100),
    }


@dataclass(frozen=True)
class RhythmRun:
    who: str
    started_at: datetime
    finished_at: datetime | None


def report_rhythm_run(*, week_start: date) -> RhythmRun | None:
    """The weekly-rhythm run of that week: the finished one, else the latest started one."""
    runs = list(rhythm_runs_for_week(week_start))
    if not runs:
        return None
    run = next((run for run in runs if run.finished_at), runs[0])
    who = run.started_by.get_username() if run.started_by else ""
    return RhythmRun(who=who, started_at=run.started_at, finished_at=run.finished_at)
