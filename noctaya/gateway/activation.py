"""The activation lease: demand that outlives the client who caused it, but not forever.

The first cold admission opens a lease. While it is open, demand is at least 1 even with nothing
queued (a ``reject``-mode client was told to retry; a keepalive client may have left), so the
autoscaler keeps bringing the backend up. The lease ends in one of two ways:

- the backend turns Ready: the lease stays open ``retry_grace`` longer (so a rejected client's retry
  finds the backend warm and the autoscaler does not scale it straight back down), then closes;
- ``activation_timeout`` passes first: the lease expires, every request still waiting ends with
  ``activation_timeout``, and demand drops. A later cold request opens a new lease;
- the backend says it failed to start (its readiness answer carries
  ``readiness.FAILED_HEADER``, as ``noctaya dev``'s Service does for a replica that crash-loops):
  the lease ends at once the same way, every waiting request answered 502 with that reason.

So a model that never loads cannot make the gateway signal demand forever. All timing uses the event
loop's clock and one timer handle; nothing here depends on any client connection.

A warm hold (``POST /noctaya/warm``, or ``warmUntil`` in the config) keeps demand at least 1 until its
own deadline, with no request at all: it opens an activation lease if the backend is cold, and stays
after the lease has closed. Each source (:class:`WarmSource`) has its own hold, and the backend is
held until the latest of them ends. Asking again extends a source's hold to the later deadline (never
shortens it), so a repeated call changes nothing; only :meth:`Activation.release` ends a source's
hold early, and it ends that source's alone (a ``warmUntil`` moved earlier or removed cannot cut short
a hold ``POST /noctaya/warm`` asked for). Every activation writes one log line when it opens, succeeds
(after how long) or expires; each success is observed by the :class:`~noctaya.gateway.history.
ActivationHistory` that computes Retry-After.
"""

from __future__ import annotations

import asyncio
import enum
import logging

from noctaya.gateway import admission as admission_
from noctaya.gateway import demand as demand_
from noctaya.gateway import errors, history, metrics

logger = logging.getLogger(__name__)


class LeaseState(enum.Enum):
    CLOSED = "closed"
    ACTIVATING = "activating"  # waiting for the backend to turn Ready, until the deadline
    GRACE = "grace"  # Ready seen; closes when the retry grace has passed


