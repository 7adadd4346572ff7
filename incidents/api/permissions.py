from rest_framework import exceptions, permissions

from accounts.roles import is_lead
from common.throttles import AnonRateThrottle
from incidents.permissions import can_edit_incident


class SignedIn(permissions.IsAuthenticated):
    """Signed-in callers only; anonymous ones are counted against the `anon` rate first.

    DRF checks throttles after permissions, so without this an anonymous caller would get
    403 after 403 and never meet AnonRateThrottle: past the rate it gets 429 instead.
    """

    def has_permission(self, request, view):
        if super().has_permission(request, view):
            return True
        throttle = AnonRateThrottle()
        if not throttle.allow_request(request, view):
            raise exceptions.Throttled(throttle.wait())
        return False


class IncidentPermission(SignedIn):
    """Everyone signed in reads and files; the reporter or a lead edits; only leads delete."""

    def has_object_permission(self, request, view, obj):
        if request.method in permissions.SAFE_METHODS:
            return True
        if request.method == "DELETE":
            return is_lead(request.user)
        return can_edit_incident(request.user, obj)


class LeadWritesPermission(SignedIn):
    def has_permission(self, request, view):
        if not super().has_permission(request, view):
            return False
        return request.method in permissions.SAFE_METHODS or is_lead(request.user)
