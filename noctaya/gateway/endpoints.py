"""The gateway's own read-only endpoints: ``/healthz``, ``/metrics``, ``/noctaya/queue`` and the
not-found answer of any other ``/noctaya/…`` path. None of them takes a slot, opens a lease or is
authenticated (none shows a key or a backend address)."""

from __future__ import annotations

import asyncio
import os
import time

from aiohttp import web

from noctaya.gateway import demand as demand_
from noctaya.gateway import errors, keys
from noctaya.gateway.warming import wall


def queue_state(app: web.Application) -> dict[str, object]:
    """The body of ``/noctaya/queue``: one gateway's view of its demand."""
    admission = app[keys.ADMISSION]
    lease = app[keys.ACTIVATION]
    demand: demand_.Demand = app[keys.DEMAND]
    config = app[keys.CONFIG]
    deadline = lease.deadline
    remaining = None if deadline is None else max(0.0, deadline - asyncio.get_running_loop().time())
    state: dict[str, object] = {
        "queued": admission.queued,
        "inFlight": admission.in_flight,
        "maxQueue": admission.max_queue,
        "maxInFlight": admission.max_in_flight,
        "demand": demand.demand(),
        "backendReady": app[keys.READINESS].ready,
        "backendError": app[keys.READINESS].last_problem,  # unauthenticated: no backend address
        "lease": {
            "state": lease.state.value,
            "deadline": None if remaining is None else time.time() + remaining,
            "remainingSeconds": remaining,
        },
        "coldStartMode": config.cold_start_mode,
        "draining": app[keys.DRAIN].draining,
        "tenants": admission.tenants,
        "retryAfterSeconds": app[keys.HISTORY].retry_after(elapsed=lease.elapsed()),
        "activationSeconds": app[keys.HISTORY].typical(),
        "warmUntil": wall(lease.warm_until),
        "failures": app[keys.METRICS].failures.document(),
        "servedModels": app[keys.COLD_ANSWERS].models.ids,  # what the backend listed when last Ready
    }
    engine = app[keys.ENGINE].document()
    if engine is not None:  # this gateway's co-located scaler reads the engines
        state["engine"] = engine
    return state


async def queue_handler(request: web.Request) -> web.Response:
    return web.json_response(queue_state(request.app))


async def healthz_handler(request: web.Request) -> web.Response:
    """200 ``{"status": "ok", "pid": N}`` (503 while draining); the pid lets a supervisor tell its own
    process from another one answering on the same port."""
    if request.app[keys.DRAIN].draining:
        return web.json_response({"status": "draining", "pid": os.getpid()}, status=503)
    return web.json_response({"status": "ok", "pid": os.getpid()})


async def metrics_handler(request: web.Request) -> web.Response:
    body = request.app[keys.METRICS].exposition()
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def not_found_handler(request: web.Request) -> web.Response:
    request.app[keys.METRICS].rejected(errors.Reason.NOT_FOUND)
    return errors.not_found(request.path).to_response()
