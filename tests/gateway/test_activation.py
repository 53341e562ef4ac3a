"""The activation lease, unit level, on a fake loop clock (``looptime``): timings are exact.

Aspects: opening raises demand to 1 and counts a start; opening again while activating is a no-op;
Ready moves it to the grace period and closes it after the grace; the deadline expires it, fails
every waiter with activation_timeout and counts an expiry; a new cold request after that opens a new
lease; close() stops the timer.
"""

from __future__ import annotations

import asyncio

import pytest

from noctaya.gateway import activation, admission, demand, errors, metrics

pytestmark = pytest.mark.looptime  # loop time only moves when every task waits: no margins


def make(
    *, timeout: float = 30.0, grace: float = 5.0
) -> tuple[activation.Activation, admission.Admission, demand.Demand, metrics.Metrics]:
    d = demand.Demand()
    m = metrics.Metrics(max_queue=5, max_in_flight=5)
    a = admission.Admission(max_queue=5, max_in_flight=5, demand=d)
    return activation.Activation(timeout=timeout, grace=grace, demand=d, admission=a, metrics=m), a, d, m


def state(lease: activation.Activation) -> activation.LeaseState:
    return lease.state


async def test_ready_then_grace_then_closed() -> None:
    lease, _, d, m = make()
    lease.ensure_open()
    lease.ensure_open()
    assert state(lease) is activation.LeaseState.ACTIVATING and d.demand() == 1
    assert m.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "started"}) == 1
    lease.backend_ready()
    assert state(lease) is activation.LeaseState.GRACE and d.demand() == 1
    await asyncio.sleep(4.999)
    assert state(lease) is activation.LeaseState.GRACE and d.demand() == 1  # the grace holds demand
    await asyncio.sleep(0.002)
    assert state(lease) is activation.LeaseState.CLOSED and d.demand() == 0
    assert m.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "succeeded"}) == 1


async def test_deadline_expires_and_fails_waiters() -> None:
    lease, a, d, m = make(timeout=30.0)
    lease.ensure_open()
    tickets = [a.enqueue() for _ in range(2)]
    await asyncio.sleep(29.999)
    assert state(lease) is activation.LeaseState.ACTIVATING and not any(t.future.done() for t in tickets)
    await asyncio.sleep(0.002)
    assert state(lease) is activation.LeaseState.CLOSED and d.demand() == 0
    assert m.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "expired"}) == 1
    for ticket in tickets:
        with pytest.raises(errors.GatewayError) as caught:
            await ticket.future
        assert caught.value.code == "activation_timeout" and caught.value.status == 504
    lease.ensure_open()  # a later cold request: a new lease
    assert m.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "started"}) == 2
    lease.close()
    assert state(lease) is activation.LeaseState.CLOSED and lease.deadline is None
