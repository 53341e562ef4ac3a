"""The demand object the scaler reads.

Aspects: demand = queued + in-flight, plus 1 while a lease is open and nothing is queued; listeners
hear every change exactly once and nothing when a write leaves the value unchanged; unsubscribe is
idempotent; a failing listener does not stop the others; it satisfies the scaler's ``DemandSource``
protocol structurally.
"""

from __future__ import annotations

import pytest

from noctaya.gateway import demand


def test_formula_and_notifications() -> None:
    d = demand.Demand()
    seen: list[int] = []
    unsubscribe = d.subscribe(seen.append)
    d.set_lease_open(True)  # lease alone: 1
    d.set_queued(3)  # queued replaces the lease's +1
    d.set_counts(queued=2, in_flight=1)  # a request moved from queue to in-flight: no change
    d.set_counts(queued=0, in_flight=3)  # nothing queued, lease still open: 3 + 1
    d.set_in_flight(0)  # nothing queued, lease open: 1
    d.set_lease_open(False)
    d.set_lease_open(False)  # no change, no call
    assert seen == [1, 3, 4, 1, 0]
    assert d.demand() == 0
    unsubscribe()
    unsubscribe()
    d.set_queued(1)
    assert seen == [1, 3, 4, 1, 0]


def test_a_failing_listener_does_not_stop_the_others(caplog: pytest.LogCaptureFixture) -> None:
    d = demand.Demand()
    seen: list[int] = []

    def broken(value: int) -> None:
        raise RuntimeError("boom")

    d.subscribe(broken)
    d.subscribe(seen.append)
    d.set_in_flight(2)
    assert seen == [2]
    assert "demand listener" in caplog.text


def test_satisfies_the_scaler_protocol() -> None:
    from noctaya.contract import demand as scaler_demand

    source: scaler_demand.DemandSource = demand.Demand()
    assert source.demand() == 0
