"""Demand: the one number the scalers serve, and how its readers learn that it changed.

A gateway's demand is what its backend must serve: requests queued plus in flight (plus one while an
activation lease is open and nothing is queued). The aggregate scaler's is the sum of its members'
reports. Both are ``DemandSource``s, read by an ExternalScaler (``IsActive``, ``GetMetrics``, the
``StreamIsActive`` push) and by the reporter that publishes a gateway's demand.

Failure contract of a listener, the same on both sides: listeners run synchronously on the event
loop, in subscription order, on every change of the value (never on a write that leaves it
unchanged). A listener that raises is logged with its traceback and stays subscribed; the other
listeners still run and the writer never sees the error — a failing reader cannot undo or fail the
change (an admission, a membership update) that caused it.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import prometheus_client

from noctaya.contract import engines

logger = logging.getLogger(__name__)

Listener = Callable[[int], None]
Unsubscribe = Callable[[], None]


@runtime_checkable
class DemandSource(Protocol):
    """Current effective demand and change notifications (see the module's failure contract)."""

    def demand(self) -> int: ...

    def subscribe(self, listener: Listener) -> Unsubscribe: ...


class DemandSignal:
    """A demand level set by its owner; tells its listeners about every change."""

    __slots__ = ("_listeners", "_next_key", "_value")

    def __init__(self, *, initial: int = 0) -> None:
        if initial < 0:
            raise ValueError(f"demand must be >= 0, got {initial}")
        self._value = initial
        self._listeners: dict[int, Listener] = {}
        self._next_key = 0

    def demand(self) -> int:
        return self._value

    def set(self, value: int) -> None:
        """Set the level; listeners run (synchronously) only when it changed."""
        if value < 0:
            raise ValueError(f"demand must be >= 0, got {value}")
        if value == self._value:
            return
        self._value = value
        for listener in tuple(self._listeners.values()):
            try:
                listener(value)
            except Exception:
                logger.exception("demand listener %r failed; it stays subscribed", listener)

    def subscribe(self, listener: Listener) -> Unsubscribe:
        """Call ``listener(new_demand)`` on every change; the returned callable (idempotent) removes it."""
        key = self._next_key
        self._next_key += 1
        self._listeners[key] = listener

        def unsubscribe() -> None:
            self._listeners.pop(key, None)

        return unsubscribe

    @property
    def listeners(self) -> int:
        """How many listeners are subscribed."""
        return len(self._listeners)


class Sidecar(Protocol):
    """A part that runs beside a gateway for as long as it serves, fed by the gateway's demand: the
    co-located ExternalScaler or the demand reporter. Its metrics go into the gateway's registry.

    The gateway enters the returned context after its own parts have started and leaves it before
    they stop (after its drain), so demand stays served while in-flight requests finish. ``engine`` is
    where a sidecar that reads the engines posts that signal for the gateway's status page."""

    def __call__(
        self,
        *,
        demand: DemandSource,
        registry: prometheus_client.CollectorRegistry,
        engine: engines.Board,
    ) -> contextlib.AbstractAsyncContextManager[None]: ...
