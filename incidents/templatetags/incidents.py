from django import template
from django.utils.translation import get_language

from common.choices import Stage

register = template.Library()


@register.simple_tag
def incident_text(incident):
    """The incident's text columns in the language the page is shown in, where one exists."""
    return incident.text(get_language())


@register.filter
def stage_label(stage: str) -> str:
    """A stage code ("train") as the label in the page's language; unknown codes as they are."""
    return Stage(stage).label if stage in Stage.values else stage
