"""What a gateway memory limit admits: the one rule ``noctaya validate``, ``noctaya synth`` and the
operator run.

A gateway holds, at most: a baseline (interpreter, libraries, metrics), the bodies of queued cold
requests (``maxQueuedBodyBytes``), the buffers of every open connection (``maxConnections`` x
:data:`CONNECTION_BYTES`) and the messages of every open WebSocket (``websocketMaxOpen`` x
:data:`WEBSOCKET_MESSAGE_COPIES` x ``websocketMaxMessageBytes``). With the defaults that is 864 MiB,
which fits the default 1Gi limit.

:func:`fit` takes a memory limit, the bounds the operator would use (its flags, else the defaults) and
the bounds an LLMService sets itself (``spec.endpoint.*``, pinned). When everything fits, the bounds are
used as they are. When the limit is smaller, the bounds the LLMService does not pin are lowered together,
by one factor, to fit (never below :data:`FLOORS`); the WebSocket part lowers ``websocketMaxOpen`` and
keeps the message size, unless the open count is pinned. Only a limit that cannot hold the pinned bounds
with the others at their floors is refused, with a message naming the limit and every term.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

MIB: Final = 1 << 20
KIB: Final = 1 << 10
#: the gateway process at rest (interpreter, libraries, metrics), measured with some room
BASELINE_BYTES: Final = 96 * MIB
#: one client connection at most: aiohttp's read buffer up to its high-water mark (2 x 64 KiB), the
#: request head (16 KiB), the response relayed from the backend up to its own high-water mark
#: (2 x 64 KiB), and the transport's write buffer
CONNECTION_BYTES: Final = 384 * KIB
#: one open WebSocket at most: a whole message each way, held as received and again as the frame sent
WEBSOCKET_MESSAGE_COPIES: Final = 4
#: the gateway container's memory limit when the LLMService sets no ``spec.endpoint.resources``
DEFAULT_LIMIT: Final = "1Gi"
#: the ceilings of the four bounds (the gateway config's and the LLMService's)
MAX_QUEUED_BODY_BYTES: Final = 16 << 30
MAX_CONNECTIONS: Final = 1_000_000
MAX_MESSAGE_BYTES: Final = 64 * MIB

#: LLMService / config key of each bound, in the order messages name them
KEYS: Final = {
    "max_queued_body_bytes": "maxQueuedBodyBytes",
    "max_connections": "maxConnections",
    "websocket_max_open": "websocketMaxOpen",
    "websocket_max_message_bytes": "websocketMaxMessageBytes",
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class Bounds:
    """The four bounds that decide the gateway's worst-case memory."""

    max_queued_body_bytes: int
    max_connections: int
    websocket_max_open: int
    websocket_max_message_bytes: int

    def worst_case_bytes(self) -> int:
        return (
            BASELINE_BYTES
            + self.max_queued_body_bytes
            + self.max_connections * CONNECTION_BYTES
            + self.websocket_max_open * WEBSOCKET_MESSAGE_COPIES * self.websocket_max_message_bytes
        )

    def describe(self) -> str:
        """Every term of the worst case, for messages."""
        return (
            f"{BASELINE_BYTES // MIB} MiB at rest + maxQueuedBodyBytes {_size(self.max_queued_body_bytes)}"
            f" + maxConnections {self.max_connections} x {CONNECTION_BYTES // KIB} KiB + websocketMaxOpen "
            f"{self.websocket_max_open} x {WEBSOCKET_MESSAGE_COPIES} x websocketMaxMessageBytes "
            f"{_size(self.websocket_max_message_bytes)}"
        )


