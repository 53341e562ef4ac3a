"""Backend readiness, learnt only by probing the backend's readiness path over HTTP.

While the backend is cold and something waits for it (demand > 0: queued requests or an open
activation lease) the probe runs every ``probe_interval`` (at most 100 ms), so a backend that turns
Ready is used at once; while warm it runs every ``warm_probe_interval``; while cold with no demand
(scaled to zero and idle) every ``idle_probe_interval``, and the first demand wakes it at once. The
proxy reports a failed connect through :meth:`Readiness.mark_cold`, which flips the state at once and
wakes the probe loop so cold-rate probing resumes without waiting out the warm period. Listeners hear
every transition (admission dispatches its queue, the activation lease enters its grace).

A Ready backend whose probe is answered late is busy, not gone: an engine serving its readiness path
on the loop that serves completions answers it behind every request it has queued, and under the load
of another gateway as much as of this one. While the backend is Ready a probe waits for its answer up
to ``warm_probe_timeouts`` times the probe timeout (its connect within one); an answer later than one
timeout, or none at all in that time, is told to ``on_late`` (a metric) and the backend stays Ready
(with ``warm_probe_timeouts`` 1, a timeout takes it out, as a connect that hangs does). It
is not Ready at once when a probe's connect is refused or hangs (a node gone, its address dropping
packets), when the answer is other than 2xx, and when a request could not connect (``mark_cold``). An
engine that hangs whole is the kubelet's to find: its own readiness probe takes the Pod out of the
Service, and the gateway's next connect is refused. A cold backend's probe waits one timeout, and only
a 2xx answer in that time makes it Ready.

What the last probe got is kept in ``last_error`` ("readiness /health answered 404", "readiness
/health failed: connection refused"), shown by ``/noctaya/queue`` and logged once per change, so a
wrong readiness path shows at once instead of looking like a slow start.

Each probe opens a new connection, so it sees what a request's new connection would: a kept-alive
one would go on reaching a Pod that has already left the Service.

No Kubernetes API is involved: the gateway has no credentials and needs none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from urllib.parse import urlsplit

import aiohttp

from noctaya.contract import gateway as gateway_contract

logger = logging.getLogger(__name__)

MAX_PROBE_BODY = 64 * 1024
"""At most this much of a probe's answer is read (to reuse the connection); the status decides."""
FAILED_HEADER = gateway_contract.BACKEND_FAILED_HEADER
"""A readiness answer that is no 2xx and carries this header says the backend failed to start, and
why (``noctaya dev``'s Service answers so for a replica that crash-loops): the activation ends at
once (``Activation.fail``) instead of waiting out ``activationTimeout``."""
MAX_FAILURE_CHARS = gateway_contract.MAX_BACKEND_FAILED_CHARS
"""The reason of :data:`FAILED_HEADER` is cut to this many characters, each outside printable ASCII
replaced by ``?`` (it reaches clients and the log)."""


def failure_reason(value: str) -> str:
    """A :data:`FAILED_HEADER` value as it may reach a client or the log: printable, bounded."""
    printable = "".join(c if " " <= c <= "~" else "?" for c in value[: MAX_FAILURE_CHARS + 1]).strip()
    if len(printable) > MAX_FAILURE_CHARS:
        printable = printable[: MAX_FAILURE_CHARS - 1] + "~"
    return printable or "no reason given"


