"""The gateway's route table: its own endpoints, and every other path proxied.

- ``/healthz``, ``/metrics``, ``/noctaya/queue`` (``endpoints``; GET and HEAD) and
  ``/noctaya/warm`` (``warming``; POST): any other method is the gateway's 405, never proxied;
- any other ``/noctaya/…`` path: the gateway's 404 (``endpoints``);
- everything else: the proxied request path (``handler``), cold routes included (``coldanswers``);
  the common OpenAI paths (:data:`HOT_PATHS`) are routed to it by name, the rest by a catch-all.

Every route answers ``Expect: 100-continue`` the gateway's way (``Expect`` other than that: 417).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from noctaya.gateway import endpoints, errors, keys, warming
from noctaya.gateway import handler as handler_
from noctaya.serving import connections

_READ_METHODS = frozenset({"GET", "HEAD"})
HOT_PATHS = ("/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/models")
"""Proxied paths routed as plain resources: aiohttp finds those by one dictionary lookup, where the
catch-all is found after a walk up the path's parents and a pattern match."""
_WARM_METHODS = frozenset({"POST"})


def _expectation_failed(request: web.Request) -> web.StreamResponse:
    request.app[keys.METRICS].rejected(errors.Reason.EXPECTATION_FAILED)
    return errors.expectation_failed().to_response()


expect_handler = connections.expect_handler(_expectation_failed)


def _own(
    handler: Callable[[web.Request], Awaitable[web.Response]],
    *,
    methods: frozenset[str] = _READ_METHODS,
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A gateway route: ``methods`` only (GET and HEAD unless told); any other method is the
    gateway's 405, never proxied."""
    allow = ", ".join(sorted(methods, key=("GET", "HEAD", "POST").index))

    async def route(request: web.Request) -> web.Response:
        if request.method not in methods:
            request.app[keys.METRICS].rejected(errors.Reason.METHOD_NOT_ALLOWED)
            return errors.method_not_allowed(request.method, request.path, allow=allow).to_response()
        return await handler(request)

    return route


def setup_routes(app: web.Application, *, handler: handler_.ProxyHandler) -> None:
    """The gateway's own routes (``/healthz``, ``/metrics``, ``/noctaya/…``); every other path is
    proxied to the backend with admission, authentication and streaming."""
    add = app.router.add_route
    add("*", "/healthz", _own(endpoints.healthz_handler), expect_handler=expect_handler)
    add("*", "/metrics", _own(endpoints.metrics_handler), expect_handler=expect_handler)
    add("*", "/noctaya/queue", _own(endpoints.queue_handler), expect_handler=expect_handler)
    add(
        "*",
        "/noctaya/warm",
        _own(warming.warm_handler, methods=_WARM_METHODS),
        expect_handler=expect_handler,
    )
    add("*", "/noctaya/{tail:.*}", endpoints.not_found_handler, expect_handler=expect_handler)
    for path in HOT_PATHS:  # the catch-all's own handler, found by one lookup instead of a walk
        add("*", path, handler.handle, expect_handler=expect_handler)
    add("*", "/{tail:.*}", handler.handle, expect_handler=expect_handler)