#: the gateway's defaults (the config file's, ``noctaya gateway``'s and the operator's)
DEFAULTS: Final = Bounds(
    max_queued_body_bytes=128 * MIB,
    max_connections=1024,
    websocket_max_open=16,
    websocket_max_message_bytes=4 * MIB,
)
#: the lowest a bound is lowered to when it is fitted to a limit
FLOORS: Final = Bounds(
    max_queued_body_bytes=1 * MIB,
    max_connections=16,
    websocket_max_open=1,
    websocket_max_message_bytes=64 * KIB,
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Fit:
    """The bounds a gateway runs with under a limit, and which of them were lowered to fit it."""

    bounds: Bounds
    limit: str | None = None
    #: the keys (``maxConnections`` …) lowered from what was asked, in :data:`KEYS` order
    derived: tuple[str, ...] = ()

    def statement(self) -> str | None:
        """One line saying which bounds were derived from the limit, or None when none was."""
        if not self.derived:
            return None
        values = ", ".join(f"{key} {getattr(self.bounds, _attribute(key))}" for key in self.derived)
        return (
            f"bounds derived to fit the gateway memory limit {self.limit} (worst case "
            f"{_size(self.bounds.worst_case_bytes())}): {values}; set them in spec.endpoint to choose "
            "others"
        )


def _attribute(key: str) -> str:
    return next(name for name, k in KEYS.items() if k == key)


def _size(value: int) -> str:
    if value % MIB == 0:
        return f"{value // MIB} MiB"
    if value >= MIB:
        return f"{value / MIB:.1f} MiB"
    return f"{value // KIB} KiB" if value % KIB == 0 else f"{value} bytes"


def _scalable(*, pinned: Mapping[str, int]) -> list[str]:
    """The bounds a fit may lower: each part of the worst case has one that scales it linearly.

    The pinned ones stay.
    """
    scalable = [name for name in ("max_queued_body_bytes", "max_connections") if name not in pinned]
    if "websocket_max_open" not in pinned:
        scalable.append("websocket_max_open")
    elif "websocket_max_message_bytes" not in pinned:
        scalable.append("websocket_max_message_bytes")
    return scalable


def _shortfall(
    *, limit: str | None, floored: Bounds, floors: Mapping[str, int], pinned: Mapping[str, int]
) -> str:
    """Why a memory limit cannot hold the bounds even with the scalable ones at their floors."""
    lowest = ", ".join(f"{KEYS[name]} at its floor {value}" for name, value in floors.items())
    return (
        f"gateway memory limit {limit}: the gateway needs at least {_size(floored.worst_case_bytes())}"
        + (f" (with {lowest})" if lowest else "")
        + f": {floored.describe()}; raise the limit"
        + (" or lower the bounds set in spec.endpoint" if pinned else "")
    )


def _scaled(*, asked: Bounds, floors: Mapping[str, int], limit_bytes: int) -> Bounds:
    """``asked`` with the scalable bounds (the keys of ``floors``) lowered by one factor to fit the limit.

    One that would go below its floor stays there and the others share what is left (at most one more
    round per bound).
    """
    bounds = asked
    free = list(floors)
    while free:
        rest = dataclasses.replace(bounds, **dict.fromkeys(free, 0)).worst_case_bytes()
        wanted = (
            asked.worst_case_bytes() - dataclasses.replace(asked, **dict.fromkeys(free, 0)).worst_case_bytes()
        )
        factor = (limit_bytes - rest) / wanted
        values = {name: int(getattr(asked, name) * factor) for name in free}
        if "max_queued_body_bytes" in values:
            values["max_queued_body_bytes"] -= values["max_queued_body_bytes"] % KIB
        low = [name for name in free if values[name] < floors[name]]
        bounds = dataclasses.replace(bounds, **{name: max(values[name], floors[name]) for name in free})
        free = [name for name in free if name not in low] if low else []
    return bounds


def fit(*, limit_bytes: int | None, limit: str | None, base: Bounds, pinned: Mapping[str, int]) -> Fit:
    """The bounds a gateway with memory limit ``limit_bytes`` (``limit`` as written) runs with.

    ``base``: the bounds where nothing is pinned (the operator's settings); ``pinned``: attribute name ->
    value set by the LLMService. Raises ``ValueError`` when the limit cannot hold the pinned bounds with
    the others at their floors (or when a bound is unknown).
    """
    unknown = set(pinned) - set(KEYS)
    if unknown:
        raise ValueError(f"unknown gateway bounds {sorted(unknown)}")
    asked = dataclasses.replace(base, **dict(pinned))
    if limit_bytes is None or asked.worst_case_bytes() <= limit_bytes:
        return Fit(bounds=asked, limit=limit)
    scalable = _scalable(pinned=pinned)
    floors = {name: min(getattr(FLOORS, name), getattr(asked, name)) for name in scalable}
    floored = dataclasses.replace(asked, **floors)
    if floored.worst_case_bytes() > limit_bytes:
        raise ValueError(_shortfall(limit=limit, floored=floored, floors=floors, pinned=pinned))
    bounds = _scaled(asked=asked, floors=floors, limit_bytes=limit_bytes)
    derived = tuple(key for name, key in KEYS.items() if getattr(bounds, name) != getattr(asked, name))
    return Fit(bounds=bounds, limit=limit, derived=derived)
