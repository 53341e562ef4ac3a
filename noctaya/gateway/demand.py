"""Effective demand of one gateway, with change notifications.

Demand is what the autoscaler needs to know: how many requests this gateway holds for the backend.
It is ``queued + in_flight``, plus one while an activation lease is open and nothing is queued, so a
client that was told to come back later (``reject`` mode, or a keepalive client that left) still keeps
the backend coming up until the lease ends.

The object satisfies ``noctaya.scaler.demand.DemandSource`` structurally: ``demand()`` reads the
current value and ``subscribe(listener)`` registers a callback that runs synchronously on the event
loop on every change of the value (never on a write that leaves it unchanged). The admission and
activation modules are the only writers.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)

Listener = Callable[[int], None]


class Demand:
    """Queued, in-flight and lease state, folded into one number that listeners follow."""

    __slots__ = ("_in_flight", "_lease_open", "_listeners", "_queued", "_value")

    def __init__(self) -> None:
        self._queued = 0
        self._in_flight = 0
        self._lease_open = False
        self._value = 0
        self._listeners: list[Listener] = []

    # ------------------------------------------------------------------ readers
    def demand(self) -> int:
        """Current effective demand (>= 0)."""
        return self._value

    @property
    def queued(self) -> int:
        return self._queued

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def lease_open(self) -> bool:
        return self._lease_open

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(new_demand)`` on every change; returns the unsubscribe callable."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):  # already unsubscribed: idempotent
                self._listeners.remove(listener)

        return unsubscribe

    # ------------------------------------------------------------------ writers
    def set_queued(self, value: int) -> None:
        self._queued = value
        self._recompute()

    def set_in_flight(self, value: int) -> None:
        self._in_flight = value
        self._recompute()

    def set_counts(self, *, queued: int, in_flight: int) -> None:
        """Set both counts at once: a request moving from the queue to in-flight is one change."""
        self._queued = queued
        self._in_flight = in_flight
        self._recompute()

    def set_lease_open(self, value: bool) -> None:
        self._lease_open = value
        self._recompute()

    def _recompute(self) -> None:
        queued = self._queued
        value = queued + self._in_flight + (1 if self._lease_open and queued == 0 else 0)
        if value == self._value:
            return
        self._value = value
        for listener in tuple(self._listeners):
            try:
                listener(value)
            except Exception:  # one faulty listener must not break admission for the others
                logger.exception("demand listener %r failed", listener)
