"""Bounded admission: a fixed number of cold-queue slots and a fixed in-flight capacity.

Modelled on Knative's breaker: capacity is fixed, a request that cannot be served fails fast
(:class:`QueueFull`, or ``try_enter`` returning False while ready: both 429), and whatever a request
holds is given back through one call in a ``finally``. Two states decide where a request goes:

- backend ready, nobody queued and in-flight below ``max_in_flight``: it enters at once (warm path,
  one counter increment);
- backend not ready: it takes one of ``max_queue`` slots (a :class:`Ticket`) and waits until the
  backend is ready; tickets are granted strictly in arrival order, each grant moving the request from
  the queue to in-flight in one step.

A ticket whose client leaves is removed at once (O(1)); a ticket that was granted but never used
returns its in-flight slot. Counts are mirrored into :class:`~noctaya.gateway.demand.Demand` on
every change, from one place (``_publish``), which also wakes :meth:`Admission.wait_idle`. A drain
cannot follow demand for that: while a lease is open, the last queued request leaving turns
``queued=1`` into ``lease=+1`` and demand stays 1.

With ``max_wait`` set, no ticket waits longer than that from its own arrival: it ends with a fresh
``wait_expired()`` error. Tickets queue in arrival order, so the oldest one always has the earliest
deadline and one timer (at the head's deadline, moved along as the head expires) covers them all:
nothing is allocated per waiter beyond its ticket and future.
"""

from __future__ import annotations

import asyncio
import collections
import enum
from collections.abc import Callable

from noctaya.gateway import demand as demand_


class QueueFull(Exception):
    """All cold-queue slots are taken."""


class TicketState(enum.Enum):
    QUEUED = "queued"
    GRANTED = "granted"  # holds an in-flight slot
    DONE = "done"  # holds nothing


class Ticket:
    """One queued request; ``future`` resolves when it is granted an in-flight slot."""

    __slots__ = ("enqueued_at", "future", "state")

    def __init__(self, *, future: asyncio.Future[None], enqueued_at: float) -> None:
        self.future = future
        self.state = TicketState.QUEUED
        self.enqueued_at = enqueued_at


