"""Exports: the matrix as Markdown and CSV, a weekly report as CSV.

They are written from the same objects the pages render (`Matrix`, the presented snapshot), so
an export holds exactly what the page shows, in the page's language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from django.utils.translation import gettext as _

from reports.selectors import Matrix

# A spreadsheet runs a cell that starts with one of these as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
CSV_QUOTE_MARKS = (",", ";", '"', "\r", "\n")


def _safe_cell(value: Any) -> Any:
    """Neutralise spreadsheet formulas (CSV injection); commands keep their text otherwise."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _csv_field(value: Any) -> str:
    """RFC 4180 quoting, and a cell with a semicolon is quoted too: a spreadsheet set to a
    European locale splits on it."""
    text = "" if value is None else str(value)
    if any(mark in text for mark in CSV_QUOTE_MARKS):
        return '"' + text.replace('"', '""') + '"'
    return text


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = [header, *([_safe_cell(value) for value in row] for row in rows)]
    return "".join(",".join(_csv_field(value) for value in line) + "\r\n" for line in lines)


# What a Markdown renderer would read as markup in a cell: a pipe ends the cell, `<` opens
# HTML (a script, an autolink), `[` a link or an image, a backtick a code span; `&` starts an
# entity. Escaped, a cell shows exactly what was typed.
MD_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "|": "\\|",
        "[": "\\[",
        "]": "\\]",
        "`": "\\`",
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
    }
)


def _md_cell(text: str) -> str:
    return " ".join(str(text).split()).translate(MD_ESCAPES)


def _md_code(command: str) -> str:
    """A command as inline code, intact: the fence is longer than any backtick run inside."""
    longest = max((len(run) for run in re.findall(r"`+", command)), default=0)
    fence = "`" * (longest + 1)
    padded = f" {command} " if command.startswith("`") or command.endswith("`") else command
    # GitHub tables split on a pipe even inside code; the escaped pipe renders as "|".
    return f"{fence}{padded}{fence}".replace("|", "\\|")


def _blank(value: Any) -> Any:
    return "" if value is None else value


def matrix_csv(matrix: Matrix) -> str:
    """The matrix rows, then the heat-map cells, as one table with a `section` column."""
    header = [
        _("Section"),
        _("Stage"),
        _("Rank"),
        _("Times"),
        _("Incidents"),
        _("Discipline"),
        _("Slug"),
        _("Title"),
        _("Symptom"),
        _("Root cause"),
        _("Remedy"),
        _("Command"),
        _("Prevention"),
    ]
    rows: list[list[Any]] = []
    for row in matrix.rows:
        for entry in row.entries:
            rows.append(
                [
                    "matrix",
                    row.label,
                    entry.rank,
                    entry.happened,
                    "",
                    entry.discipline_label,
                    entry.slug,
                    entry.title,
                    entry.symptom,
                    entry.root_cause,
                    entry.remedy_lead,
                    entry.remedy_command,
                    entry.prevention,
                ]
            )
    labels = dict(matrix.disciplines)
    for heat_row in matrix.heat:
        for cell in heat_row.cells:
            rows.append(
                [
                    "heatmap",
                    heat_row.label,
                    "",
                    cell.happened,
                    cell.incidents,
                    labels[cell.discipline],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                ]
            )
    return _csv(header, rows)


def matrix_markdown(matrix: Matrix) -> str:
    params = matrix.params
    lines = [
        f"# {_('Quick-reference matrix')}",
        "",
        _("Window: %(start)s to %(end)s (%(weeks)s weeks).")
        % {"start": matrix.start, "end": matrix.end, "weeks": params.weeks},
    ]
    if params.tag:
        lines.append(_("Tag: %(tag)s.") % {"tag": _md_cell(params.tag)})
    if params.reporters:
        lines.append(_("Team: %(names)s.") % {"names": _md_cell(", ".join(params.reporters))})
    for row in matrix.rows:
        lines += ["", f"## {row.label}", ""]
        if not row.entries:
            lines.append(_("No incident in this stage."))
            continue
        lines.append(
            "| # | "
            + " | ".join(
                [_("Times"), _("Symptom"), _("Root cause"), _("Remedy"), _("Prevention discipline")]
            )
            + " |"
        )
        lines.append("|---:|---:|---|---|---|---|")
        for entry in row.entries:
            remedy = _md_cell(entry.remedy_lead)
            if entry.remedy_command:
                remedy = (remedy + ": " if remedy else "") + _md_code(entry.remedy_command)
            prevention = f"**{_md_cell(entry.discipline_label)}**"
            if entry.prevention:
                prevention += " — " + _md_cell(entry.prevention)
            cells = [
                str(entry.rank),
                str(entry.happened),
                f"**{_md_cell(entry.title)}** — {_md_cell(entry.symptom)}",
                _md_cell(entry.root_cause),
                remedy,
                prevention,
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"## {_('Stage × discipline')}", ""]
    lines.append("| | " + " | ".join(_md_cell(label) for _, label in matrix.disciplines) + " |")
    lines.append("|---|" + "---:|" * len(matrix.disciplines))
    for heat_row in matrix.heat:
        lines.append(
            f"| {_md_cell(heat_row.label)} | "
            + " | ".join(f"{cell.happened} ({cell.incidents})" for cell in heat_row.cells)
            + " |"
        )
    lines += ["", _("Cells: times happened in the window (incidents).")]
    return "\n".join(lines) + "\n"


