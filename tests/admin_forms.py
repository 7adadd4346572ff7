"""Changing a row the way the admin's change page does: its own form, then its save path."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db import models
from django.forms.models import model_to_dict
from django.test import RequestFactory


def admin_change(obj: models.Model, user, **changes: Any) -> models.Model:
    """Save `changes` to `obj` through its admin's form, `save_model` and `save_related`
    (without the page's inlines), as `user`."""
    model_admin = admin.site._registry[type(obj)]
    request = RequestFactory().post("/")
    request.user = user
    form_class = model_admin.get_form(request, obj, change=True)
    assert set(changes) <= set(form_class.base_fields), f"{user} may not change {set(changes)}"
    data = {
        name: [related.pk for related in value] if isinstance(value, list) else value
        for name, value in model_to_dict(obj, fields=list(form_class.base_fields)).items()
        if value is not None
    }
    form = form_class({**data, **changes}, instance=obj)
    assert form.is_valid(), form.errors
    saved = model_admin.save_form(request, form, change=True)
    model_admin.save_model(request, saved, form, change=True)
    model_admin.save_related(request, form, [], change=True)
    return saved
