"""Faults injected for real: a private Redis that is stopped, workers that are killed, database
connections that are cut. Every process listens on loopback only and every wait is bounded.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from accounts.roles import ENGINEER, user_set_role
from tests.faults.harness import PASSWORD


@pytest.fixture
def engineer(db):
    user = get_user_model().objects.create_user(username="erin", password=PASSWORD)
    user_set_role(user=user, role=ENGINEER)
    return user
