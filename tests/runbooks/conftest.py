import pytest


@pytest.fixture
def runbooks(db):
    """The shipped runbooks, seeded in English with Chinese as translation."""
    from runbooks.seeding import runbook_catalog_seed

    return runbook_catalog_seed(language="en")