def report_week_csv(page: dict[str, Any]) -> str:
    """Every row the weekly report shows, one table: section, key, label, numbers."""
    header = [
        _("Section"),
        _("Key"),
        _("Label"),
        _("Count"),
        _("Previous"),
        _("Change"),
        _("Detail"),
    ]
    rows = [row for section in WEEKLY_CSV_SECTIONS for row in section(page)]
    return _csv(header, rows)


def _csv_totals(page: dict[str, Any]) -> list[list[Any]]:
    analyses = page["analyses"]
    return [
        ["analyses", "submitted", _("Analyses submitted"), analyses["submitted"], "", "", ""],
        ["analyses", "explained", _("Explained"), analyses["explained"], "", "", ""],
        ["analyses", "unexplained", _("Unexplained"), analyses["unexplained"], "", "", ""],
        ["analyses", "failed", _("Failed"), analyses["failed"], "", "", ""],
        [
            "analyses",
            "explained_share",
            _("Explained share (%)"),
            _blank(analyses["percent"]),
            _blank(analyses["previous_percent"]),
            _blank(analyses["change_points"]),
            "",
        ],
        ["incidents", "new", _("New incidents"), page["new_incidents"]["count"], "", "", ""],
        ["recurrences", "count", _("Recurrences"), page["recurrences"]["count"], "", "", ""],
    ]


def _csv_dimensions(page: dict[str, Any]) -> list[list[Any]]:
    return [
        [
            section,
            row["key"],
            row["label"],
            row["count"],
            row["previous"],
            row["change"],
            _("%(new)s new, %(recurred)s recurred") % row,
        ]
        for section, key in (("stage", "stages"), ("discipline", "disciplines"))
        for row in page[key]
    ]


def _csv_trend(page: dict[str, Any]) -> list[list[Any]]:
    return [
        [
            "trend",
            week["week"],
            week["week_start"],
            sum(week["stage_counts"]),
            "",
            "",
            " ".join(f"{stage}={count}" for stage, count in week["stages"].items()),
        ]
        for week in page["trend"]
    ]


def _csv_incidents(page: dict[str, Any]) -> list[list[Any]]:
    new = [
        [
            "new_incident",
            item["slug"],
            item["title"],
            "",
            "",
            "",
            f"{item['stage_label']} / {item['discipline_label']}",
        ]
        for item in page["new_incidents"]["items"]
    ]
    recurring = [
        ["top_recurring", item["slug"], item["title"], item["count"], "", "", item["stage_label"]]
        for item in page["top_recurring"]
    ]
    return new + recurring


def _csv_gaps_and_floods(page: dict[str, Any]) -> list[list[Any]]:
    gaps = [
        [
            "gap",
            item["gap_id"] or "",
            item["key_template"],
            item["tails"],
            "",
            "",
            item["example_line"],
        ]
        for item in page["gaps"]["items"]
    ]
    floods = [
        ["flood", "", item["template"], item["lines"], "", "", _("%(analyses)s analyses") % item]
        for item in page["floods"]
    ]
    return gaps + floods


def _csv_upkeep(page: dict[str, Any]) -> list[list[Any]]:
    """Stale signatures, remedies marked "not it", and the discipline needing attention."""
    rows: list[list[Any]] = [
        [
            "stale_signature",
            item["id"],
            item["pattern"],
            item["hit_count"],
            "",
            "",
            item["incident"]["slug"],
        ]
        for item in page["stale_signatures"]["items"]
    ]
    rows += [
        [
            "not_it",
            item["slug"],
            item["title"],
            item["count"],
            "",
            "",
            _("%(analyses)s analyses") % item,
        ]
        for item in page["not_it"]["items"]
    ]
    if attention := page["attention"]:
        rows.append(
            [
                "attention",
                attention["discipline"],
                attention["label"],
                attention["count"],
                "",
                attention["change"],
                _("%(not_it)s marked not it") % attention,
            ]
        )
    return rows


WEEKLY_CSV_SECTIONS = (
    _csv_totals,
    _csv_dimensions,
    _csv_trend,
    _csv_incidents,
    _csv_gaps_and_floods,
    _csv_upkeep,
)
