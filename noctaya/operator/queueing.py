"""A deduplicating work queue of LLMService keys with a fixed number of workers.

Watch events (the service itself, its owned objects, a runtime it uses) only *mark* a service as needing
a reconcile; the queue holds each key at most once, so a burst of Pod events costs one reconcile, not a
hundred. A key is never processed by two workers at once: a key marked while in flight is processed
again right after. A pass may ask to be run again later (``requeue after``).

A failed pass — one that raised, or that reported its failure and raised :class:`Failed` — is retried
with exponential backoff per key, and the backoff *holds*: while it runs, marking the key again (a
watch event, a resync) only makes sure the retry happens when the backoff ends, so the logged delay is
the delay applied. A success ends the backoff; so does ``add(key, reset=True)`` (the spec changed: the
next pass is worth running at once). A :class:`Failed` pass has said what happened itself and is
logged here at DEBUG; any other exception is logged with its traceback on the first failure of a
streak and in one line after. Bounds: at most one entry and one timer per key, at most ``workers``
concurrent passes, backoff capped at ``max_backoff``; :attr:`depth` and :attr:`backing_off` are
exported as metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
Process = Callable[[K], Awaitable[float | None]]  # returns "run again after N seconds" or None

logger = logging.getLogger(__name__)


class Failed(Exception):
    """A pass failed in a way it has already reported (status, Event, log): retry it with backoff."""


class WorkQueue(Generic[K]):
    def __init__(
        self,
        *,
        process: Process[K],
        workers: int,
        base_backoff: float = 1.0,
        max_backoff: float = 300.0,
        expected: tuple[type[Exception], ...] = (),
    ) -> None:
        """``expected``: failures of the world rather than of the code (an unreachable API server),
        logged in one line without a traceback."""
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if not 0 < base_backoff <= max_backoff:
            raise ValueError("backoff: 0 < base_backoff <= max_backoff must hold")
        self._process = process
        self._expected = expected
        self._workers = workers
        self._base, self._max = base_backoff, max_backoff
        self._max_exponent = max(0, math.ceil(math.log2(max_backoff / base_backoff)))
        self._queue: asyncio.Queue[K] = asyncio.Queue()  # holds each key at most once (see _queued)
        self._queued: set[K] = set()
        self._in_flight: set[K] = set()
        self._dirty: set[K] = set()
        self._timers: dict[K, asyncio.TimerHandle] = {}
        self._failures: dict[K, int] = {}
        self._holds: dict[K, float] = {}  # key -> loop time its backoff ends
        self._traced: set[K] = set()  # keys whose failure streak has logged its traceback
        self._fresh: set[K] = set()  # reset while in flight: the pass after it starts without backoff
        self._closed = False
        self.processed = 0  # passes run, for metrics and tests

    @property
    def depth(self) -> int:
        return len(self._queued) + len(self._dirty)

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    @property
    def backing_off(self) -> int:
        """Keys waiting for their backoff to end after a failed pass."""
        return len(self._holds)

    def idle(self, key: K) -> bool:
        """Whether nothing is queued, running, timed or held for ``key``: it runs again only when it
        is marked."""
        return not (
            key in self._queued or key in self._in_flight or key in self._dirty or key in self._timers
        )

    def add(self, key: K, *, after: float = 0.0, reset: bool = False) -> None:
        """Mark ``key`` for a reconcile now (or after a delay; the earliest pending time wins). While
        the key backs off, the mark waits for the backoff to end, unless ``reset`` ends the backoff."""
        if self._closed:
            return
        if reset and key in self._in_flight:
            self._fresh.add(key)
        if reset:
            self._failures.pop(key, None)
            if self._holds.pop(key, None) is not None and (timer := self._timers.pop(key, None)):
                timer.cancel()
        hold = self._holds.get(key)
        if hold is not None:
            after = max(after, hold - asyncio.get_running_loop().time())
        if after > 0:
            loop = asyncio.get_running_loop()
            existing = self._timers.get(key)
            due = loop.time() + after
            if existing is not None and existing.when() <= due:
                return
            if existing is not None:
                existing.cancel()
            self._timers[key] = loop.call_at(due, self._fire, key)
            return
        if key in self._in_flight:
            self._dirty.add(key)
            return
        if key not in self._queued:
            self._queued.add(key)
            self._queue.put_nowait(key)

    def forget(self, key: K) -> None:
        """Drop every trace of ``key`` (the object is gone)."""
        self._queued.discard(key)
        self._dirty.discard(key)
        self._fresh.discard(key)
        self._traced.discard(key)
        self._failures.pop(key, None)
        self._holds.pop(key, None)
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()

    def _fire(self, key: K) -> None:
        self._timers.pop(key, None)
        self._holds.pop(key, None)
        self.add(key)

    async def _next(self) -> K:
        while True:
            key = await self._queue.get()
            if key in self._queued:  # else: forgotten while queued
                self._queued.discard(key)
                self._in_flight.add(key)
                return key

    async def _worker(self) -> None:
        while True:
            key = await self._next()
            try:
                again = await self._process(key)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # every failure of a pass is retried
                again = self._failed(key, error)
            else:
                self._failures.pop(key, None)
                self._traced.discard(key)
            finally:
                self.processed += 1
                self._in_flight.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                self.add(key, reset=key in self._fresh)
                self._fresh.discard(key)
            elif again is not None:
                self.add(key, after=again)

    def _failed(self, key: K, error: Exception) -> float:
        """Count the failure, hold the key for its backoff, and say so; the delay until the retry."""
        failures = self._failures.get(key, 0) + 1
        self._failures[key] = failures
        # the exponent stops growing once the cap is reached (2**1024 would not fit a float)
        delay = float(min(self._max, self._base * 2 ** min(failures - 1, self._max_exponent)))
        self._holds[key] = asyncio.get_running_loop().time() + delay
        if isinstance(error, Failed):
            logger.debug(
                "reconcile of %s failed (attempt %d): %s; retrying in %.1fs", key, failures, error, delay
            )
        elif key not in self._traced and not isinstance(error, self._expected):
            self._traced.add(key)  # one traceback per streak: the rest of it is one line per attempt
            logger.exception("reconcile of %s failed (attempt %d); retrying in %.1fs", key, failures, delay)
        else:
            logger.warning(
                "reconcile of %s failed (attempt %d): %s; retrying in %.1fs", key, failures, error, delay
            )
        return delay

    async def run(self) -> None:
        """Run the workers until cancelled; pending timers are dropped on exit."""
        tasks = [
            asyncio.create_task(self._worker(), name=f"reconcile-worker-{i}") for i in range(self._workers)
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            self._closed = True
            for task in tasks:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*tasks, return_exceptions=True)
            for timer in self._timers.values():
                timer.cancel()
            self._timers.clear()
            self._holds.clear()
