"""Bounded admission: a fixed number of cold-queue slots and a fixed in-flight capacity.

Modelled on Knative's breaker: capacity is fixed, a request that cannot be served fails fast
(:class:`QueueFull`, or ``try_enter`` returning False while ready: both 429), and whatever a request
holds is given back through one call in a ``finally`` (``leave``). Two states decide where a request
goes:

- backend ready, nobody queued and in-flight below ``max_in_flight``: it enters at once (warm path,
  one counter increment);
- backend not ready: it takes one of ``max_queue`` slots (a :class:`Ticket`) and waits until the
  backend is ready; each grant moves one request from the queue to in-flight in one step.

The queue is shared fairly between tenants (the caller names the tenant of each ticket: the API key,
a header, or one tenant for all). Grants go round-robin over the tenants that wait, in arrival order
within one tenant, so a tenant with a thousand queued requests delays another's first one by at most
one grant per waiting tenant. When every slot is taken, the arrival is compared with the tenant that
holds the most slots (longest-queue drop): if that tenant holds more than the arrival's tenant, its
newest ticket is displaced (it ends with ``displaced()``, a 429) and the arrival takes the slot;
otherwise the arrival itself is refused with :class:`QueueFull`. So a refusal always goes to a tenant
holding at least as many slots as any other, which is at least its share ``max_queue / tenants``,
and a tenant under its share always gets a slot. At most ``max_tenants`` tenants are told apart in
the round-robin ring; the arrivals of any further tenant share one overflow tenant (one place in the
ring) until one of the others has no ticket left. Slots are still counted per tenant inside it (its
*members*, at most one per overflow ticket), so the rule above holds for every tenant alike: a
tenant new to a full queue holds nothing and takes a slot whichever tenants wait, and a displacement
in the overflow tenant hits its member holding the most.

A request held again after a refused connect (nothing reached a backend) comes back with its first
arrival time: it takes a slot of its own tenant like any arrival (the same displacement rule), goes
ahead of that tenant's later arrivals in both indexes, and keeps its deadline; a tenant that had no
other ticket waiting goes to the head of the ring, since its turn was given once and lost.

A ticket whose client leaves is removed at once (O(1)); a grant is O(1); only a displacement looks
at every waiting tenant (at most ``max_tenants``, and the overflow tenant's members). A ticket that
was granted but never used returns its in-flight slot. Counts are mirrored into
:class:`~noctaya.gateway.demand.Demand` on every change, from one place (``_publish``), which also
wakes :meth:`Admission.wait_idle`. A drain cannot follow demand for that: while a lease is open, the
last queued request leaving turns ``queued=1`` into ``lease=+1`` and demand stays 1.

With ``max_wait`` set, no ticket waits longer than that from its own arrival: it ends with a fresh
``wait_expired()`` error. Every ticket is also kept in one arrival-order index, so the oldest one
always has the earliest deadline and one timer (at the head's deadline, moved along as the head
expires) covers them all: nothing is allocated per waiter beyond its ticket and future.
"""

from __future__ import annotations

import asyncio
import collections
import enum
from collections.abc import Callable

from noctaya.gateway import demand as demand_

OVERFLOW_TENANT = "\x00overflow"
"""The tenant of arrivals whose own tenant cannot be tracked (``max_tenants`` already wait)."""


class QueueFull(Exception):
    """All cold-queue slots are taken and the arrival's tenant holds at least as many as any other."""


class TicketState(enum.Enum):
    QUEUED = "queued"
    GRANTED = "granted"  # holds an in-flight slot
    DONE = "done"  # holds nothing


class Ticket:
    """One queued request; ``future`` resolves when it is granted an in-flight slot."""

    __slots__ = ("enqueued_at", "future", "member", "state", "tenant")

    def __init__(
        self, *, future: asyncio.Future[None], enqueued_at: float, tenant: str, member: str | None = None
    ) -> None:
        self.future = future
        self.state = TicketState.QUEUED
        self.enqueued_at = enqueued_at
        self.tenant = tenant  # its place in the ring: its own tenant, or the overflow tenant
        self.member = member  # in the overflow tenant: its own tenant


