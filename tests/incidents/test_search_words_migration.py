"""Upgrading an install makes the incidents it has findable by short terms, with the
trigram search of longer ones still working (SQLite remade no table and lost no trigger)."""

import pytest

from incidents.models import Incident
from tests.factories import IncidentFactory
from tests.migrating import migrate_to

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("back_to_the_latest_schema"),
]

BEFORE = ("incidents", "0015_webhook")


def test_incidents_filed_before_the_upgrade_are_found_by_short_terms():
    IncidentFactory(slug="oom", symptom="训练时显存不足 out of memory")
    IncidentFactory(slug="other", symptom="磁盘满了")
    migrate_to(BEFORE)
    migrate_to(None)

    def slugs(query):
        return list(Incident.objects.search(query).values_list("slug", flat=True))

    assert slugs("显存") == ["oom"]
    assert slugs("of memory") == ["oom"]
    assert slugs("磁盘满") == ["other"]
    IncidentFactory(slug="later", symptom="显存 again, frobnicated")
    assert sorted(slugs("显存")) == ["later", "oom"]
    assert slugs("frobnicated") == ["later"]
