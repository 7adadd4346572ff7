"""Who may do what. Two roles, both Django groups: engineers and leads.

Engineers file incidents, edit their own and record recurrences; leads edit everything,
manage signatures and tags, review reports and use the Django admin.
"""

from typing import Any

from django.contrib.auth.models import Group

ENGINEER = "engineer"
LEAD = "lead"


def is_lead(user: Any) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    cached = getattr(user, "_is_lead", None)
    if cached is None:
        cached = user.groups.filter(name=LEAD).exists()
        remember_lead(user, cached)
    return cached


def remember_lead(user: Any, lead: bool) -> None:
    """What `is_lead` answers for this user object from now on (read with the user)."""
    user._is_lead = lead


def user_set_role(*, user, role: str) -> None:
    """Put a user in exactly one role; leads also get the admin (is_staff)."""
    if role not in (ENGINEER, LEAD):
        raise ValueError(f"Unknown role {role!r}: use {ENGINEER!r} or {LEAD!r}.")
    user.groups.remove(*Group.objects.filter(name__in=(ENGINEER, LEAD)))
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    user.is_staff = role == LEAD
    user.save(update_fields=["is_staff"])
    remember_lead(user, role == LEAD)


def roles_ensure(**kwargs) -> None:
    """Create both groups; leads get every right on the incident book and runbooks in the admin.

    Connected to post_migrate, so it runs after Django has created the permissions.
    """
    from django.contrib.auth.models import Permission

    Group.objects.get_or_create(name=ENGINEER)
    lead, _ = Group.objects.get_or_create(name=LEAD)
    lead.permissions.set(
        Permission.objects.filter(content_type__app_label__in=("incidents", "runbooks", "reports"))
    )
