import functools
from html import escape
from urllib.parse import quote

from django import template
from django.urls import get_script_prefix, reverse
from django.utils.formats import date_format
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _

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
    return _label_in(choices, code, get_language())


@functools.lru_cache(maxsize=1024)
def _label_in(choices, code: str, language: str | None) -> str:
    return str(choices(code).label) if code in choices.values else code


@register.filter
def stage_label(stage: str) -> str:
    return _label(Stage, stage)


@register.filter
def discipline_label(discipline: str) -> str:
    return _label(Discipline, discipline)


@register.filter
def severity_label(severity: str) -> str:
    return _label(Severity, severity)


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
TAG = '<a class="tag" href="{list_url}?tag={query}">{name}</a>'


@register.simple_tag
def incident_row(incident):
    """One row of the incident list: title in the page's language, labels, tags as filter
    links."""
    reporter = incident.reporter
    language = get_language()
    return mark_safe(
        ROW.format(
            url=escape(incident.slug.join(_url_around("incidents:incident-detail", SLUG_MARK))),
            title=escape(incident.title_in(language)),
            slug=escape(incident.slug),
            stage=escape(incident.stage),
            stage_label=escape(_label_in(Stage, incident.stage, language)),
            discipline=escape(_label_in(Discipline, incident.discipline, language)),
            severity=escape(incident.severity),
            severity_label=escape(_label_in(Severity, incident.severity, language)),
            recurrences=incident.recurrence_count,
            tags="".join(_tag_link(name) for name in incident.tag_names),
            occurred=_date(incident.occurred_on, language) if incident.occurred_on else "—",
            reporter=escape(reporter.username) if reporter and reporter.username else "—",
        )
    )


# What a row repeats from one row and one page to the next is worked out once per process:
# the detail URL's shape, a tag's link, a date and a label in each language.
SLUG_MARK = "slug-mark"
PK_MARK = 987654321


def _url_around(name: str, mark: str | int | None = None) -> tuple[str, str]:
    """The URL named `name` around its one argument, as the parts before and after it (with
    no argument: the whole URL, and nothing after it)."""
    return _url_parts(get_script_prefix(), name, mark)


@functools.lru_cache(maxsize=32)
def _url_parts(script_prefix: str, name: str, mark: str | int | None) -> tuple[str, str]:
    if mark is None:
        return reverse(name), ""
    head, _mark, tail = reverse(name, args=[mark]).rpartition(str(mark))
    return head, tail


@functools.lru_cache(maxsize=4096)
def _tag_link(name: str, list_url: str = "") -> str:
    """A tag as a link to the incident list filtered by it (`list_url` empty: on the list)."""
    return TAG.format(list_url=escape(list_url), query=escape(quote(name)), name=escape(name))


@functools.lru_cache(maxsize=4096)
def _date(day, language: str | None) -> str:
    return escape(date_format(day))


# The incident page's tags and signatures, written in Python for the same reason as a row:
# an incident has about ten tags and five signatures, each a link the template engine took
# a `{% url %}` and a dozen node renders to write.
@register.simple_tag
def incident_tag_links(incident):
    """An incident's tags as links to the incident list filtered by each."""
    list_url, _ = _url_around("incidents:incident-list")
    return mark_safe("".join(_tag_link(name, list_url) for name in incident.tag_names))


SIGNATURE = (
    '<li id="signature-{pk}"><span class="muted small">#{pk}</span> '
    '<code class="mono">{pattern}</code>{edit}{disabled}{lead}{unless}{note}</li>'
)


@register.simple_tag
def signature_items(signatures, can_manage: bool):
    """The `<li>` of each of an incident's signatures: pattern, state, counter-pattern and
    note (in the page's language), with an edit link for those who may manage them."""
    language = get_language()
    edit_head, edit_tail = (
        escape(part) for part in _url_around("incidents:signature-edit", PK_MARK)
    )
    edit, disabled, lead, ruled_out = (
        escape(str(word))
        for word in (_("edit"), _("disabled"), _("a lead only"), _("ruled out by"))
    )
    items = []
    for signature in signatures:
        note = signature.note and signature_note_in(signature.note, language)
        unless = escape(signature.unless)
        items.append(
            SIGNATURE.format(
                pk=signature.pk,
                pattern=escape(signature.pattern),
                edit=f' <a class="small" href="{edit_head}{signature.pk}{edit_tail}">{edit}</a>'
                if can_manage
                else "",
                disabled="" if signature.enabled else f' <span class="muted">({disabled})</span>',
                lead=f' <span class="muted">({lead})</span>' if signature.lead_only else "",
                unless=f'<div class="small">{ruled_out} <code class="mono">{unless}</code></div>'
                if unless
                else "",
                note=f'<div class="muted small">{escape(note)}</div>' if note else "",
            )
        )
    return mark_safe("".join(items))
