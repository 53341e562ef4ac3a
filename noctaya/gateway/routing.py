"""Routes and the proxied request path: auth, admission, waiting, forwarding.

Every path but the gateway's own (``/healthz``, ``/metrics``, ``/noctaya/…``) is proxied. A cold
route (``cold_routes``: ``GET /v1/models`` by default) is answered by the gateway itself while the
backend is cold, taking no slot and opening no lease; warm, it is proxied like the rest.

One proxied request goes through these steps, each failing fast with an OpenAI-shaped error:

1. draining → 503 ``draining``; bad or missing key (when configured) → 401, before any slot is taken;
   a path with a ``.`` or ``..`` segment (also percent-encoded) → 400, since the client that
   forwards it would resolve it to another backend path; a declared body over
   ``max_body_bytes`` → 413.
2. Backend ready, nobody queued, in-flight below its bound → forwarded at once (warm path).
   Ready but in-flight full → 429 ``overloaded``.
3. Backend cold: ``reject`` mode → 503 + ``Retry-After`` (the activation lease opens anyway).
   ``keepalive`` mode → take a queue slot (full → 429 + ``Retry-After``), open the lease, read the
   body (bounded) to learn ``stream``; a streaming request gets 200 + SSE headers now and a
   ``: keepalive`` comment every heartbeat (from the shared ticker in ``heartbeat``); then wait for
   the slot to be granted (arrival order), at most ``activation_timeout`` from arrival.
4. Forward. A request that provably reached no backend (its connect was refused or timed out: a
   Service with no ready endpoint refuses) marks the backend cold at once and is held again as a cold
   request (step 3: same queue, lease and bounds, its wait still counted from its arrival) at most
   ``connect_retries`` times, then 502. Nothing that may have reached a backend is ever sent again.

Whatever the request holds (queue slot, in-flight slot) is given back in a ``finally``; a client that
leaves cancels its handler (the server runs with ``handler_cancellation``) and frees its slot at once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

from aiohttp import web

from noctaya.contract import gateway as config_
from noctaya.gateway import activation as activation_
from noctaya.gateway import admission as admission_
from noctaya.gateway import auth as auth_
from noctaya.gateway import demand as demand_
from noctaya.gateway import draining as draining_
from noctaya.gateway import errors, keys, metrics, proxy, streaming
from noctaya.gateway import heartbeat as heartbeat_
from noctaya.gateway import readiness as readiness_
from noctaya.gateway import websocket as websocket_
from noctaya.serving import connections

_UNDECLARED_TYPES = frozenset({"application/octet-stream", "text/plain"})
"""Types under which clients that set none send their JSON (aiohttp's default is octet-stream)."""


def _has_dot_segment(path: str) -> bool:
    """``path`` (percent-decoded) has a ``.`` or ``..`` segment."""
    return "." in path and any(segment in (".", "..") for segment in path.split("/"))


def wants_stream(request: web.Request, body: bytes) -> bool:
    """``"stream": true`` in a JSON body, learnt at a bounded cost (``streaming``). A short body
    declared ``application/json`` that does not parse is a 400; one without a declared type that does
    not parse is no stream, and the backend's to judge (as it is on the warm path)."""
    content_type = request.content_type
    declared = content_type == errors.JSON_TYPE
    if not body or not (declared or content_type in _UNDECLARED_TYPES):
        return False
    try:
        return streaming.requests_stream(body, strict=declared)
    except streaming.InvalidJson:
        raise errors.invalid_json() from None


_COLD_METHODS = frozenset({"GET", "HEAD"})
ColdAnswer = Callable[[web.Request], web.Response]


def cold_answers(config: config_.GatewaySettings) -> dict[str, ColdAnswer]:
    """The cold routes by path: what the gateway answers itself while the backend is cold.

    A ``models`` route needs ``served_model``; without it the route is proxied (and wakes the
    backend) like any other."""
    created = int(time.time())
    answers: dict[str, ColdAnswer] = {}
    for route in config.cold_routes:
        if route.answer == "models":
            if config.served_model is None:
                continue
            listing = json.dumps(
                {
                    "object": "list",
                    "data": [
                        {
                            "id": config.served_model,
                            "object": "model",
                            "created": created,
                            "owned_by": "noctaya",
                        }
                    ],
                }
            ).encode()

            def models(_request: web.Request, body: bytes = listing) -> web.Response:
                return web.Response(body=body, content_type=errors.JSON_TYPE, headers=_COLD_HEADERS)

            answers[route.path] = models
        else:

            def status(_request: web.Request, code: int = route.status) -> web.Response:
                return web.Response(status=code, headers=_COLD_HEADERS)

            answers[route.path] = status
    return answers


_COLD_HEADERS = {"Cache-Control": "no-store"}


class Exchange:
    """Per-request state that error handling needs: the SSE response once its headers are out."""

    __slots__ = ("sse",)

    def __init__(self) -> None:
        self.sse: web.StreamResponse | None = None


class ProxyHandler:
    """The ``/v1/{tail}`` handler; holds direct references to the gateway's parts (no lookups)."""

    def __init__(
        self,
        *,
        config: config_.GatewayConfig,
        admission: admission_.Admission,
        activation: activation_.Activation,
        readiness: readiness_.Readiness,
        auth: auth_.KeyFile,
        drain: draining_.Drain,
        metrics: metrics.Metrics,
        upstream: proxy.Upstream,
        heartbeat: heartbeat_.Heartbeat,
        sockets: websocket_.Sockets,
        budget: admission_.ByteBudget,
    ) -> None:
        self.config = config
        self.admission = admission
        self.activation = activation
        self.readiness = readiness
        self.auth = auth
        self.drain = drain
        self.metrics = metrics
        self.upstream = upstream
        self.heartbeat = heartbeat
        self.sockets = sockets
        self.budget = budget
        self.keepalive = config.cold_start_mode == "keepalive"
        self.cold_answers = cold_answers(config)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        route = metrics.route_label(request.path)
        exchange = Exchange()
        try:
            response = await self._handle(request, exchange)
        except errors.GatewayError as exc:
            self.metrics.rejected(exc.reason)
            if exchange.sse is None:
                response = exc.to_response()
                if self.drain.draining:
                    response.force_close()  # send clients elsewhere: no keep-alive while draining
            else:
                response = exchange.sse
                try:
                    await response.write(exc.to_sse())
                    await response.write_eof()
                except (ConnectionError, RuntimeError):
                    pass
        except asyncio.CancelledError:
            self.metrics.request(route, 499)  # client closed the connection
            raise
        except ConnectionError:  # a heartbeat or body write found the client gone
            self.metrics.request(route, 499)
            return exchange.sse if exchange.sse is not None else web.Response(status=499)
        self.metrics.request(route, response.status)
        return response

    async def _handle(self, request: web.Request, exchange: Exchange) -> web.StreamResponse:
        config = self.config
        if self.drain.draining:
            raise errors.draining()
        if self.auth.path is not None and not await self.auth.allows(request.headers.get("Authorization")):
            raise errors.unauthorized()
        if _has_dot_segment(request.path):
            raise errors.invalid_path()
        upgrade = websocket_.wants_upgrade(request)
        if request.method in _COLD_METHODS and not upgrade and not self.admission.ready:
            answer = self.cold_answers.get(request.path)
            if answer is not None:
                return answer(request)
        declared = request.content_length
        if declared is not None and declared > config.max_body_bytes:
            raise errors.too_large(config.max_body_bytes)
        admission = self.admission
        body: bytes | None = None
        charge: admission_.Charge | None = None
        failures = 0
        arrived: float | None = None  # set once a forward found the backend gone
        try:
            while True:
                if admission.try_enter():
                    self.metrics.admitted_warm.inc()
                elif admission.ready:
                    raise errors.overloaded(config.retry_after)
                else:  # cold: queue; the wait is awaited here, not in a helper coroutine (see below)
                    ticket = self._enqueue_cold(exchange, arrived_at=arrived)
                    try:
                        if body is None:
                            charge = admission_.Charge(self.budget)
                            body = await self.upstream.read_body(request, charge=charge)
                        if exchange.sse is None and wants_stream(request, body):
                            exchange.sse = await proxy.start_sse(request)
                        sse = exchange.sse
                        if sse is None:
                            await ticket.future
                        else:
                            self.heartbeat.hold(sse, request=request)
                            try:
                                await ticket.future
                            finally:
                                self.heartbeat.release(sse)
                    except BaseException:
                        admission.leave(ticket)
                        raise
                    self._admitted_cold(ticket)
                if arrived is None:
                    arrived = asyncio.get_running_loop().time()
                try:
                    if upgrade:  # in flight for as long as the socket is open
                        if charge is not None:
                            charge.release()
                        return await self.sockets.relay(
                            request, session=self.upstream.session, base_url=self.upstream.base_url
                        )
                    return await self.upstream.forward(
                        request, body=body, sse=exchange.sse, sent=None if charge is None else charge.release
                    )
                except proxy.ConnectFailed as exc:
                    # nothing reached a backend: stop calling it ready, hold the request like a cold one
                    self.readiness.mark_cold(reason=f"connect to the backend failed ({exc})")
                    failures += 1
                    if failures > config.connect_retries:
                        raise errors.bad_gateway(
                            f"the backend refused {failures} connects in a row"
                        ) from None
                finally:
                    admission.release()
        finally:
            if charge is not None:  # the body has left (or the request ended): its bytes are free
                charge.release()

    # A held request's memory is mostly what its wait keeps alive, for as long as the backend takes to
    # start: every coroutine frame on the stack costs ~270 bytes, a wait with a timeout ~2 KiB. So the
    # wait is a bare ``await ticket.future`` in ``_handle`` itself: the ticket's future is resolved by
    # the grant, or failed by the lease, the drain or the ticket's own deadline (``Admission.max_wait``);
    # heartbeats come from the shared ticker (``heartbeat``). A handler cancelled while awaiting it
    # (client gone) cancels the future too; admission passes such a ticket over until it leaves.

    def _enqueue_cold(self, exchange: Exchange, *, arrived_at: float | None) -> admission_.Ticket:
        """Take a queue slot (or fail fast: reject mode, queue full); the lease opens either way.
        ``arrived_at``: held again after a refused connect, bounded from that first arrival."""
        config = self.config
        if not self.keepalive and exchange.sse is None:
            self.activation.ensure_open()
            raise errors.cold_reject(config.retry_after)
        try:
            ticket = self.admission.enqueue(arrived_at=arrived_at)
        except admission_.QueueFull:
            self.activation.ensure_open()
            raise errors.queue_full(config.retry_after) from None
        self.activation.ensure_open()
        return ticket

    def _admitted_cold(self, ticket: admission_.Ticket) -> None:
        self.admission.settle(ticket)
        self.metrics.admitted_cold.inc()
        self.metrics.activation_wait.observe(asyncio.get_running_loop().time() - ticket.enqueued_at)


def queue_state(app: web.Application) -> dict[str, object]:
    """The body of ``/noctaya/queue``: one gateway's view of its demand."""
    admission = app[keys.ADMISSION]
    lease = app[keys.ACTIVATION]
    demand: demand_.Demand = app[keys.DEMAND]
    config = app[keys.CONFIG]
    deadline = lease.deadline
    remaining = None if deadline is None else max(0.0, deadline - asyncio.get_running_loop().time())
    return {
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
    }


async def queue_handler(request: web.Request) -> web.Response:
    return web.json_response(queue_state(request.app))


async def healthz_handler(request: web.Request) -> web.Response:
    if request.app[keys.DRAIN].draining:
        return web.json_response({"status": "draining"}, status=503)
    return web.json_response({"status": "ok"})


async def metrics_handler(request: web.Request) -> web.Response:
    body = request.app[keys.METRICS].exposition()
    return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})


