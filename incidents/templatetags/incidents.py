from django import template
from django.utils.translation import get_language

from common.choices import Stage
from incidents.catalog import signature_note_in

register = template.Library()


@register.simple_tag
def incident_text(incident):
    """The incident's text columns in the language the page is shown in, where one exists."""
    return incident.text(get_language())


@register.filter
def stage_label(stage: str) -> str:
    """A stage code ("train") as the label in the page's language; unknown codes as they are."""
    return Stage(stage).label if stage in Stage.values else stage


@register.filter
def signature_note(note: str) -> str:
    """A signature's note in the page's language when the catalog shipped it translated."""
    return signature_note_in(note, get_language())
