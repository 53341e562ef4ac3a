"""Admission: fixed queue slots and in-flight capacity, fail fast, one release per grant.

Aspects: warm entry only when ready, nobody queued and capacity left; the queue bound raises
QueueFull; grants go strictly in arrival order and move queue → in-flight in one step; a freed
in-flight slot goes to the oldest waiter; leaving frees a queued slot (O(1)) or returns a granted
but unused in-flight slot; fail_waiting ends every waiter with its own error; demand follows;
max_wait ends each ticket at its own deadline through one timer and spares granted ones; a request
held again after a refused connect keeps its place and its deadline by its first arrival; a waiter
cancelled before it leaves is passed over by the grant; wait_idle wakes when the counts reach zero,
even when demand does not change (a lease holds it).
"""

from __future__ import annotations

import asyncio

import pytest

from noctaya.gateway import admission, demand

pytestmark = pytest.mark.looptime  # a fake loop clock: deadlines are exact, whatever the machine's load


def make(*, max_queue: int = 3, max_in_flight: int = 2) -> tuple[admission.Admission, demand.Demand]:
    d = demand.Demand()
    return admission.Admission(max_queue=max_queue, max_in_flight=max_in_flight, demand=d), d


async def test_warm_entry_and_capacity() -> None:
    a, d = make()
    assert not a.try_enter()  # not ready
    a.set_ready(True)
    assert a.try_enter() and a.try_enter() and not a.try_enter()
    assert d.demand() == 2
    a.leave(None)  # what try_enter took
    a.leave(None)
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
    a.leave(tickets[0])  # handed to the next oldest
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


async def test_max_wait_ends_each_ticket_at_its_own_deadline() -> None:
    d = demand.Demand()
    a = admission.Admission(
        max_queue=5, max_in_flight=1, demand=d, max_wait=5.0, wait_expired=lambda: RuntimeError("late")
    )
    loop = asyncio.get_running_loop()
    start = loop.time()
    first = a.enqueue()
    await asyncio.sleep(3.0)
    second = a.enqueue()  # its deadline is 3 s after the first's: one timer, moved along
    await asyncio.sleep(1.999)
    assert not first.future.done() and not second.future.done()
    await asyncio.sleep(0.002)
    assert first.future.done() and not second.future.done()
    assert (a.queued, d.demand()) == (1, 1)
    with pytest.raises(RuntimeError, match="late"):
        await second.future
    assert loop.time() - start == pytest.approx(8.0, abs=0.01)
    assert a.queued == 0 and d.demand() == 0
    with pytest.raises(RuntimeError, match="late"):
        await first.future
    a.leave(first)  # harmless after the fact
    a.close()


async def test_max_wait_spares_granted_tickets() -> None:
    a, _ = make(max_queue=2, max_in_flight=1)
    a.max_wait = 3.0
    ticket = a.enqueue()
    a.set_ready(True)
    await asyncio.sleep(5.0)
    assert ticket.future.done() and ticket.future.exception() is None
    a.leave(ticket)
    assert a.idle
    a.close()


async def test_a_cancelled_waiter_is_skipped_by_the_grant() -> None:
    """A handler cancelled while awaiting its ticket (client gone) cancels the future before it
    leaves; a grant in between passes it over and the slot goes to the next waiter."""
    a, d = make(max_queue=3, max_in_flight=1)
    gone, next_one = a.enqueue(), a.enqueue()
    gone.future.cancel()
    a.set_ready(True)
    assert next_one.future.done() and not next_one.future.cancelled()
    assert (a.queued, a.in_flight, d.demand()) == (0, 1, 1)
    a.leave(gone)  # its handler's cleanup: nothing left to free
    a.leave(next_one)  # granted but unused: the slot comes back
    assert a.idle and d.demand() == 0


async def test_wait_idle_wakes_when_counts_reach_zero_under_an_unchanged_demand() -> None:
    a, d = make()
    await asyncio.wait_for(a.wait_idle(), 0.1)  # idle already: returns at once
    ticket = a.enqueue()
    d.set_lease_open(True)
    waiter = asyncio.create_task(a.wait_idle())
    await asyncio.sleep(0)
    assert not waiter.done()
    a.leave(ticket)
    assert d.demand() == 1  # queued 1 became the lease's +1: no demand change to notice
    await asyncio.wait_for(waiter, 0.1)


async def test_a_request_held_again_keeps_its_place_and_its_deadline() -> None:
    d = demand.Demand()
    a = admission.Admission(
        max_queue=5, max_in_flight=1, demand=d, max_wait=0.2, wait_expired=lambda: RuntimeError("late")
    )
    loop = asyncio.get_running_loop()
    arrived = loop.time() - 0.15  # arrived earlier, was forwarded, found the backend gone
    later = [a.enqueue(), a.enqueue()]
    again = a.enqueue(arrived_at=arrived)
    older = a.enqueue(arrived_at=arrived - 0.01)  # another one held again, arrived earlier still
    assert a.queued == 4 and d.demand() == 4
    # its wait is bounded from its first arrival: it and the older one expire first, the others wait
    with pytest.raises(RuntimeError, match="late"):
        await asyncio.wait_for(again.future, 1)
    assert older.future.done() and not any(t.future.done() for t in later)
    a.set_ready(True)
    assert later[0].future.done() and not later[1].future.done()  # arrival order for the rest
    with pytest.raises(RuntimeError):
        older.future.result()