class Readiness:
    """The probe loop and the current ready flag."""

    def __init__(
        self,
        *,
        url: str,
        cold_interval: float,
        warm_interval: float,
        timeout: float,
        on_change: Callable[[bool], None],
        idle_interval: float | None = None,
        wanted: Callable[[], bool] = lambda: True,
        on_failed: Callable[[str], None] = lambda _reason: None,
        late_limit: int = 1,
        on_late: Callable[[], None] = lambda: None,
    ) -> None:
        self.url = url
        self.path = urlsplit(url).path or "/"
        self.cold_interval = cold_interval
        self.warm_interval = warm_interval
        #: cold and nobody waiting (``wanted()`` is False); ``None``: probe at the cold rate regardless
        self.idle_interval = cold_interval if idle_interval is None else idle_interval
        self._wanted = wanted
        self._seconds = timeout
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        #: a Ready backend's probe: its answer within ``late_limit`` timeouts, its connect within one
        self.warm_timeout = aiohttp.ClientTimeout(total=timeout * late_limit, connect=timeout)
        self._on_change = on_change
        self._on_failed = on_failed  # the backend said it failed to start (FAILED_HEADER)
        self._ready = False
        #: how many probe timeouts a Ready backend's probe waits for its answer
        self.late_limit = late_limit
        self._on_late = on_late  # a Ready backend's probe was answered later than one timeout
        self._wake = asyncio.Event()
        self.last_error: str | None = None  # for the log: may name the backend's address
        self.last_problem: str | None = None  # for /noctaya/queue: the kind of failure, no address

    @property
    def ready(self) -> bool:
        return self._ready

    def mark_cold(self, *, reason: str) -> None:
        """The proxy could not connect: treat the backend as cold until a probe passes again."""
        if self._ready:
            logger.warning("backend marked cold: %s", reason)
            self._outcome(reason, problem="the backend could not be reached")
            self._set(False)
            self._wake.set()

    def wake(self) -> None:
        """Demand appeared: probe now instead of waiting out the idle period."""
        if not self._ready:
            self._wake.set()

    def interval(self) -> float:
        """How long to wait before the next probe, from the current state."""
        if self._ready:
            return self.warm_interval
        return self.cold_interval if self._wanted() else self.idle_interval

    def _set(self, ready: bool) -> None:
        if ready != self._ready:
            self._ready = ready
            self._on_change(ready)

    async def probe_once(self, session: aiohttp.ClientSession) -> bool:
        """One probe: whether the backend is Ready after it (a Ready one's answer may come up to
        ``late_limit`` timeouts late)."""
        warm = self._ready
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with session.get(
                self.url, timeout=self.warm_timeout if warm else self.timeout, allow_redirects=False
            ) as response:
                read = 0
                async for chunk in response.content.iter_any():  # a longer body closes the connection
                    read += len(chunk)
                    if read > MAX_PROBE_BODY:
                        break
                ok = 200 <= response.status < 300
                problem = None if ok else f"readiness {self.path} answered {response.status}"
                failed = None if ok else response.headers.get(FAILED_HEADER)
                reason = None if failed is None else failure_reason(failed)
                if reason is not None:
                    problem = f"{problem}: the backend failed to start ({reason})"
                self._outcome(problem, problem=problem)
                if reason is not None:
                    self._on_failed(reason)
                if ok and warm and (took := loop.time() - started) > self._seconds:
                    self._on_late()  # counted in a metric; logged at debug only (it may recur often)
                    logger.debug(
                        "readiness %s answered late (%.1fs): the backend stays Ready", self.path, took
                    )
                return ok
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            problem = f"readiness {self.path} failed: connection refused or timed out"
            self._outcome(f"{problem} ({type(exc).__name__}: {exc})", problem=problem)
            return False
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            # connected and asked, no answer yet: busy. Only while still Ready (a request's failed
            # connect meanwhile, ``mark_cold``, stands), and only with a wait longer than the connect's
            # (with one timeout for both, aiohttp's overall timer fires first for a connect that hangs)
            if isinstance(exc, TimeoutError) and warm and self._ready and self.late_limit > 1:
                self._on_late()
                logger.debug("readiness %s got no answer in time: the backend stays Ready", self.path)
                return True
            problem = f"readiness {self.path} failed: {type(exc).__name__}"
            self._outcome(f"{problem}: {exc}".rstrip(": "), problem=problem)
            return False

    def _outcome(self, error: str | None, *, problem: str | None) -> None:
        """Keep what the probe got (``error`` for the log, may name the backend's address;
        ``problem`` for /noctaya/queue, no address); log each change once, not every probe period."""
        if problem != self.last_problem:
            if error is not None:
                logger.warning("backend not ready: %s", error)
            elif self.last_problem is not None:
                logger.info("backend readiness %s passes", self.path)
        self.last_error = error
        self.last_problem = problem

    async def run(self, session: aiohttp.ClientSession) -> None:
        """Probe forever (until cancelled)."""
        while True:
            self._set(await self.probe_once(session))
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.interval()):
                    await self._wake.wait()
