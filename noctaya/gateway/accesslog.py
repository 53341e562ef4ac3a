"""The access log: one structured line per proxied request (logger ``noctaya.gateway.access``).

Each line is one JSON object: ``status``, ``method``, ``route`` (the bounded label of the metrics,
never the raw path or query), ``path`` (``warm`` or ``cold``: whether the request waited for a cold
start), ``wait`` (seconds queued, cold only), ``duration`` (seconds in the gateway), ``bytes`` (body
bytes sent to the client) and, for a refusal, ``code`` (the OpenAI error code). It never carries a
key, a header value or a body. ``accessLog`` chooses: ``off``, ``on`` (every request) or ``errors``
(status 400 and above, and clients that left: 499).
"""

from __future__ import annotations

import json
import logging
from typing import Literal

logger = logging.getLogger("noctaya.gateway.access")

Mode = Literal["off", "on", "errors"]


class AccessLog:
    """Writes the access line of each proxied request, as ``mode`` asks."""

    __slots__ = ("mode",)

    def __init__(self, *, mode: Mode) -> None:
        self.mode = mode

    def wants(self, status: int) -> bool:
        return self.mode == "on" or (self.mode == "errors" and status >= 400)

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
    ) -> None:
        if not self.wants(status) or not logger.isEnabledFor(logging.INFO):
            return
        line: dict[str, object] = {
            "status": status,
            "method": method if len(method) <= 16 else method[:16],
            "route": route,
            "path": "cold" if cold else "warm",
            "wait": None if wait is None else round(wait, 6),
            "duration": round(duration, 6),
            "bytes": sent,
        }
        if code is not None:
            line["code"] = code
        logger.info("%s", json.dumps(line, separators=(",", ":")))
