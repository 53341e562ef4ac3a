"""The activation lease: demand that outlives the client who caused it, but not forever.

The first cold admission opens a lease. While it is open, demand is at least 1 even with nothing
queued (a ``reject``-mode client was told to retry; a keepalive client may have left), so the
autoscaler keeps bringing the backend up. The lease ends in one of two ways:

- the backend turns Ready: the lease stays open ``retry_grace`` longer (so a rejected client's retry
  finds the backend warm and the autoscaler does not scale it straight back down), then closes;
- ``activation_timeout`` passes first: the lease expires, every request still waiting ends with
  ``activation_timeout``, and demand drops. A later cold request opens a new lease.

So a model that never loads cannot make the gateway signal demand forever. All timing uses the event
loop's clock and one timer handle; nothing here depends on any client connection.
"""

from __future__ import annotations

import asyncio
import enum

from noctaya.gateway import admission as admission_
from noctaya.gateway import demand as demand_
from noctaya.gateway import errors, metrics


class LeaseState(enum.Enum):
    CLOSED = "closed"
    ACTIVATING = "activating"  # waiting for the backend to turn Ready, until the deadline
    GRACE = "grace"  # Ready seen; closes when the retry grace has passed


class Activation:
    """One lease at a time; opened by cold admissions, closed by readiness or its deadline."""

    def __init__(
        self,
        *,
        timeout: float,
        grace: float,
        demand: demand_.Demand,
        admission: admission_.Admission,
        metrics: metrics.Metrics,
    ) -> None:
        self.timeout = timeout
        self.grace = grace
        self._demand = demand
        self._admission = admission
        self._metrics = metrics
        self._state = LeaseState.CLOSED
        self._opened_at: float | None = None
        self._deadline: float | None = None
        self._timer: asyncio.TimerHandle | None = None

    @property
    def state(self) -> LeaseState:
        return self._state

    @property
    def deadline(self) -> float | None:
        """Loop time at which the lease ends (activation deadline or end of grace); None if closed."""
        return self._deadline

    def ensure_open(self) -> None:
        """A cold request arrived: open a lease unless one is already waiting for activation."""
        if self._state is LeaseState.ACTIVATING:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._cancel_timer()
        self._state = LeaseState.ACTIVATING
        self._opened_at = now
        self._deadline = now + self.timeout
        self._timer = loop.call_at(self._deadline, self._expire)
        self._metrics.activation_started.inc()
        self._demand.set_lease_open(True)

    def backend_ready(self) -> None:
        """The backend turned Ready: an activating lease succeeds and enters its retry grace."""
        if self._state is not LeaseState.ACTIVATING:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._cancel_timer()
        self._metrics.activation_succeeded.inc()
        if self._opened_at is not None:
            self._metrics.activation_duration.observe(now - self._opened_at)
        self._state = LeaseState.GRACE
        self._deadline = now + self.grace
        self._timer = loop.call_at(self._deadline, self._close)

    def close(self) -> None:
        """Stop the timer and drop the lease (shutdown)."""
        self._cancel_timer()
        self._close()

    def _expire(self) -> None:
        self._timer = None
        self._metrics.activation_expired.inc()
        self._close()
        self._admission.fail_waiting(lambda: errors.activation_timeout(self.timeout))

    def _close(self) -> None:
        self._timer = None
        self._state = LeaseState.CLOSED
        self._opened_at = None
        self._deadline = None
        self._demand.set_lease_open(False)

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
