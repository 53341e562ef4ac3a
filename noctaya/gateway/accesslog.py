"""The access log: one structured line per proxied request (logger ``noctaya.gateway.access``).

Each line is one JSON object: ``status``, ``method``, ``route`` (the bounded label of the metrics,
never the raw path or query), ``path`` (``warm`` or ``cold``: whether the request met a cold
backend, queued or refused), ``wait`` (seconds in the cold queue, granted or not; None if it never
queued), ``duration`` (seconds in the gateway), ``bytes`` (body
bytes sent to the client), ``upgrade`` (``websocket``, only for a relayed WebSocket: its line is
written once the socket closed, ``duration`` being how long it was open) and, for a refusal,
``code`` (the OpenAI error code). It never carries a
key, a header value or a body. ``accessLog`` chooses: ``off``, ``on`` (every request) or ``errors``
(status 400 and above, clients that left: 499, and every refusal: a held stream that fails after its
200 headers went out is logged with that 200 and the refusal's ``code``).

The log is bounded: at most ``accessLogMaxPerSecond`` lines in any one second of the loop clock (a
flood of refusals must not turn into a flood of log writes); lines over the bound are dropped,
counted in ``noctaya_gateway_access_log_dropped_total`` and reported as ``dropped`` on the next line
written.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Literal

logger = logging.getLogger("noctaya.gateway.access")

Mode = Literal["off", "on", "errors"]


class AccessLog:
    """Writes the access line of each proxied request, as ``mode`` asks."""

    __slots__ = ("_dropped", "_on_drop", "_second", "_written", "max_per_second", "mode")

    def __init__(
        self, *, mode: Mode, max_per_second: int = 1000, on_drop: Callable[[], None] = lambda: None
    ) -> None:
        self.mode = mode
        self.max_per_second = max_per_second
        self._on_drop = on_drop
        self._second = -1  # the loop-clock second lines are being counted in
        self._written = 0
        self._dropped = 0  # since the last line written

    def wants(self, status: int, *, code: str | None = None) -> bool:
        """Whether a request that ended with ``status`` (and refusal ``code``, if any) is logged."""
        return self.mode == "on" or (self.mode == "errors" and (status >= 400 or code is not None))

    def record(
        self,
        *,
        status: int,
        method: str,
        route: str,
        cold: bool,
        wait: float | None,
        duration: float,
        sent: int,
        code: str | None = None,
        upgrade: str | None = None,
    ) -> None:
        if not self.wants(status, code=code) or not logger.isEnabledFor(logging.INFO):
            return
        second = int(asyncio.get_running_loop().time())
        if second != self._second:
            self._second, self._written = second, 0
        if self._written >= self.max_per_second:
            self._dropped += 1
            self._on_drop()
            return
        self._written += 1
        line: dict[str, object] = {
            "status": status,
            "method": method if len(method) <= 16 else method[:16],
            "route": route,
            "path": "cold" if cold else "warm",
            "wait": None if wait is None else round(wait, 6),
            "duration": round(duration, 6),
            "bytes": sent,
        }
        if upgrade is not None:
            line["upgrade"] = upgrade
        if code is not None:
            line["code"] = code
        if self._dropped:
            line["dropped"], self._dropped = self._dropped, 0
        logger.info("%s", json.dumps(line, separators=(",", ":")))
