from html import escape
from urllib.parse import quote

from django import template
from django.utils.formats import date_format
from django.utils.safestring import mark_safe
from django.utils.translation import get_language

from common.choices import Discipline, Severity, Stage
from incidents.catalog import signature_note_in

register = template.Library()


@register.simple_tag
def incident_text(incident):
    """The incident's text columns in the language the page is shown in, where one exists."""
    return incident.text(get_language())


@register.simple_tag
def incident_title(incident):
    """The incident's title in the language the page is shown in, where one exists."""
    return incident.title_in(get_language())


def _label(choices, code: str) -> str:
    """A code as its label in the page's language; unknown codes as they are."""
    return choices(code).label if code in choices.values else code


@register.filter
def stage_label(stage: str) -> str:
    return _label(Stage, stage)


@register.filter
def discipline_label(discipline: str) -> str:
    return _label(Discipline, discipline)


@register.filter
def severity_label(severity: str) -> str:
    return _label(Severity, severity)


@register.filter
def signature_note(note: str) -> str:
    """A signature's note in the page's language when the catalog shipped it translated."""
    return signature_note_in(note, get_language())


# A list row, written in Python: the list page renders 25 of these, with ten tags each, and
# the template engine took ~0.7 ms a row on a busy 2-core machine (issue 14's load). Every
# value passes through `escape` (html.escape, as Django's own escape filter does).
ROW = (
    '<tr><td><a href="{url}">{title}</a><div class="muted small mono">{slug}</div></td>'
    '<td><span class="badge stage-{stage}">{stage_label}</span></td>'
    "<td>{discipline}</td>"
    '<td><span class="sev sev-{severity}">{severity_label}</span></td>'
    '<td class="num">{recurrences}</td><td>{tags}</td>'
    '<td class="small">{occurred}</td><td class="small">{reporter}</td></tr>'
)
TAG = '<a class="tag" href="?tag={query}">{name}</a>'


@register.simple_tag
def incident_row(incident):
    """One row of the incident list: title in the page's language, labels, tags (from
    `selectors.incident_tag_names`) as filter links."""
    reporter = incident.reporter
    tags = "".join(TAG.format(query=escape(quote(t)), name=escape(t)) for t in incident.tag_names)
    return mark_safe(
        ROW.format(
            url=escape(incident.get_absolute_url()),
            title=escape(incident.title_in(get_language())),
            slug=escape(incident.slug),
            stage=escape(incident.stage),
            stage_label=escape(stage_label(incident.stage)),
            discipline=escape(discipline_label(incident.discipline)),
            severity=escape(incident.severity),
            severity_label=escape(severity_label(incident.severity)),
            recurrences=incident.recurrence_count,
            tags=tags,
            occurred=escape(date_format(incident.occurred_on)) if incident.occurred_on else "—",
            reporter=escape(reporter.username) if reporter and reporter.username else "—",
        )
    )
