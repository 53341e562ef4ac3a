"""Effective demand of one gateway, with change notifications.

Demand is what the autoscaler needs to know: how many requests this gateway holds for the backend.
It is ``queued + in_flight``, plus one while an activation lease is open and nothing is queued, so a
client that was told to come back later (``reject`` mode, or a keepalive client that left) still keeps
the backend coming up until the lease ends.

``Demand`` is a ``noctaya.contract.demand.DemandSource``: the folded value is kept in a
``DemandSignal``, so its listeners (the co-located scaler, the reporter) get the contract's failure
rules. The admission and activation modules are the only writers.
"""

from __future__ import annotations

from noctaya.contract import demand as demand_mod


class Demand:
    """Queued, in-flight and lease state, folded into one number that listeners follow."""

    __slots__ = ("_in_flight", "_lease_open", "_queued", "_signal")

    def __init__(self) -> None:
        self._queued = 0
        self._in_flight = 0
        self._lease_open = False
        self._signal = demand_mod.DemandSignal()

    # ------------------------------------------------------------------ readers
    def demand(self) -> int:
        """Current effective demand (>= 0)."""
        return self._signal.demand()

    @property
    def queued(self) -> int:
        return self._queued

    @property
    def in_flight(self) -> int:
        return self._in_flight

    @property
    def lease_open(self) -> bool:
        return self._lease_open

    def subscribe(self, listener: demand_mod.Listener) -> demand_mod.Unsubscribe:
        """Call ``listener(new_demand)`` on every change; returns the (idempotent) unsubscribe."""
        return self._signal.subscribe(listener)

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
        self._signal.set(queued + self._in_flight + (1 if self._lease_open and queued == 0 else 0))
