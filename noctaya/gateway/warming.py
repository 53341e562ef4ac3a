"""``POST /noctaya/warm``: hold the backend up for a while without a request.

The body is ``{"duration": "10m"}`` (a Go duration or seconds; empty: ``warm_duration``), at most
:data:`MAX_WARM_BODY` bytes read within ``body_timeout``; the hold is at most ``max_warm_duration``.
Draining and client keys apply as on the proxied path. The call is idempotent: a longer hold extends
the lease's warm-until, a shorter one leaves it.

A hold keeps the backend's accelerators, so who may ask for one is a setting (``warm_access``), and
its default is the safe one: ``key``, a client with an API key, so with no keys configured nobody
can (403 ``warm_forbidden``); ``open`` lets anyone who reaches the gateway ask when no keys are
configured (a key is still needed when they are); ``off`` refuses every hold (the ``warmUntil`` field
still holds the backend up, it is the operator's, not a client's).
"""

from __future__ import annotations

import asyncio
import json
import time

from aiohttp import web, web_protocol

from noctaya.contract import fields
from noctaya.gateway import errors, keys

MAX_WARM_BODY = 4096
"""Largest body ``POST /noctaya/warm`` reads (it takes one field)."""


def wall(loop_time: float | None) -> str | None:
    """A loop-clock instant as RFC 3339 UTC wall time."""
    if loop_time is None:
        return None
    at = time.time() + (loop_time - asyncio.get_running_loop().time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(round(at)))


async def warm_body(request: web.Request, *, within: float) -> bytes:
    """The whole body of ``POST /noctaya/warm``: at most :data:`MAX_WARM_BODY` bytes (413), all of
    it within ``within`` seconds (408), however the client splits it."""
    if request.content_length is not None and request.content_length > MAX_WARM_BODY:
        raise errors.too_large(MAX_WARM_BODY)
    raw = bytearray()
    try:
        async with asyncio.timeout(within):
            while chunk := await request.content.read(MAX_WARM_BODY + 1 - len(raw)):
                raw += chunk
                if len(raw) > MAX_WARM_BODY:  # no Content-Length (chunked), or an inflated body
                    raise errors.too_large(MAX_WARM_BODY)
    except TimeoutError:
        raise errors.body_timeout(within) from None
    except web_protocol.RequestPayloadError:  # a Content-Encoding the body does not follow
        raise errors.invalid_encoding("it does not follow its Content-Encoding") from None
    return bytes(raw)


async def warm_duration(request: web.Request, *, default: float, longest: float, within: float) -> float:
    """The hold asked for: ``{"duration": "10m"}`` (a Go duration or seconds), or ``default``."""
    raw = await warm_body(request, within=within)
    if not raw.strip():
        return default
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        raise errors.invalid_json() from None
    if not isinstance(document, dict) or set(document) - {"duration"}:
        raise errors.invalid_warm('the body must be a JSON object with at most one field, "duration"')
    if "duration" not in document:
        return default
    try:
        seconds = fields.parse_seconds(document["duration"])
    except ValueError as exc:
        raise errors.invalid_warm(f"duration: {exc}") from None
    if not 0 < seconds <= longest:
        raise errors.invalid_warm(
            f"duration: must be above 0 and at most {fields.format_seconds(longest)} (maxWarmDuration)"
        )
    return seconds


async def warm_handler(request: web.Request) -> web.Response:
    """``POST /noctaya/warm``: hold the backend up for a while without a request (idempotent)."""
    app = request.app
    config = app[keys.CONFIG]
    try:
        if app[keys.DRAIN].draining:
            raise errors.draining()
        auth = app[keys.AUTH]
        access = config.warm_access
        if access == "off":
            raise errors.warm_forbidden("warm holds are turned off on this gateway (warmAccess: off)")
        if auth.enabled:
            if not await auth.allows(request.headers.get("Authorization")):
                raise errors.unauthorized()
        elif access == "key":
            raise errors.warm_forbidden(
                "it needs an API key and this gateway has none configured (warmAccess: open allows it "
                "without one)"
            )
        seconds = await warm_duration(
            request,
            default=config.warm_duration,
            longest=config.max_warm_duration,
            within=config.body_timeout,
        )
    except errors.GatewayError as exc:
        app[keys.METRICS].rejected(exc.reason)
        return exc.to_response()
    ready = app[keys.READINESS].ready
    lease = app[keys.ACTIVATION]
    until = lease.warm(seconds=seconds, backend_ready=ready)
    app[keys.METRICS].warm_requests.inc()
    return web.json_response(
        {
            "warmUntil": wall(until),
            "remainingSeconds": max(0.0, until - asyncio.get_running_loop().time()),
            "backendReady": ready,
            "lease": lease.state.value,
        },
        status=202,
    )
