from dataclasses import dataclass, field

import pytest

from incidents.services import sweep
from tests.migrating import migrate_to


@dataclass
class Broker:
    """The broker as the sweep sees it: up or not, whether it lost its queue, what was sent."""

    reachable: bool = True
    lost_queue: bool = False
    sent: list[int] = field(default_factory=list)
    rescores: int = 0


@pytest.fixture
def broker(monkeypatch) -> Broker:
    """For the sweep's own decisions; real brokers are in test_analysis_lifecycle and faults/."""
    state = Broker()
    monkeypatch.setattr(sweep, "broker_state", lambda: (state.reachable, state.lost_queue))
    monkeypatch.setattr(sweep, "_enqueue", state.sent.append)

    def rescore():
        state.rescores += 1

    monkeypatch.setattr(sweep, "_enqueue_rescore", rescore)
    return state


@pytest.fixture
def back_to_the_latest_schema():
    """An upgrade test moves the schema back; the tests after it need today's."""
    yield
    migrate_to(None)
