"""Liveness and metrics over HTTP: ``/healthz`` and ``/metrics`` on the operator's health port.

Served by leaders and standbys alike (a standby is healthy: it is waiting for the Lease).
``/healthz`` answers 200 with ``{"leader": bool, "identity": ...}`` while the operator's main loop is
responsive and its last leadership term did not end in an error; otherwise 503, so the kubelet
restarts a wedged replica.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from noctaya.operator import metrics

StateFn = Callable[[], dict[str, Any]]
STATE: web.AppKey[StateFn] = web.AppKey("state")
METRICS: web.AppKey[metrics.Metrics] = web.AppKey("metrics", metrics.Metrics)


async def _healthz(request: web.Request) -> web.Response:
    state = request.app[STATE]()
    return web.json_response(state, status=200 if state.get("healthy", True) else 503)


async def _metrics(request: web.Request) -> web.Response:
    body = request.app[METRICS].exposition()
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


def make_app(*, state: Callable[[], dict[str, Any]], registry: metrics.Metrics) -> web.Application:
    app = web.Application()
    app[STATE] = state
    app[METRICS] = registry
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/metrics", _metrics)
    return app
