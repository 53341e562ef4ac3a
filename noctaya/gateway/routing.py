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
   ``keepalive`` mode → take a queue slot for the request's tenant (the API key when keys are
   configured, else the ``tenant_header`` value, else one tenant for all; full → 429 + ``Retry-After``
   to the tenant holding the most slots, see ``admission``), open the lease, read the body (bounded)
   to learn ``stream``; a streaming request gets 200 + SSE headers now and a ``: keepalive <elapsed>``
   comment every heartbeat (from the shared ticker in ``heartbeat``); then wait for the slot to be
   granted (round-robin over tenants), at most ``activation_timeout`` from arrival. ``Retry-After``
   comes from the activation times this gateway measured (``history``). A WebSocket upgrade is held
   the same way (in its tenant's share), then upgraded.
4. Forward; an answer to a request that waited for a cold start carries ``Noctaya-Cold-Start:
   <seconds waited>`` (a held stream gets a ``: cold start <seconds>`` comment instead, its headers
   being out). A request that provably reached no backend (its connect was refused or timed out: a
   Service with no ready endpoint refuses) marks the backend cold at once and is held again as a cold
   request (step 3: same queue and tenant, same lease and bounds; it keeps its place by arrival and its
   deadline, and its wait is counted from its arrival) at most ``connect_retries`` times, then 502.
   Nothing that may have reached a backend is ever sent again.

A cold route (``cold_routes``: ``GET /v1/models`` answering the served model, ``/health``-style
routes answering a status) is answered by the gateway while the backend is cold: it takes no queue
slot and opens no lease. Warm, it is proxied like any other path.

Every request ends in one access-log line (``accesslog``) and one count in the request metrics.

Whatever the request holds (queue slot, in-flight slot) is given back in a ``finally``; a client that
leaves cancels its handler (the server runs with ``handler_cancellation``) and frees its slot at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from collections.abc import Awaitable, Callable

from aiohttp import web, web_protocol

from noctaya.contract import fields
from noctaya.contract import gateway as config_
from noctaya.gateway import accesslog, errors, history, keys, metrics, proxy, streaming
from noctaya.gateway import activation as activation_
from noctaya.gateway import admission as admission_
from noctaya.gateway import auth as auth_
from noctaya.gateway import demand as demand_
from noctaya.gateway import draining as draining_
from noctaya.gateway import heartbeat as heartbeat_
from noctaya.gateway import readiness as readiness_
from noctaya.gateway import websocket as websocket_
from noctaya.serving import connections

MAX_TENANT_BYTES = 256
"""A tenant header value is cut to this many bytes (hostile clients send anything)."""
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
    """Per-request state that error handling and the access log need: the SSE response once its
    headers are out, the client's WebSocket once upgraded, whether the request met a cold backend,
    and how long it waited in the cold queue (None: it never queued), whether it was granted a slot
    or not."""

    __slots__ = ("cold", "socket", "sse", "wait")

    def __init__(self) -> None:
        self.sse: web.StreamResponse | None = None
        self.socket: web.WebSocketResponse | None = None  # a relayed WebSocket, once upgraded
        self.cold = False
        self.wait: float | None = None

    def upgraded(self, socket: web.WebSocketResponse) -> None:
        self.socket = socket

    def waited(self, *, since: float) -> float:
        """The wait is the time since ``since`` (loop time: the ticket's arrival); return it. A
        request held again after a refused connect keeps its first arrival, so its wait runs from
        there, whatever the attempts in between."""
        self.wait = asyncio.get_running_loop().time() - since
        return self.wait


def tenant_of(request: web.Request, *, keyed: bool, header: str | None) -> str:
    """The request's tenant in the fair queue: a digest of its API key when keys are configured (the
    key itself is never kept), else its ``header`` value (bounded), else the one shared tenant."""
    if keyed:
        authorization = request.headers.get("Authorization", "")
        token = authorization.partition(" ")[2].strip().encode("utf-8", "surrogateescape")
        return "key:" + hashlib.blake2b(token, digest_size=12).hexdigest()
    if header is not None:
        value = request.headers.get(header)
        if value:
            return value.encode("utf-8", "surrogateescape")[:MAX_TENANT_BYTES].decode("utf-8", "replace")
    return ""


def sent_bytes(response: web.StreamResponse) -> int:
    """Body bytes of ``response``: written so far when streamed, else its body's length."""
    if response.prepared:
        return response.body_length
    body = response.body if isinstance(response, web.Response) else None
    return len(body) if isinstance(body, bytes | bytearray) else 0


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
        history: history.ActivationHistory,
        access: accesslog.AccessLog,
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
        self.history = history
        self.access = access
        self.budget = budget
        self.keepalive = config.cold_start_mode == "keepalive"
        self.cold_answers = cold_answers(config)

    def retry_after(self) -> float:
        """Retry-After for a cold refusal now: measured activation time left, or the fixed value."""
        return self.history.retry_after(elapsed=self.activation.elapsed())

    async def handle(self, request: web.Request) -> web.StreamResponse:
        route = metrics.route_label(request.path)
        exchange = Exchange()
        started = asyncio.get_running_loop().time()
        code: str | None = None
        outcome: int | None = None  # the refusal's own status (a held stream's answer is a 200)
        try:
            response = await self._handle(request, exchange)
        except errors.GatewayError as exc:
            code, outcome = exc.code, exc.status
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
            if exchange.socket is not None:  # an upgraded socket the client closed (or left): a 101
                self.metrics.request(route, 101)
                self._log(request, route, exchange, 101, started, code=None, response=exchange.socket)
                raise
            self.metrics.request(route, 499)  # client closed the connection
            self._log(request, route, exchange, 499, started, code="client_closed")
            raise
        except ConnectionError:  # a heartbeat or body write found the client gone
            self.metrics.request(route, 499)
            self._log(request, route, exchange, 499, started, code="client_closed")
            return exchange.sse if exchange.sse is not None else web.Response(status=499)
        self.metrics.request(route, response.status)
        self.metrics.failures.request(status=outcome or response.status, reason=code)
        self._log(request, route, exchange, response.status, started, code=code, response=response)
        return response

    def _log(
        self,
        request: web.Request,
        route: str,
        exchange: Exchange,
        status: int,
        started: float,
        *,
        code: str | None,
        response: web.StreamResponse | None = None,
    ) -> None:
        if not self.access.wants(status, code=code):
            return
        sent = response if response is not None else exchange.sse
        self.access.record(
            status=status,
            method=request.method,
            route=route,
            cold=exchange.cold,
            wait=exchange.wait,
            duration=asyncio.get_running_loop().time() - started,
            sent=0 if sent is None else sent_bytes(sent),
            code=code,
            upgrade=None if exchange.socket is None else "websocket",
        )

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
            if answer is not None:  # no queue slot, no lease: the backend stays as it is
                exchange.cold = True
                return answer(request)
        declared = request.content_length
        if declared is not None and declared > config.max_body_bytes:
            raise errors.too_large(config.max_body_bytes)
        admission = self.admission
        body: bytes | None = None
        charge: admission_.Charge | None = None
        failures = 0
        arrived: float | None = None  # first admission; a request held again keeps it
        try:
            while True:
                if admission.try_enter():
                    self.metrics.admitted_warm.inc()
                    if arrived is None:
                        arrived = asyncio.get_running_loop().time()
                elif admission.ready:
                    raise errors.overloaded(config.retry_after)
                else:  # cold: queue; the wait is awaited here, not in a helper coroutine (see below)
                    ticket = self._enqueue_cold(request, exchange, arrived_at=arrived)
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
                            self.heartbeat.hold(sse, request=request, since=ticket.enqueued_at)
                            try:
                                await ticket.future
                            finally:
                                self.heartbeat.release(sse)
                    except BaseException:
                        exchange.waited(since=ticket.enqueued_at)  # failed or gone, it waited
                        admission.leave(ticket)
                        raise
                    self._admitted_cold(ticket, exchange)
                    if arrived is None:
                        arrived = ticket.enqueued_at
                try:
                    if upgrade:  # in flight for as long as the socket is open
                        if charge is not None:
                            charge.release()
                        return await self.sockets.relay(
                            request,
                            session=self.upstream.session,
                            base_url=self.upstream.base_url,
                            opened=exchange.upgraded,
                        )
                    return await self.upstream.forward(
                        request,
                        body=body,
                        sse=exchange.sse,
                        sent=None if charge is None else charge.release,
                        cold_start=exchange.wait,
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

    def _enqueue_cold(
        self, request: web.Request, exchange: Exchange, *, arrived_at: float | None
    ) -> admission_.Ticket:
        """Take a queue slot (or fail fast: reject mode, queue full); the lease opens either way.
        ``arrived_at``: held again after a refused connect, keeping its place and deadline from
        that first arrival."""
        config = self.config
        exchange.cold = True
        if not self.keepalive and exchange.sse is None:
            self.activation.ensure_open()
            raise errors.cold_reject(self.retry_after())
        tenant = tenant_of(request, keyed=self.auth.enabled, header=config.tenant_header)
        try:
            ticket = self.admission.enqueue(tenant=tenant, arrived_at=arrived_at)
        except admission_.QueueFull:
            self.activation.ensure_open()
            raise errors.queue_full(self.retry_after()) from None
        self.activation.ensure_open()
        return ticket

    def _admitted_cold(self, ticket: admission_.Ticket, exchange: Exchange) -> None:
        self.admission.settle(ticket)
        self.metrics.admitted_cold.inc()
        self.metrics.activation_wait.observe(exchange.waited(since=ticket.enqueued_at))


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
        "warmUntil": _wall(lease.warm_until),
        "failures": app[keys.METRICS].failures.document(),
    }
    engine = app[keys.ENGINE].document()
    if engine is not None:  # this gateway's co-located scaler reads the engines
        state["engine"] = engine
    return state


def _wall(loop_time: float | None) -> str | None:
    """A loop-clock instant as RFC 3339 UTC wall time."""
    if loop_time is None:
        return None
    at = time.time() + (loop_time - asyncio.get_running_loop().time())
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(round(at)))


