"""Admission: fixed queue slots and in-flight capacity, fail fast, one release per grant.

Aspects: warm entry only when ready, nobody queued and capacity left; the queue bound raises
QueueFull; grants go strictly in arrival order and move queue → in-flight in one step; a freed
in-flight slot goes to the oldest waiter; leaving frees a queued slot (O(1)) or returns a granted
but unused in-flight slot; fail_waiting ends every waiter with its own error; demand follows.
"""

from __future__ import annotations

import asyncio

import pytest

from noctaya.gateway import admission, demand


def make(*, max_queue: int = 3, max_in_flight: int = 2) -> tuple[admission.Admission, demand.Demand]:
    d = demand.Demand()
    return admission.Admission(max_queue=max_queue, max_in_flight=max_in_flight, demand=d), d


async def test_warm_entry_and_capacity() -> None:
    a, d = make()
    assert not a.try_enter()  # not ready
    a.set_ready(True)
    assert a.try_enter() and a.try_enter() and not a.try_enter()
    assert d.demand() == 2
    a.release()
    a.release()
    assert a.idle and d.demand() == 0


async def test_queue_bound_order_and_handoff() -> None:
    a, d = make(max_queue=3, max_in_flight=1)
    tickets = [a.enqueue() for _ in range(3)]
    with pytest.raises(admission.QueueFull):
        a.enqueue()
    assert d.demand() == 3
    a.set_ready(True)  # one slot: the oldest gets it
    assert [t.future.done() for t in tickets] == [True, False, False]
    assert (a.queued, a.in_flight) == (2, 1) and d.demand() == 3
    a.settle(tickets[0])
    a.release()  # handed to the next oldest
    assert [t.future.done() for t in tickets] == [True, True, False]
    a.leave(tickets[2])  # client gone while queued
    assert (a.queued, a.in_flight) == (0, 1)
    a.leave(tickets[1])  # granted but never used: its slot comes back
    assert a.idle and d.demand() == 0


async def test_fail_waiting_gives_each_waiter_its_own_error() -> None:
    a, _ = make()
    tickets = [a.enqueue() for _ in range(3)]
    assert a.fail_waiting(lambda: RuntimeError("expired")) == 3
    errors = []
    for ticket in tickets:
        with pytest.raises(RuntimeError) as caught:
            await ticket.future
        errors.append(caught.value)
        a.leave(ticket)  # harmless after the fact
    assert len({id(e) for e in errors}) == 3
    assert a.idle


async def test_cancelled_waiter_is_removed() -> None:
    a, _ = make()
    ticket = a.enqueue()
    waiter = asyncio.ensure_future(ticket.future)
    a.leave(ticket)
    await asyncio.gather(waiter, return_exceptions=True)
    assert ticket.future.cancelled() and a.queued == 0
