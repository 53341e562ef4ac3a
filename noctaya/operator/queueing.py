"""A deduplicating work queue of LLMService keys with a fixed number of workers.

Watch events (the service itself, its owned objects, a runtime it uses) only *mark* a service as needing
a reconcile; the queue holds each key at most once, so a burst of Pod events costs one reconcile, not a
hundred. A key is never processed by two workers at once: a key marked while in flight is processed
again right after. A failed pass is retried with exponential backoff per key (reset by a success);
a pass may also ask to be run again later (``requeue after``). Bounds: at most one entry per key, at most
``workers`` concurrent passes, backoff capped at ``max_backoff``; :attr:`depth` is exported as a metric.
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


class WorkQueue(Generic[K]):
    def __init__(
        self, *, process: Process[K], workers: int, base_backoff: float = 1.0, max_backoff: float = 300.0
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be >= 1")
        if not 0 < base_backoff <= max_backoff:
            raise ValueError("backoff: 0 < base_backoff <= max_backoff must hold")
        self._process = process
        self._workers = workers
        self._base, self._max = base_backoff, max_backoff
        self._max_exponent = max(0, math.ceil(math.log2(max_backoff / base_backoff)))
        self._queue: asyncio.Queue[K] = asyncio.Queue()  # holds each key at most once (see _queued)
        self._queued: set[K] = set()
        self._in_flight: set[K] = set()
        self._dirty: set[K] = set()
        self._timers: dict[K, asyncio.TimerHandle] = {}
        self._failures: dict[K, int] = {}
        self._closed = False
        self.processed = 0  # passes run, for metrics and tests

    @property
    def depth(self) -> int:
        return len(self._queued) + len(self._dirty)

    @property
    def in_flight(self) -> int:
        return len(self._in_flight)

    def add(self, key: K, *, after: float = 0.0) -> None:
        """Mark ``key`` for a reconcile now (or after a delay; the earliest pending time wins)."""
        if self._closed:
            return
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
        self._failures.pop(key, None)
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()

    def _fire(self, key: K) -> None:
        self._timers.pop(key, None)
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
            except Exception:
                failures = self._failures.get(key, 0) + 1
                self._failures[key] = failures
                # the exponent stops growing once the cap is reached (2**1024 would not fit a float)
                delay = min(self._max, self._base * 2 ** min(failures - 1, self._max_exponent))
                logger.exception(
                    "reconcile of %s failed (attempt %d); retrying in %.1fs", key, failures, delay
                )
                again = delay
            else:
                self._failures.pop(key, None)
            finally:
                self.processed += 1
                self._in_flight.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                self.add(key)
            elif again is not None:
                self.add(key, after=again)

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
