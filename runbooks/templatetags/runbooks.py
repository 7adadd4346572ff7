"""Links from other pages into the runbooks: `{% load runbooks %}`, then

    {% runbooks_for_incident incident %}   the runbooks of an incident's stage and discipline
    {% diagnose_runbook analysis.stage %}  the diagnose-by-stage runbook of a detected stage

Each costs at most one query and renders nothing when there is nothing to link to.
"""

from django import template
from django.utils.translation import get_language

from runbooks import selectors
from runbooks.calculators import format_mib

register = template.Library()


@register.inclusion_tag("runbooks/partials/incident_runbooks.html")
def runbooks_for_incident(incident) -> dict:
    links = selectors.runbook_links_for_incident(
        stage=getattr(incident, "stage", ""),
        discipline=getattr(incident, "discipline", ""),
        language=get_language(),
    )
    return {"links": links}


@register.inclusion_tag("runbooks/partials/diagnose_runbook.html")
def diagnose_runbook(stage) -> dict:
    link = selectors.runbook_diagnose_for_stage(stage=stage or "", language=get_language())
    return {"link": link}


@register.simple_tag
def runbook_text(runbook):
    """A runbook's title, summary and steps in the language the page is shown in."""
    return runbook.text(get_language())


@register.filter
def mib(value) -> str:
    return "" if value is None else format_mib(float(value))
