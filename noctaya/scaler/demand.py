"""Demand: the one number the scaler serves, and how it learns that the number changed.

The scaler is the consumer, so it owns the interface (as Knative's activator owns ``Throttler``):
anything with ``demand()`` and ``subscribe()`` can feed an ExternalScaler. The gateway's demand
accounting satisfies it structurally without importing it; the aggregate scaler's membership
satisfies it with the sum of its members' reports.

``DemandSignal`` is the plain in-memory implementation: a settable level that tells its listeners
about every change. The reporter's receiving end, the local runner and the benchmarks use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

Listener = Callable[[int], None]
Unsubscribe = Callable[[], None]


@runtime_checkable
class DemandSource(Protocol):
    """Current effective demand and change notifications.

    ``listener(new_demand)`` is called synchronously on the event loop on every change of demand;
    the callable returned by ``subscribe`` removes the listener (calling it twice is harmless).
    """

    def demand(self) -> int: ...

    def subscribe(self, listener: Listener) -> Unsubscribe: ...


class DemandSignal:
    """A demand level set from outside; notifies listeners synchronously on every change."""

    def __init__(self, *, initial: int = 0) -> None:
        if initial < 0:
            raise ValueError(f"demand must be >= 0, got {initial}")
        self._value = initial
        self._listeners: dict[int, Listener] = {}
        self._next_key = 0

    def demand(self) -> int:
        return self._value

    def set(self, value: int) -> None:
        if value < 0:
            raise ValueError(f"demand must be >= 0, got {value}")
        if value == self._value:
            return
        self._value = value
        notify(self._listeners.values(), value)

    def subscribe(self, listener: Listener) -> Unsubscribe:
        key = self._next_key
        self._next_key += 1
        self._listeners[key] = listener

        def unsubscribe() -> None:
            self._listeners.pop(key, None)

        return unsubscribe


def notify(listeners: Iterable[Listener], value: int) -> None:
    """Call every listener with ``value``; one failing listener does not starve the others."""
    errors: list[Exception] = []
    for listener in list(listeners):
        try:
            listener(value)
        except Exception as exc:
            errors.append(exc)
    if errors:
        raise ExceptionGroup("demand listeners failed", errors)
