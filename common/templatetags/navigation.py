"""The site's main menu: `{% load navigation %}{% main_nav user_is_lead %}`.

Its links depend only on the page's language, the URL prefix and whether the user is a lead,
so each combination is written once per process (eight `{% url %}` and `{% translate %}` on
every page cost more than the rest of the page's frame)."""

import functools
from html import escape

from django import template
from django.urls import get_script_prefix, reverse
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

register = template.Library()

LINKS = (
    ("incidents:analysis-new", gettext_noop("Analyze a log")),
    ("incidents:incident-list", gettext_noop("Incidents")),
    ("incidents:gap-list", gettext_noop("Knowledge gaps")),
    ("reports:matrix", gettext_noop("Matrix")),
    ("reports:weekly-list", gettext_noop("Weekly report")),
    ("runbooks:runbook-list", gettext_noop("Runbooks")),
    ("api-docs", gettext_noop("API docs")),
)
LEAD_LINKS = (("admin:index", gettext_noop("Admin")),)


@register.simple_tag
def main_nav(is_lead: bool):
    return mark_safe(_main_nav(get_language(), get_script_prefix(), bool(is_lead)))


@functools.lru_cache(maxsize=64)
def _main_nav(language: str | None, script_prefix: str, is_lead: bool) -> str:
    links = LINKS + LEAD_LINKS if is_lead else LINKS
    return "\n".join(
        f'<a href="{escape(reverse(name))}">{escape(_(label))}</a>' for name, label in links
    )
