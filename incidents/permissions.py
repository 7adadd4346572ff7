"""Who may read and change what in the incident book. Views and the API ask here, nowhere else."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _

from accounts.roles import is_lead
from incidents.models import Incident


def can_edit_incident(user, incident: Incident) -> bool:
    return user.is_authenticated and (is_lead(user) or incident.reporter_id == user.pk)


def can_manage_signatures(user) -> bool:
    return is_lead(user)


def incident_get_for_user(user, slug: str, *, for_edit: bool = False) -> Incident:
    incident = get_object_or_404(Incident.objects.for_pages(), slug=slug)
    if for_edit and not can_edit_incident(user, incident):
        raise PermissionDenied(_("Only the reporter or a lead may edit this incident."))
    return incident