_Queue = collections.OrderedDict[int, Ticket]


def _by_arrival(queue: _Queue, ticket: Ticket) -> None:
    """Move ``ticket`` (just added at the end of ``queue``) back to its place by ``enqueued_at``:
    after every ticket that arrived no later, before every later one. O(tickets ahead of it), which
    for a request held again is the few that arrived before it and still wait."""
    ahead = []
    for key, other in queue.items():
        if other.enqueued_at > ticket.enqueued_at or other is ticket:
            break
        ahead.append(key)
    queue.move_to_end(id(ticket), last=False)
    for key in reversed(ahead):
        queue.move_to_end(key, last=False)


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
        max_tenants: int = 64,
        displaced: Callable[[], BaseException] = QueueFull,
    ) -> None:
        if max_tenants < 1:
            raise ValueError("max_tenants must be at least 1")
        self.max_queue = max_queue
        self.max_in_flight = max_in_flight
        self.max_wait = max_wait
        self.max_tenants = max_tenants
        self._wait_expired = wait_expired
        self._displaced = displaced
        self._demand = demand
        self._queue: _Queue = collections.OrderedDict()  # every queued ticket, in arrival order
        # tenant -> its queued tickets in arrival order; the dict's order is the round-robin ring
        # (the tenant granted next first); a tenant with no ticket left is dropped at once
        self._tenants: dict[str, _Queue] = {}
        # the overflow tenant's tickets by their own tenant (each in arrival order): its members
        self._members: dict[str, _Queue] = {}
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

    @property
    def tenants(self) -> int:
        """Tenants with at least one queued ticket (at most ``max_tenants``, plus the overflow tenant)."""
        return len(self._tenants)

    def queued_by_tenant(self) -> dict[str, int]:
        """Queued tickets per waiting tenant (for diagnostics; O(tenants))."""
        return {tenant: len(queue) for tenant, queue in self._tenants.items()}

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
        """Give back an in-flight slot (exactly once per successful ``try_enter`` or grant; a request
        gives back what it holds with ``leave``)."""
        self._in_flight -= 1
        if self._queue and self._ready:
            self._dispatch()  # hands the slot to the next tenant's oldest waiter; publishes
        else:
            self._publish()

    # ------------------------------------------------------------------ cold path
    def enqueue(self, *, tenant: str = "", arrived_at: float | None = None) -> Ticket:
        """Take a queue slot for ``tenant`` or raise :class:`QueueFull` (see the module docstring).

        ``arrived_at`` (loop time): a request held again after its forward found the backend gone
        (nothing reached it). It keeps its place by arrival, both in its tenant's queue and in the
        arrival index, ahead of every later arrival; its wait stays bounded from that arrival. A
        tenant that has no other ticket waiting takes the head of the round-robin ring: its turn
        was already given once and lost through no fault of its own."""
        tenants = self._tenants
        name = tenant
        if len(self._queue) >= self.max_queue:
            own = tenants.get(name)
            if own is None:
                own = self._members.get(name)
            self._displace_for(len(own) if own is not None else 0)  # raises QueueFull when fair
        # displacing may have dropped the last ticket of a tenant: the ring is looked at after it
        member = None
        if name not in tenants and (len(tenants) >= self.max_tenants or name in self._members):
            # a member stays one until its last overflow ticket is gone: one place per tenant
            tenant, member = OVERFLOW_TENANT, name
        own = tenants.get(tenant)
        loop = asyncio.get_running_loop()
        ticket = Ticket(
            future=loop.create_future(),
            enqueued_at=loop.time() if arrived_at is None else arrived_at,
            tenant=tenant,
            member=member,
        )
        key = id(ticket)
        self._queue[key] = ticket
        if own is None:
            own = tenants[tenant] = collections.OrderedDict()  # joins the ring at its end
            if arrived_at is not None:
                self._ring_to_front(tenant)
        own[key] = ticket
        if member is not None:
            mine = self._members.get(member)
            if mine is None:
                mine = self._members[member] = collections.OrderedDict()
            mine[key] = ticket
            if arrived_at is not None:
                _by_arrival(mine, ticket)
        if arrived_at is not None:
            _by_arrival(self._queue, ticket)
            _by_arrival(own, ticket)
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

    def _ring_to_front(self, tenant: str) -> None:
        """Make ``tenant`` the next one granted (O(tenants), only for a ticket held again)."""
        tenants = self._tenants
        own = tenants.pop(tenant)
        rest = list(tenants.items())
        tenants.clear()
        tenants[tenant] = own
        tenants.update(rest)

    def _displace_for(self, held: int) -> None:
        """The queue is full and the arrival's tenant holds ``held`` slots: displace the newest ticket
        of the tenant holding the most (a member of the overflow tenant counted as its own tenant),
        if that is more than ``held``; else raise QueueFull."""
        longest: _Queue | None = None
        for tenant, queue in self._tenants.items():
            if tenant != OVERFLOW_TENANT and (longest is None or len(queue) > len(longest)):
                longest = queue
        for queue in self._members.values():
            if longest is None or len(queue) > len(longest):
                longest = queue
        if longest is None or len(longest) <= held:
            raise QueueFull
        ticket = next(reversed(longest.values()))
        self._unqueue(ticket)
        ticket.state = TicketState.DONE
        if not ticket.future.done():
            ticket.future.set_exception(self._displaced())

    def leave(self, ticket: Ticket | None) -> None:
        """The request is over (served, failed or its client left): free what it holds, once. None:
        the in-flight slot ``try_enter`` gave it; a ticket: its queue slot while queued, its in-flight
        slot once granted, nothing once done."""
        if ticket is None:
            self.release()
        elif ticket.state is TicketState.QUEUED:
            ticket.state = TicketState.DONE
            self._unqueue(ticket)
            if not ticket.future.done():
                ticket.future.cancel()
            self._publish()
        elif ticket.state is TicketState.GRANTED:
            ticket.state = TicketState.DONE
            self.release()

    def fail_waiting(self, make_error: Callable[[], BaseException]) -> int:
        """End every queued ticket with a fresh ``make_error()`` (activation timeout, drain)."""
        failed = 0
        self._tenants.clear()
        self._members.clear()
        while self._queue:
            _, ticket = self._queue.popitem(last=False)
            ticket.state = TicketState.DONE
            if not ticket.future.done():
                ticket.future.set_exception(make_error())
                failed += 1
        self._publish()
        return failed

    def _unqueue(self, ticket: Ticket) -> None:
        """Remove a queued ticket from every index (O(1))."""
        key = id(ticket)
        del self._queue[key]
        own = self._tenants[ticket.tenant]
        del own[key]
        if not own:
            del self._tenants[ticket.tenant]
        if ticket.member is not None:
            self._leave_members(ticket)

    def _leave_members(self, ticket: Ticket) -> None:
        assert ticket.member is not None
        mine = self._members[ticket.member]
        del mine[id(ticket)]
        if not mine:
            del self._members[ticket.member]

    def _next_ticket(self) -> Ticket:
        """The oldest ticket of the tenant whose turn it is; that tenant moves to the ring's end."""
        tenants = self._tenants
        tenant = next(iter(tenants))
        own = tenants.pop(tenant)
        _, ticket = own.popitem(last=False)
        if own:
            tenants[tenant] = own  # back of the ring
        del self._queue[id(ticket)]
        if ticket.member is not None:
            self._leave_members(ticket)
        return ticket

    def _dispatch(self) -> None:
        while self._queue and self._in_flight < self.max_in_flight:
            ticket = self._next_ticket()
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
            self._unqueue(ticket)
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
