from django import template
from django.utils.translation import get_language

register = template.Library()


@register.simple_tag
def incident_text(incident):
    """The incident's text columns in the language the page is shown in, where one exists."""
    return incident.text(get_language())