MAX_WARM_BODY = 4096
"""Largest body ``POST /noctaya/warm`` reads (it takes one field)."""


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
        if auth.enabled and not await auth.allows(request.headers.get("Authorization")):
            raise errors.unauthorized()
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
            "warmUntil": _wall(until),
            "remainingSeconds": max(0.0, until - asyncio.get_running_loop().time()),
            "backendReady": ready,
            "lease": lease.state.value,
        },
        status=202,
    )


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


def _expectation_failed(request: web.Request) -> web.StreamResponse:
    request.app[keys.METRICS].rejected(errors.Reason.EXPECTATION_FAILED)
    return errors.expectation_failed().to_response()


expect_handler = connections.expect_handler(_expectation_failed)


_WARM_METHODS = frozenset({"POST"})


def _own(
    handler: Callable[[web.Request], Awaitable[web.Response]],
    *,
    methods: frozenset[str] = _COLD_METHODS,
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


def setup_routes(app: web.Application, *, handler: ProxyHandler) -> None:
    """The gateway's own routes (``/healthz``, ``/metrics``, ``/noctaya/…``); every other path is
    proxied to the backend with admission, authentication and streaming."""
    app.router.add_route("*", "/healthz", _own(healthz_handler), expect_handler=expect_handler)
    app.router.add_route("*", "/metrics", _own(metrics_handler), expect_handler=expect_handler)
    app.router.add_route("*", "/noctaya/queue", _own(queue_handler), expect_handler=expect_handler)
    app.router.add_route(
        "*", "/noctaya/warm", _own(warm_handler, methods=_WARM_METHODS), expect_handler=expect_handler
    )
    app.router.add_route("*", "/noctaya/{tail:.*}", not_found_handler, expect_handler=expect_handler)
    app.router.add_route("*", "/{tail:.*}", handler.handle, expect_handler=expect_handler)