class WarmSource(enum.Enum):
    """Who asked for a warm hold."""

    REQUEST = "request"  # POST /noctaya/warm
    CONFIG = "config"  # warmUntil in the config file (the LLMService's warm-until annotation)


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
        history: history.ActivationHistory | None = None,
    ) -> None:
        self.timeout = timeout
        self.grace = grace
        self._demand = demand
        self._admission = admission
        self._metrics = metrics
        self._history = history
        self._state = LeaseState.CLOSED
        self._opened_at: float | None = None
        self._deadline: float | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._warm_until: float | None = None  # loop time the last warm hold ends; None: no hold
        self._holds: dict[WarmSource, float] = {}  # loop time each source's hold ends
        self._warm_timer: asyncio.TimerHandle | None = None

    @property
    def state(self) -> LeaseState:
        return self._state

    @property
    def deadline(self) -> float | None:
        """Loop time at which the lease ends (activation deadline or end of grace); None if closed."""
        return self._deadline

    @property
    def warm_until(self) -> float | None:
        """Loop time at which the last warm hold ends; None without one."""
        return self._warm_until

    def hold(self, source: WarmSource) -> float | None:
        """Loop time at which ``source``'s warm hold ends; None without one."""
        return self._holds.get(source)

    def elapsed(self) -> float | None:
        """How long the activation under way has run; None when none is."""
        if self._state is not LeaseState.ACTIVATING or self._opened_at is None:
            return None
        return asyncio.get_running_loop().time() - self._opened_at

    def ensure_open(self, *, cause: str = "a cold request") -> None:
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
        logger.info("activation opened by %s (timeout %gs)", cause, self.timeout)
        self._sync_demand()

    def warm(self, *, seconds: float, backend_ready: bool, source: WarmSource = WarmSource.REQUEST) -> float:
        """Hold demand at 1 or more for ``seconds`` from now (or until a later hold of ``source``
        already ends); opens an activation lease if the backend is cold. Returns the end of the last
        hold (loop time)."""
        until = asyncio.get_running_loop().time() + seconds
        held = self._holds.get(source)
        if held is None or until > held:
            self._holds[source] = until
            self._schedule_warm()
        if not backend_ready:
            self.ensure_open(cause="a warm request")
        self._sync_demand()
        return max(self._holds.values())

    def release(self, source: WarmSource) -> None:
        """End ``source``'s warm hold now; the holds of other sources stay."""
        if self._holds.pop(source, None) is None:
            return
        self._schedule_warm()
        if self._warm_until is None:
            logger.info("warm hold ended")
        self._sync_demand()

    def _schedule_warm(self) -> None:
        """One timer, at the end of the last hold."""
        until = max(self._holds.values(), default=None)
        if until == self._warm_until:
            return
        if self._warm_timer is not None:
            self._warm_timer.cancel()
            self._warm_timer = None
        self._warm_until = until
        if until is not None:
            self._warm_timer = asyncio.get_running_loop().call_at(until, self._end_warm)

    def _end_warm(self) -> None:
        self._warm_timer = None
        self._warm_until = None
        self._holds.clear()  # every hold ends at or before the last one
        logger.info("warm hold ended")
        self._sync_demand()

    def _sync_demand(self) -> None:
        self._demand.set_lease_open(self._state is not LeaseState.CLOSED or self._warm_until is not None)

    def backend_ready(self) -> None:
        """The backend turned Ready: an activating lease succeeds and enters its retry grace."""
        if self._state is not LeaseState.ACTIVATING:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._cancel_timer()
        self._metrics.activation_succeeded.inc()
        if self._opened_at is not None:
            took = now - self._opened_at
            self._metrics.activation_duration.observe(took)
            if self._history is not None:
                self._history.observe(took)
            logger.info("activation succeeded after %.3fs", took)
        self._state = LeaseState.GRACE
        self._deadline = now + self.grace
        self._timer = loop.call_at(self._deadline, self._close)

    def fail(self, reason: str) -> None:
        """The backend failed to start (``reason``, already bounded and printable): an activating
        lease ends now, as an expired one does, its waiting requests answered with the reason."""
        if self._state is not LeaseState.ACTIVATING:
            return
        self._cancel_timer()
        self._metrics.activation_failed.inc()
        self._metrics.failures.activation(reason=f"backend_failed: {reason}")
        self._close()
        failed = self._admission.fail_waiting(
            lambda: errors.bad_gateway(f"the model backend failed to start: {reason}")
        )
        logger.warning(
            "activation failed: the backend failed to start (%s); %d waiting request(s) ended", reason, failed
        )

    def close(self) -> None:
        """Stop the timers and drop the lease and any warm hold (shutdown)."""
        self._cancel_timer()
        if self._warm_timer is not None:
            self._warm_timer.cancel()
            self._warm_timer = None
        self._warm_until = None
        self._holds.clear()
        self._close()

    def _expire(self) -> None:
        self._timer = None
        self._metrics.activation_expired.inc()
        self._metrics.failures.activation(reason=f"activation_timeout: not ready within {self.timeout:g}s")
        self._close()
        failed = self._admission.fail_waiting(lambda: errors.activation_timeout(self.timeout))
        logger.warning(
            "activation expired: the backend was not ready within %gs; %d waiting request(s) ended",
            self.timeout,
            failed,
        )

    def _close(self) -> None:
        self._timer = None
        self._state = LeaseState.CLOSED
        self._opened_at = None
        self._deadline = None
        self._sync_demand()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
