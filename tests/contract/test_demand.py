"""The demand signal and its one failure contract.

Aspects: listeners hear every change exactly once, in subscription order, and nothing for a write
that leaves the value unchanged; a listener that raises is logged and stays subscribed, the others
still run and the writer never sees the error — on the gateway's demand and on the aggregate
scaler's membership alike (a failing listener cannot turn an accepted report into an error);
unsubscribing is idempotent; negative demand is refused.
"""

from __future__ import annotations

import pytest

from noctaya.contract import demand
from noctaya.gateway import demand as gateway_demand
from noctaya.scaler import membership


def test_changes_only_in_order() -> None:
    signal = demand.DemandSignal()
    seen: list[tuple[str, int]] = []
    signal.subscribe(lambda value: seen.append(("a", value)))
    unsubscribe = signal.subscribe(lambda value: seen.append(("b", value)))
    signal.set(2)
    signal.set(2)
    unsubscribe()
    unsubscribe()
    signal.set(0)
    assert seen == [("a", 2), ("b", 2), ("a", 0)]
    assert signal.listeners == 1
    with pytest.raises(ValueError, match=">= 0"):
        signal.set(-1)


def _broken(value: int) -> None:
    raise RuntimeError(f"listener broke at {value}")


def test_a_failing_listener_is_logged_and_kept(caplog: pytest.LogCaptureFixture) -> None:
    signal = demand.DemandSignal()
    seen: list[int] = []
    signal.subscribe(_broken)
    signal.subscribe(seen.append)
    signal.set(1)  # does not raise
    signal.set(2)
    assert seen == [1, 2]
    assert [record.getMessage().endswith("stays subscribed") for record in caplog.records] == [True, True]


def test_both_sides_keep_the_contract(caplog: pytest.LogCaptureFixture) -> None:
    gateway = gateway_demand.Demand()
    members = membership.Membership(max_members=4, max_member_demand=10, ttl=10.0)
    for source in (gateway, members):
        assert isinstance(source, demand.DemandSource)
        source.subscribe(_broken)
    gateway.set_in_flight(3)
    assert gateway.demand() == 3
    assert members.report(member="gw-1", sequence=1, demand=4) is membership.Outcome.ACCEPTED
    assert members.demand() == 4 and len(members) == 1
    assert len(caplog.records) == 2 and all(record.exc_info for record in caplog.records)
