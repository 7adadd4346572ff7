"""Signing in, and reading the signed-in user on every request: Django's ModelBackend, with
whether the user is a lead read in the same query (every page asks, for its menu and its
rights) instead of one more. That read is one plain statement, written once per process:
building it through the ORM on every request cost three times what the database spends."""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db import connection

from accounts.roles import LEAD, remember_lead


class RolesBackend(ModelBackend):
    def get_user(self, user_id):
        users = get_user_model()._default_manager.raw(_user_with_role_sql(), [LEAD, user_id])
        user = next(iter(users), None)
        if user is None or not self.user_can_authenticate(user):
            return None
        remember_lead(user, bool(user.in_lead_group))
        return user


@cache
def _user_with_role_sql() -> str:
    """The user whose id is the second parameter, with whether they are in the group named by
    the first."""
    quote = connection.ops.quote_name
    user, group = get_user_model()._meta, Group._meta
    membership = get_user_model().groups.through._meta
    member, of_group = (quote(membership.get_field(name).column) for name in ("user", "group"))
    user_id = quote(user.pk.column)
    return (
        f"SELECT u.*, EXISTS (SELECT 1 FROM {quote(membership.db_table)} m "
        f"JOIN {quote(group.db_table)} g ON g.{quote(group.pk.column)} = m.{of_group} "
        f"WHERE m.{member} = u.{user_id} AND g.{quote(group.get_field('name').column)} = %s) "
        f"AS in_lead_group FROM {quote(user.db_table)} u WHERE u.{user_id} = %s"
    )
