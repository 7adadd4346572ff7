"""Signing in, and reading the signed-in user on every request: Django's ModelBackend, with
whether the user is a lead read in the same query (every page asks, for its menu and its
rights) instead of one more."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef

from accounts.roles import LEAD, remember_lead


class RolesBackend(ModelBackend):
    def get_user(self, user_id):
        users = get_user_model()._default_manager
        leads = Group.objects.filter(name=LEAD, user=OuterRef("pk"))
        user = users.annotate(in_lead_group=Exists(leads)).filter(pk=user_id).first()
        if user is None or not self.user_can_authenticate(user):
            return None
        remember_lead(user, user.in_lead_group)
        return user
