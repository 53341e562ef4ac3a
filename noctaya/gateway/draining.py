"""Drain: refuse new work, let what was accepted finish, within a bound.

The flag flips ``/healthz`` to 503 (so the Service stops sending traffic) and makes new ``/v1``
requests fail fast with 503 ``draining``. :meth:`Drain.wait_idle` then waits, woken by admission
when its counts reach zero rather than polling, until nothing is queued or in flight or
``drain_timeout`` passes;
whatever is still queued at the end is told ``draining`` (503 or a final SSE event) rather than cut.
The caller (``noctaya.process.gateway``) then stops the server; see its docstring for the full order.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from noctaya.gateway import admission as admission_
from noctaya.gateway import errors

logger = logging.getLogger(__name__)


class Drain:
    def __init__(self, *, admission: admission_.Admission, timeout: float) -> None:
        self.timeout = timeout
        self._admission = admission
        self._draining = False
        self._on_begin: list[Callable[[], None]] = []

    @property
    def draining(self) -> bool:
        return self._draining

    def on_begin(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when draining begins (open WebSockets are closed then)."""
        self._on_begin.append(callback)

    def begin(self) -> None:
        if not self._draining:
            self._draining = True
            for callback in self._on_begin:
                callback()

    async def wait_idle(self, *, within: float | None = None) -> bool:
        """Begin draining and wait until idle; True if idle in time. Leftover queued requests fail."""
        self.begin()
        limit = self.timeout if within is None else within
        try:
            async with asyncio.timeout(limit):
                await self._admission.wait_idle()
            return True
        except TimeoutError:
            left = self._admission.fail_waiting(errors.draining)
            logger.warning(
                "drain timeout (%gs): %d queued request(s) refused, %d still in flight",
                limit,
                left,
                self._admission.in_flight,
            )
            return False
