"""Heartbeats for held streaming requests: one ticker for all of them.

A cold streaming request gets its 200 + SSE headers at once and then must see a ``: keepalive``
comment at least every ``heartbeat_interval`` until it is granted, so that clients and proxies in
between do not time the connection out. Rather than a timer per request (a wait with a timeout costs
every held request a waiter future, a set, a timer handle and a closure: about 2 KiB each, held for
the whole wait), the handler registers its response here and simply awaits its admission ticket; one
task writes the comment to every registered response once per interval.

A response whose client is not reading (its transport paused for writing) is skipped for that round:
it already has unsent bytes queued, and a write would make the ticker wait on that one client. So the
ticker never blocks on a client and one round costs one small write per held stream. The registry
holds at most ``max_queue`` responses, since each belongs to a request holding a queue slot.
"""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web

logger = logging.getLogger(__name__)

KEEPALIVE = b": keepalive\n\n"
"""An SSE comment: clients ignore it, every hop sees bytes flowing. A held stream's comments also say
how long it has waited (``: keepalive 12.5s``)."""
SLOTS = 10
"""The interval is cut into this many ticks; a stream is written on one tick per interval."""

Registry = dict[web.StreamResponse, tuple[web.RequestHandler, float]]
"""Held response -> its request's protocol (for the write-paused state) and loop time it arrived."""


class Heartbeat:
    """The held streams and the ticker that keeps them alive.

    Streams are spread over :data:`SLOTS` slots by the time they were held, and the ticker writes one
    slot per ``interval / SLOTS``: each stream still gets one comment per interval (the first one at
    most an interval after it was held), while the writes of a round, and the loop time they take,
    are spread over the interval instead of landing at once.
    """

    def __init__(self, *, interval: float) -> None:
        self.interval = interval
        self._slots: list[Registry] = [{} for _ in range(SLOTS)]
        self._next = 0  # the slot the ticker writes next

    @property
    def held(self) -> int:
        return sum(len(slot) for slot in self._slots)

    def hold(self, response: web.StreamResponse, *, request: web.BaseRequest, since: float) -> None:
        """Send ``response`` a heartbeat every interval until :meth:`release`; each says how long it
        has been since ``since`` (loop time: the request's arrival)."""
        # the slot written last: its next turn is one interval after that write
        self._slots[self._next - 1][response] = (request.protocol, since)

    def release(self, response: web.StreamResponse) -> None:
        """Stop heartbeats on ``response`` (its request was granted, failed or left); idempotent."""
        for slot in self._slots:
            if slot.pop(response, None) is not None:
                return

    async def beat(self) -> int:
        """Write one heartbeat to every held stream that can take it now; returns how many."""
        written = 0
        for slot in self._slots:
            written += await _write(slot)
        return written

    async def run(self) -> None:
        """Tick every ``interval / SLOTS`` on the loop clock, on a fixed schedule (a slow tick does not
        push later ones back; ticks missed entirely are skipped rather than bunched)."""
        loop = asyncio.get_running_loop()
        step = self.interval / len(self._slots)
        due = loop.time() + step
        while True:
            await asyncio.sleep(max(0.0, due - loop.time()))
            slot = self._slots[self._next]
            self._next = (self._next + 1) % len(self._slots)
            if slot:
                await _write(slot)
            due += step
            now = loop.time()
            if due <= now:
                due = now + step


async def _write(held: Registry) -> int:
    written = 0
    now = asyncio.get_running_loop().time()
    for response, (protocol, since) in list(held.items()):
        if protocol.writing_paused or response not in held:
            continue
        try:
            # Completes without suspending: the transport is not paused, so aiohttp's drain (every
            # 64 KiB written) returns at once.
            await response.write(b": keepalive %.1fs\n\n" % (now - since))
        except (ConnectionError, RuntimeError):  # the client is gone; its handler is being cancelled
            held.pop(response, None)
        except Exception:  # one broken stream must not stop the heartbeats of all the others
            logger.exception("heartbeat write failed; the stream gets no more heartbeats")
            held.pop(response, None)
        else:
            written += 1
    return written