class Admission:
    """Queue slots + in-flight capacity; the only writer of queued/in-flight demand."""

    def __init__(
        self,
        *,
        max_queue: int,
        max_in_flight: int,
        demand: demand_.Demand,
        max_wait: float | None = None,
        wait_expired: Callable[[], BaseException] = TimeoutError,
    ) -> None:
        self.max_queue = max_queue
        self.max_in_flight = max_in_flight
        self.max_wait = max_wait
        self._wait_expired = wait_expired
        self._demand = demand
        self._queue: collections.OrderedDict[int, Ticket] = collections.OrderedDict()
        self._in_flight = 0
        self._ready = False
        self._expiry: asyncio.TimerHandle | None = None  # at the oldest ticket's deadline
        self._idle: asyncio.Event | None = None  # set (and dropped) when idle; only while awaited

    # ------------------------------------------------------------------ state
    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def ready(self) -> bool:
        return self._ready

    @property
    def idle(self) -> bool:
        return not self._queue and self._in_flight == 0

    async def wait_idle(self) -> None:
        """Return once nothing is queued or in flight."""
        if self.idle:
            return
        if self._idle is None:
            self._idle = asyncio.Event()
        await self._idle.wait()

    def set_ready(self, ready: bool) -> None:
        self._ready = ready
        if ready:
            self._dispatch()

    # ------------------------------------------------------------------ warm path
    def try_enter(self) -> bool:
        """Take an in-flight slot at once if the backend is ready and nobody is waiting."""
        if self._ready and not self._queue and self._in_flight < self.max_in_flight:
            self._in_flight += 1
            self._publish()
            return True
        return False

    def release(self) -> None:
        """Give back an in-flight slot (exactly once per successful ``try_enter`` or grant)."""
        self._in_flight -= 1
        if self._queue and self._ready:
            self._dispatch()  # hands the slot to the oldest waiter; publishes
        else:
            self._publish()

    # ------------------------------------------------------------------ cold path
    def enqueue(self, *, arrived_at: float | None = None) -> Ticket:
        """Take a queue slot or raise :class:`QueueFull`.

        ``arrived_at`` (loop time): a request held again after its forward found the backend gone
        (nothing reached it). It keeps its place by arrival, ahead of every later arrival, and its
        wait stays bounded from that arrival."""
        if len(self._queue) >= self.max_queue:
            raise QueueFull
        loop = asyncio.get_running_loop()
        ticket = Ticket(
            future=loop.create_future(), enqueued_at=loop.time() if arrived_at is None else arrived_at
        )
        queue = self._queue
        queue[id(ticket)] = ticket
        if arrived_at is not None:
            # the few tickets that arrived earlier still (held again too) stay ahead of it
            ahead = []
            for key, other in queue.items():
                if other.enqueued_at > arrived_at or other is ticket:
                    break
                ahead.append(key)
            queue.move_to_end(id(ticket), last=False)
            for key in reversed(ahead):
                queue.move_to_end(key, last=False)
        self._publish()
        if self.max_wait is not None:
            deadline = ticket.enqueued_at + self.max_wait
            if self._expiry is None:
                self._expiry = loop.call_at(deadline, self._expire_overdue)
            elif arrived_at is not None and deadline < self._expiry.when():
                self._expiry.cancel()
                self._expiry = loop.call_at(deadline, self._expire_overdue)
        if self._ready:  # the backend turned ready but in-flight was full: maybe room now
            self._dispatch()
        return ticket

    def leave(self, ticket: Ticket) -> None:
        """The request is over (served, failed or its client left): free what the ticket holds."""
        if ticket.state is TicketState.QUEUED:
            ticket.state = TicketState.DONE
            del self._queue[id(ticket)]
            if not ticket.future.done():
                ticket.future.cancel()
            self._publish()
        elif ticket.state is TicketState.GRANTED:
            ticket.state = TicketState.DONE
            self.release()

    def settle(self, ticket: Ticket) -> None:
        """A granted ticket's slot is now owned by the caller (released later with ``release``)."""
        if ticket.state is TicketState.GRANTED:
            ticket.state = TicketState.DONE

    def fail_waiting(self, make_error: Callable[[], BaseException]) -> int:
        """End every queued ticket with a fresh ``make_error()`` (activation timeout, drain)."""
        failed = 0
        while self._queue:
            _, ticket = self._queue.popitem(last=False)
            ticket.state = TicketState.DONE
            if not ticket.future.done():
                ticket.future.set_exception(make_error())
                failed += 1
        self._publish()
        return failed

    def _dispatch(self) -> None:
        while self._queue and self._in_flight < self.max_in_flight:
            _, ticket = self._queue.popitem(last=False)
            if ticket.future.done():  # its waiter was cancelled (client gone) and has yet to leave
                ticket.state = TicketState.DONE
                continue
            ticket.state = TicketState.GRANTED
            self._in_flight += 1
            ticket.future.set_result(None)
        self._publish()

    def _publish(self) -> None:
        """Mirror the counts into demand (a move from queue to in-flight is one change); wake
        :meth:`wait_idle` when nothing is left."""
        self._demand.set_counts(queued=len(self._queue), in_flight=self._in_flight)
        if self._idle is not None and not self._queue and not self._in_flight:
            self._idle.set()
            self._idle = None

    def _expire_overdue(self) -> None:
        """End every ticket past its deadline (they are at the head), then re-arm for the next."""
        self._expiry = None
        queue = self._queue
        if self.max_wait is None or not queue:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        expired = 0
        while queue:
            ticket = next(iter(queue.values()))
            deadline = ticket.enqueued_at + self.max_wait
            if deadline > now:
                self._expiry = loop.call_at(deadline, self._expire_overdue)
                break
            queue.popitem(last=False)
            ticket.state = TicketState.DONE
            if not ticket.future.done():
                ticket.future.set_exception(self._wait_expired())
            expired += 1
        if expired:
            self._publish()

    def close(self) -> None:
        """Stop the deadline timer (shutdown); waiting tickets are ended by drain or cancellation."""
        if self._expiry is not None:
            self._expiry.cancel()
            self._expiry = None


class ByteBudget:
    """The bytes that queued requests' bodies may hold in memory together (``maxQueuedBodyBytes``).

    A cold request's body is read whole while it waits (to learn ``stream``, and because nothing can
    be forwarded yet); each byte is taken from here first and given back once the body has been sent
    to the backend or the request ends. A body that does not fit is refused (429 + Retry-After), so
    ``max_queue`` bodies of ``max_body_bytes`` cannot add up past what the process may hold.
    """

    def __init__(self, *, limit: int, refusal: Callable[[], BaseException]) -> None:
        self.limit = limit
        self.held = 0
        self._refusal = refusal

    def take(self, size: int) -> bool:
        if self.held + size > self.limit:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held -= size

    def refusal(self) -> BaseException:
        return self._refusal()


class Charge:
    """What one request holds of a :class:`ByteBudget`; released once (idempotent)."""

    __slots__ = ("budget", "size")

    def __init__(self, budget: ByteBudget) -> None:
        self.budget = budget
        self.size = 0

    def grow_to(self, size: int) -> bool:
        """Hold ``size`` bytes in all (more is taken, never less); False if the budget is full."""
        if size <= self.size:
            return True
        if not self.budget.take(size - self.size):
            return False
        self.size = size
        return True

    def release(self) -> None:
        self.budget.give(self.size)
        self.size = 0
