from rest_framework import permissions

from accounts.roles import is_lead
from incidents.permissions import can_edit_incident


class IncidentPermission(permissions.IsAuthenticated):
    """Everyone signed in reads and files; the reporter or a lead edits; only leads delete."""

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        if request.method == "DELETE":
            return is_lead(request.user)
        return can_edit_incident(request.user, obj)


class LeadWritesPermission(permissions.IsAuthenticated):
    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        return request.method in permissions.SAFE_METHODS or is_lead(request.user)
