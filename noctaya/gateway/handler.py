"""The proxied request path: auth, admission, waiting, forwarding.

Every path but the gateway's own (``routing``) comes here. One proxied request goes through these
steps, each failing fast with an OpenAI-shaped error:

1. draining → 503 ``draining``; bad or missing key (when configured) → 401, before any slot is taken;
   a path with a ``.`` or ``..`` segment (also percent-encoded) → 400, since the client that
   forwards it would resolve it to another backend path; a cold route while the backend is cold →
   the gateway's own answer (``coldanswers``: no slot, no lease); a declared body over
   ``max_body_bytes`` → 413.
2. Backend ready, nobody queued, in-flight below its bound → forwarded at once (warm path).
   Ready but in-flight full → 429 ``overloaded``.
3. Backend cold: ``reject`` mode → 503 + ``Retry-After`` (the activation lease opens anyway).
   ``keepalive`` mode → take a queue slot for the request's tenant (``tenant_of``: its client host
   with ``tenant_key: peer``, else the API key when keys are configured, else the ``tenant_header``
   value, else one tenant for all; full → 429 + ``Retry-After``
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

Every request ends in one access-log line (``accesslog``) and one count in the request metrics.

Whatever the request holds (queue slot, in-flight slot) is given back by one ``Admission.leave`` in a
``finally``; a client that leaves cancels its handler (the server runs with ``handler_cancellation``)
and frees its slot at once.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib

from aiohttp import web

from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import accesslog, coldanswers, errors, eventloop, history, metrics, proxy, streaming
from noctaya.gateway import activation as activation_
from noctaya.gateway import admission as admission_
from noctaya.gateway import auth as auth_
from noctaya.gateway import draining as draining_
from noctaya.gateway import heartbeat as heartbeat_
from noctaya.gateway import readiness as readiness_
from noctaya.gateway import websocket as websocket_
from noctaya.serving import bearer
from noctaya.serving import peers as peers_

MAX_TENANT_BYTES = 256
"""A tenant header value is cut to this many bytes (hostile clients send anything)."""
_UNDECLARED_TYPES = frozenset({"application/octet-stream", "text/plain"})
"""Types under which clients that set none send their JSON (aiohttp's default is octet-stream)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Parts:
    """The gateway's parts the proxied path works with, built once by the app factory."""

    config: gateway_contract.GatewayConfig
    admission: admission_.Admission
    activation: activation_.Activation
    readiness: readiness_.Readiness
    auth: auth_.KeyFile
    drain: draining_.Drain
    metrics: metrics.Metrics
    upstream: proxy.Upstream
    heartbeat: heartbeat_.Heartbeat
    sockets: websocket_.Sockets
    history: history.ActivationHistory
    access: accesslog.AccessLog
    budget: admission_.ByteBudget
    peers: peers_.Peers


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


def tenant_of(
    request: web.Request, *, keyed: bool, header: str | None, peers: peers_.Peers, by_peer: bool = False
) -> str:
    """The request's tenant in the fair queue. ``by_peer`` (``tenantKey: peer``): its client host
    (``proxy.peer_of``). Else a digest of its API key when keys are configured (the key itself is
    never kept), else its ``header`` value (bounded), else the one shared tenant.

    A header value is what the client says unless a proxy in front sets it: with trusted proxies
    configured, the header of a request that did not come through one of them is not read, and its
    client host is its tenant instead."""
    if by_peer:
        return "peer:" + proxy.peer_of(request, peers=peers)
    if keyed:
        token = bearer.token(request.headers.get("Authorization")) or b""
        return "key:" + hashlib.blake2b(token, digest_size=12).hexdigest()
    if header is not None:
        if peers.trusted_proxies and not peers.trusted(request.remote or ""):
            return "peer:" + proxy.peer_of(request, peers=peers)
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
    """The handler of every proxied path; keeps direct references to the parts it uses on every
    request (attribute reads, no lookups)."""

    def __init__(self, parts: Parts) -> None:
        self.config = parts.config
        self.admission = parts.admission
        self.activation = parts.activation
        self.readiness = parts.readiness
        self.auth = parts.auth
        self.drain = parts.drain
        self.metrics = parts.metrics
        self.upstream = parts.upstream
        self.heartbeat = parts.heartbeat
        self.sockets = parts.sockets
        self.history = parts.history
        self.access = parts.access
        self.budget = parts.budget
        self.peers = parts.peers
        self.keepalive = parts.config.cold_start_mode == "keepalive"
        self.cold_answers = coldanswers.cold_answers(parts.config)
        self._loop = eventloop.RunningLoop()  # the loop requests are handled on

    def retry_after(self) -> float:
        """Retry-After for a cold refusal now: measured activation time left, or the fixed value."""
        return self.history.retry_after(elapsed=self.activation.elapsed())

    async def handle(self, request: web.Request) -> web.StreamResponse:
        route = metrics.route_label(request.path)
        exchange = Exchange()
        started = self._loop().time()
        code: str | None = None
        outcome: int | None = None  # the refusal's own status (a held stream's answer is a 200)
        try:
            response = await self._handle(request, exchange)
        except errors.GatewayError as exc:
            code, outcome = exc.code, exc.status
            response = await self._refused(exc, exchange)
            if request.content.exception() is not None and not response.prepared:
                # the body failed to parse (a broken Content-Encoding, say): aiohttp closes the
                # connection after this answer, so the answer says so, and the client does not
                # send its next request on a connection that is going away
                response.force_close()
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

    async def _refused(self, exc: errors.GatewayError, exchange: Exchange) -> web.StreamResponse:
        """The answer to a refusal: its error response, or an error event on a held stream whose
        headers are out."""
        self.metrics.rejected(exc.reason)
        if exchange.sse is None:
            response = exc.to_response()
            if self.drain.draining:
                response.force_close()  # send clients elsewhere: no keep-alive while draining
            return response
        try:
            await exchange.sse.write(exc.to_sse())
            await exchange.sse.write_eof()
        except (ConnectionError, RuntimeError):
            pass
        return exchange.sse

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
            duration=self._loop().time() - started,
            sent=0 if sent is None else sent_bytes(sent),
            code=code,
            upgrade=None if exchange.socket is None else "websocket",
        )

    async def _handle(self, request: web.Request, exchange: Exchange) -> web.StreamResponse:
        if self.drain.draining:
            raise errors.draining()
        if self.auth.path is not None and not await self.auth.allows(request.headers.get("Authorization")):
            raise errors.unauthorized()
        upgrade = websocket_.wants_upgrade(request)
        answer = self._cold_answer(request, upgrade=upgrade)
        if answer is not None:  # no queue slot, no lease: the backend stays as it is
            exchange.cold = True
            return answer(request)
        charge: admission_.Charge | None = None
        body: bytes | None = None
        arrived: float | None = None  # first admission; a request held again keeps it
        failures = 0
        try:
            while True:
                ticket = self._enter(request, exchange, arrived_at=arrived)
                try:
                    if ticket is None:  # warm: in flight already
                        if arrived is None:
                            arrived = self._loop().time()
                    else:  # cold: the wait is awaited here, in no coroutine of its own (see below)
                        arrived = ticket.enqueued_at
                        try:
                            if charge is None:
                                charge = admission_.Charge(self.budget)
                                body = await self.upstream.read_body(request, charge=charge)
                            sse = await self._held_stream(request, exchange, body=body, since=arrived)
                            try:
                                await ticket.future
                            finally:
                                if sse is not None:
                                    self.heartbeat.release(sse)
                        except BaseException:
                            exchange.waited(since=arrived)  # failed or gone, it waited
                            raise
                        self._admitted_cold(exchange, since=arrived)
                    return await self._forward(request, exchange, body=body, charge=charge, upgrade=upgrade)
                except proxy.ConnectFailed as exc:
                    failures = self._connect_failed(exc, failures=failures)
                finally:
                    self.admission.leave(ticket)
        finally:
            if charge is not None:  # the body has left (or the request ended): its bytes are free
                charge.release()

    # A held request's memory is mostly what its wait keeps alive, for as long as the backend takes to
    # start: every coroutine frame on the stack costs ~270 bytes, a wait with a timeout ~2 KiB. So the
    # wait is a bare ``await ticket.future`` in ``_handle`` itself: the ticket's future is resolved by
    # the grant, or failed by the lease, the drain or the ticket's own deadline (``Admission.max_wait``);
    # heartbeats come from the shared ticker (``heartbeat``). A handler cancelled while awaiting it
    # (client gone) cancels the future too; admission passes such a ticket over until it leaves.

    def _cold_answer(self, request: web.Request, *, upgrade: bool) -> coldanswers.ColdAnswer | None:
        """The gateway's own answer to a cold route while the backend is cold; refuses a dot segment
        first and a declared body over ``max_body_bytes`` after (so a cold route's answer goes
        before the body bound, as it reads no body)."""
        if _has_dot_segment(request.path):
            raise errors.invalid_path()
        if request.method in coldanswers.METHODS and not upgrade and not self.admission.ready:
            answer = self.cold_answers.get(request.path)
            if answer is not None:
                return answer
        declared = request.content_length
        if declared is not None and declared > self.config.max_body_bytes:
            raise errors.too_large(self.config.max_body_bytes)
        return None

    def _enter(
        self, request: web.Request, exchange: Exchange, *, arrived_at: float | None
    ) -> admission_.Ticket | None:
        """Admission, one way in for every request: None when it entered warm (an in-flight slot
        taken at once), else its cold-queue ticket to await; or a refusal (429 in-flight full while
        ready, reject mode, queue full). A cold request opens the lease whatever happens to it.
        ``arrived_at``: held again after a refused connect, keeping its place and deadline from
        that first arrival. Whatever it returns is given back with ``Admission.leave``."""
        admission = self.admission
        if admission.try_enter():
            self.metrics.admitted_warm.inc()
            return None
        if admission.ready:
            raise errors.overloaded(self.config.retry_after)
        exchange.cold = True
        if not self.keepalive and exchange.sse is None:
            self.activation.ensure_open()
            raise errors.cold_reject(self.retry_after())
        tenant = tenant_of(
            request,
            keyed=self.auth.enabled,
            header=self.config.tenant_header,
            peers=self.peers,
            by_peer=self.config.tenant_key == "peer",
        )
        try:
            ticket = admission.enqueue(tenant=tenant, arrived_at=arrived_at)
        except admission_.QueueFull:
            self.activation.ensure_open()
            raise errors.queue_full(self.retry_after()) from None
        self.activation.ensure_open()
        return ticket

    async def _held_stream(
        self, request: web.Request, exchange: Exchange, *, body: bytes | None, since: float
    ) -> web.StreamResponse | None:
        """A held request that asks for a stream gets its 200 + SSE headers now (once) and the
        shared ticker's heartbeats from ``since`` while it waits (the caller releases it); returns
        that stream, or None."""
        if exchange.sse is None and body is not None and wants_stream(request, body):
            exchange.sse = await proxy.start_sse(request)
        sse = exchange.sse
        if sse is not None:
            self.heartbeat.hold(sse, request=request, since=since)
        return sse

    def _admitted_cold(self, exchange: Exchange, *, since: float) -> None:
        self.metrics.admitted_cold.inc()
        self.metrics.activation_wait.observe(exchange.waited(since=since))

    async def _forward(
        self,
        request: web.Request,
        exchange: Exchange,
        *,
        body: bytes | None,
        charge: admission_.Charge | None,
        upgrade: bool,
    ) -> web.StreamResponse:
        """Forward to the backend, or relay an upgraded WebSocket (in flight for as long as the
        socket is open, its held body's bytes given back first)."""
        if upgrade:
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

    def _connect_failed(self, exc: proxy.ConnectFailed, *, failures: int) -> int:
        """Nothing reached a backend: stop calling it ready, so the request is held like a cold one
        again; the count of such failures in a row, or 502 past ``connect_retries``."""
        self.readiness.mark_cold(reason=f"connect to the backend failed ({exc})")
        failures += 1
        if failures > self.config.connect_retries:
            raise errors.bad_gateway(f"the backend refused {failures} connects in a row") from None
        return failures