async def not_found_handler(request: web.Request) -> web.Response:
    request.app[keys.METRICS].rejected(errors.Reason.NOT_FOUND)
    return errors.not_found(request.path).to_response()


def _expectation_failed(request: web.Request) -> web.StreamResponse:
    request.app[keys.METRICS].rejected(errors.Reason.EXPECTATION_FAILED)
    return errors.expectation_failed().to_response()


expect_handler = connections.expect_handler(_expectation_failed)


def _own(
    handler: Callable[[web.Request], Awaitable[web.Response]],
) -> Callable[[web.Request], Awaitable[web.Response]]:
    """A gateway route: GET and HEAD; any other method is the gateway's 405, never proxied."""

    async def route(request: web.Request) -> web.Response:
        if request.method not in _COLD_METHODS:
            request.app[keys.METRICS].rejected(errors.Reason.METHOD_NOT_ALLOWED)
            return errors.method_not_allowed(request.method, request.path).to_response()
        return await handler(request)

    return route


def setup_routes(app: web.Application, *, handler: ProxyHandler) -> None:
    """The gateway's own routes (``/healthz``, ``/metrics``, ``/noctaya/…``); every other path is
    proxied to the backend with admission, authentication and streaming."""
    app.router.add_route("*", "/healthz", _own(healthz_handler), expect_handler=expect_handler)
    app.router.add_route("*", "/metrics", _own(metrics_handler), expect_handler=expect_handler)
    app.router.add_route("*", "/noctaya/queue", _own(queue_handler), expect_handler=expect_handler)
    app.router.add_route("*", "/noctaya/{tail:.*}", not_found_handler, expect_handler=expect_handler)
    app.router.add_route("*", "/{tail:.*}", handler.handle, expect_handler=expect_handler)
