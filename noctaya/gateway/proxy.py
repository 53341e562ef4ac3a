"""The streaming proxy: one request forwarded to the backend, bodies streamed both ways.

- The request body is either bytes the gateway already holds (read on the cold path to learn
  ``stream``, or already complete in the socket buffer) or streamed from the client chunk by chunk,
  bounded in size (``max_body_bytes``) and time (``body_timeout``).
- The response is relayed chunk by chunk as it arrives, so SSE events pass with no added delay; the
  client's backpressure reaches the backend through the socket buffers. A chunked answer from the
  pool to an HTTP/1.1 client passes as it came (:func:`_pass_raw`: its framing checked, no chunk
  decoded or framed again); any other is decoded and written by aiohttp's writer.
- Hop-by-hop headers (RFC 9110 §7.6.1, plus those named in ``Connection``) are dropped both ways,
  and so is the client's ``Expect`` (the gateway answered its ``100-continue`` itself);
  ``X-Forwarded-For`` is extended, ``X-Forwarded-Proto/-Host`` are replaced by what the gateway saw;
  the client's ``Authorization`` is dropped unless ``forward_authorization`` is set.
- The backend has ``backend_header_timeout`` to send its response headers (then 504
  ``backend_timeout``); a ``101 Switching Protocols`` to a request that is no upgrade is a 502 (the
  connection carries something else now, it is closed); a client that stops reading is cut by the
  connection layer's write timeout, and one that left is its own 499 (:class:`ClientLeft`).
- The common case (a plain ``http://host:port`` backend, a body held whole, an ASCII origin-form
  target) goes over the gateway's own keep-alive pool (``backend``: its head built once from the
  bytes the client sent, :func:`pooled_head`, its answer's head parsed by aiohttp's llhttp parser, no
  aiohttp client machinery per request); any other request
  (a streamed body, a backend URL with TLS or a path) over aiohttp's client session.
- Backend connections are pooled. One that carries an event stream is closed after the stream on
  aiohttp's path (see :class:`BackendResponse`); the pool keeps it only once it outlasted a
  probation, learning whether the backend closes such connections (``backend.Pool.put``).
- A connect failure raises :class:`ConnectFailed` (nothing reached the backend, the caller may retry).
  Any later failure is never retried: before the response started it becomes a 502, after it started
  an SSE stream ends with an error event and any other body is cut so the client sees it truncated.
  aiohttp's client would send an idempotent request (GET, HEAD, OPTIONS, TRACE, PUT, DELETE, and so a
  WebSocket upgrade) once more on a fresh connection when the first broke after its write
  (RFC 9112 §9.3.1 allows it, but the backend may have run it): :func:`sent_once`, the backend
  session's middleware, turns those failures into :class:`Unanswered`, which it never retries. The
  one case proven unsent (a pooled connection found closing before its first write) is sent once more
  here, by the caller, for every method alike. The pool retries nothing: a pooled connection found
  closing is dropped before a byte is written to it, and any failure after the write ends the request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator, Callable
from http import HTTPStatus
from typing import Any, Protocol

import aiohttp
from aiohttp import abc, http_writer, web, web_protocol
from multidict import CIMultiDict, CIMultiDictProxy

from noctaya.gateway import admission, backend, errors, eventloop, metrics
from noctaya.serving import peers as peers_

logger = logging.getLogger(__name__)

HTTP_11 = aiohttp.HttpVersion11

HOP_BY_HOP = frozenset(
    h.lower()
    for h in (
        "Connection",
        "Keep-Alive",
        "Proxy-Authenticate",
        "Proxy-Authorization",
        "Proxy-Connection",
        "TE",
        "Trailer",
        "Trailers",
        "Transfer-Encoding",
        "Upgrade",
    )
)
# ``Expect``: the gateway itself answered the client's ``100-continue`` (and holds or streams the
# body); passed on, it would make aiohttp's client wait for the backend's own 100 before sending
# the body, which an engine that never sends one answers with nothing (a backend timeout)
_NOT_FORWARDED = HOP_BY_HOP | {"host", "content-length", "expect"}
_NOT_FORWARDED_NOR_KEY = _NOT_FORWARDED | {"authorization"}
_NOT_RETURNED = HOP_BY_HOP | {"server", "date"}
SSE_TYPE = "text/event-stream"
SMALL_BODY_BYTES = 256 * 1024
"""A request body up to this size (declared) is read whole before it is forwarded, within
``body_timeout``: a client that sends it slowly holds no backend connection meanwhile."""
#: what aiohttp's server inflates on its own (``auto_decompress``); any other encoding it refuses
DECODED_ENCODINGS = frozenset({"gzip", "x-gzip", "deflate", "br", "zstd"})
MAX_ERROR_BODY = 64 * 1024
COLD_START_HEADER = "Noctaya-Cold-Start"
"""On an answer to a request that waited for a cold start: the seconds it waited."""
SSE_HEADERS = {"Content-Type": SSE_TYPE, "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
PIPE_BUFFER = 64 * 1024
"""Bytes the client's transport may hold before a piped relay waits for it to drain (aiohttp's
writer drains at the same mark)."""

_BODY = web.RequestKey("noctaya.gateway.body", bytes)
"""Where a request keeps its body once read whole (it is forwarded again after a refused connect)."""

Reply = aiohttp.ClientResponse | backend.Answer
"""A backend's answer: from the connection pool (``backend``) or from aiohttp's client."""


class Overdue(Protocol):
    """What the backend-header watchdog tells about a request it waited too long for."""

    def overdue(self) -> None: ...


class ConnectFailed(Exception):
    """The backend could not be reached; no byte of the request was sent."""


class Unanswered(aiohttp.ClientConnectionError):
    """The connection broke after the request was (maybe partly) written and before an answer: the
    backend may have run it, so it is never sent again. ``__cause__`` is aiohttp's own error."""


async def sent_once(
    request: aiohttp.ClientRequest, handler: aiohttp.ClientHandlerType
) -> aiohttp.ClientResponse:
    """The backend session's middleware: a request is written at most once. aiohttp's retry loop
    around the middlewares (``ClientSession._request``) sends an idempotent request again after a
    ``ClientOSError`` or ``ServerDisconnectedError`` (connect failures excepted); any other
    ``ClientError`` ends it, so these two become :class:`Unanswered`."""
    try:
        return await handler(request)
    except aiohttp.ClientConnectorError:  # nothing was sent; aiohttp does not retry it either
        raise
    except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError) as exc:
        raise Unanswered(f"{type(exc).__name__}: {exc}") from exc


class ClientLeft(ConnectionError):
    """Writing the answer failed: the client went away (a 499, never the backend's failure)."""


class BodyError(Exception):
    """The client's request body broke a bound while it was being streamed."""

    def __init__(self, error: errors.GatewayError) -> None:
        super().__init__(error.message)
        self.error = error


def decoded(request: web.BaseRequest) -> bool:
    """The server inflated the body (``Content-Encoding`` gzip, deflate...): what is forwarded is the
    decoded body, so the header (and any Content-Length) no longer describes it."""
    encoding = request.headers.get("Content-Encoding")
    return encoding is not None and encoding.strip().lower() in DECODED_ENCODINGS


def _dropped(headers: CIMultiDictProxy[str], *, base: frozenset[str]) -> frozenset[str]:
    """``base`` plus the header names listed in ``Connection`` (lower case): the names not passed on.
    Most messages name none beyond the hop-by-hop ones (``keep-alive``, ``close``): ``base`` itself."""
    values = headers.getall("Connection", None)
    if values is None:
        return base
    named = {token.strip().lower() for value in values for token in value.split(",")}
    return base if named <= base else base | named


def request_headers(request: web.BaseRequest, *, forward_authorization: bool = False) -> CIMultiDict[str]:
    """:func:`forwarded_fields` as text, for aiohttp's client (the pool writes the bytes)."""
    return CIMultiDict(
        (name.decode("utf-8", "surrogateescape"), value.decode("utf-8", "surrogateescape"))
        for name, value in forwarded_fields(request, forward_authorization=forward_authorization)
    )


_NOT_FORWARDED_RAW = frozenset(name.encode() for name in _NOT_FORWARDED)
_NOT_FORWARDED_NOR_KEY_RAW = frozenset(name.encode() for name in _NOT_FORWARDED_NOR_KEY)


def forwarded_fields(request: web.BaseRequest, *, forward_authorization: bool) -> list[tuple[bytes, bytes]]:
    """The header fields the backend gets (:func:`fields_of`) for an aiohttp request."""
    return fields_of(
        request.raw_headers,
        remote=request.remote,
        scheme=request.scheme.encode(),
        host=request.host.encode("utf-8", "surrogateescape"),
        forward_authorization=forward_authorization,
        inflated=decoded(request),
    )


def fields_of(
    raw: tuple[tuple[bytes, bytes], ...],
    *,
    remote: str | None,
    scheme: bytes,
    host: bytes,
    forward_authorization: bool,
    inflated: bool,
) -> list[tuple[bytes, bytes]]:
    """The header fields the backend gets, as the client sent them (``raw``) and in its order: the
    client's minus hop-by-hop ones (those ``Connection`` names included), plus ``X-Forwarded-*``
    (``remote``: the client's address; ``scheme`` and ``host``: what this gateway was asked on).
    ``Authorization`` (the client's key for the gateway) is dropped unless ``forward_authorization``:
    an engine run with its own ``--api-key`` needs it. ``inflated``: the server decoded the body, so
    its ``Content-Encoding`` no longer describes it."""
    dropped = _NOT_FORWARDED_RAW if forward_authorization else _NOT_FORWARDED_NOR_KEY_RAW
    named = [value for name, value in raw if name.lower() == b"connection"]
    if named:  # the names ``Connection`` lists are hop-by-hop too
        tokens = {token.strip().lower() for value in named for token in value.split(b",")}
        if not tokens <= dropped:
            dropped = dropped | tokens
    if inflated:
        dropped = dropped | {b"content-encoding"}
    fields: list[tuple[bytes, bytes]] = []
    previous: list[bytes] = []
    for name, value in raw:
        lower = name.lower()
        if lower.startswith(b"x-forwarded-"):
            if lower == b"x-forwarded-for":
                previous.append(value)  # several lines are one list
        elif lower not in dropped:
            fields.append((name, value))
    if remote:
        previous.append(remote.encode())
    if previous:
        fields.append((b"X-Forwarded-For", b", ".join(previous)))
    # what this gateway saw, never what the client claims (a client could otherwise make the backend
    # build links to, or trust, a host and scheme of its choosing)
    fields.append((b"X-Forwarded-Proto", scheme))
    fields.append((b"X-Forwarded-Host", host))
    return fields


def pooled_head(
    request: web.BaseRequest, *, authority: str, forward_authorization: bool, body: bytes | None
) -> bytes | None:
    """The head of ``request`` as the connection pool writes it (``backend.head_of``), from the
    bytes the client sent (:func:`forwarded_fields`). None when the pool cannot take it (a target
    other than an ASCII origin-form one, which aiohttp's client quotes; a CR or LF that would split
    the head): the caller uses aiohttp's client."""
    target = request.rel_url.raw_path_qs
    if not target.startswith("/") or not target.isascii():
        return None
    return backend.head_of(
        method=request.method.encode(),
        target=target.encode(),
        authority=authority.encode(),
        fields=forwarded_fields(request, forward_authorization=forward_authorization),
        body=body,
    )


def peer_of(request: web.BaseRequest, *, peers: peers_.Peers) -> str:
    """The client host of ``request`` (``noctaya.serving.peers``): its connection's peer, or behind a
    trusted proxy the client its ``X-Forwarded-For`` lines name."""
    lines = request.headers.getall("X-Forwarded-For", None)
    return peers.of_request(request.remote or "", None if lines is None else ", ".join(lines))


CONTROL_IN_VALUE = re.compile(rb"[\x00-\x08\x0a-\x1f\x7f]")
"""A control character other than HTAB, which no field value may hold (RFC 9110, section 5.5).
llhttp's lenient answer parsing lets most of them through; aiohttp's writer refuses them."""

_CONTROL_IN_TEXT = re.compile(CONTROL_IN_VALUE.pattern.decode("latin-1"))


def reason_phrase(status: int, reason: str) -> str:
    """An answer's reason phrase as the client gets it: the backend's when it is visible ASCII text
    (or empty), else the standard one (llhttp lets control characters through, which aiohttp's writer
    refuses, sending nothing at all)."""
    if reason.isascii() and reason.isprintable():
        return reason
    return standard_phrase(status)


def standard_phrase(status: int) -> str:
    """The reason phrase HTTP gives ``status`` ("Unknown" for a code it names none for)."""
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def control_in_header(upstream: Reply) -> errors.GatewayError | None:
    """A 502 for an answer whose header fields hold a control character (see
    :data:`CONTROL_IN_VALUE`), which would reach the client as a broken head; None for any other."""
    for value in upstream.headers.values():
        if _CONTROL_IN_TEXT.search(value) is not None:
            return errors.control_in_header()
    return None


def response_headers(upstream: Reply) -> CIMultiDict[str]:
    incoming = upstream.headers
    dropped = _dropped(incoming, base=_NOT_RETURNED)
    return CIMultiDict([(name, value) for name, value in incoming.items() if name.lower() not in dropped])


async def _stream_body(request: web.BaseRequest, *, limit: int, seconds: float) -> AsyncIterator[bytes]:
    """The client's body, chunk by chunk, within ``limit`` bytes and ``seconds`` overall."""
    deadline = asyncio.get_running_loop().time() + seconds
    total = 0
    content = request.content
    while True:
        try:
            async with asyncio.timeout_at(deadline):
                chunk = await content.readany()
        except TimeoutError:
            raise BodyError(errors.body_timeout(seconds)) from None
        except web_protocol.RequestPayloadError:  # a Content-Encoding the body does not follow
            raise BodyError(errors.invalid_encoding("it does not follow its Content-Encoding")) from None
        if not chunk:
            return
        total += len(chunk)
        if total > limit:
            raise BodyError(errors.too_large(limit))
        yield chunk


def not_sent(exc: Unanswered) -> bool:
    """aiohttp refused the request's first write because the pooled connection was already closing:
    nothing of it left (the one failure after a connect that may be sent again)."""
    failed = exc.__cause__
    cause = None if failed is None else failed.__cause__
    return isinstance(cause, aiohttp.ClientConnectionResetError) and "closing transport" in str(cause)


def _body_error(exc: BaseException) -> BodyError | None:
    """The client's body failure behind a failed send (aiohttp wraps the error its body iterator
    raised, and :func:`sent_once` wraps that), if that is what it was."""
    seen: BaseException | None = exc
    for _ in range(4):  # a short chain: the send's error, aiohttp's, the iterator's
        if seen is None or isinstance(seen, BodyError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


class BackendResponse(aiohttp.ClientResponse):
    """A backend answer (the ``response_class`` of the backend session) whose connection is never
    pooled again once its headers say it carries an event stream: llama.cpp's server closes such a
    connection after the stream without saying so (no ``Connection: close``), and a request written
    to it in that moment is lost after it was sent (a 502, since nothing that may have reached a
    backend is sent again).

    It is decided in :meth:`start`, which reads the headers, whatever the request's body said: a
    stream still running keeps its connection until it ends, then the connection is closed; a stream
    that was over when its headers were read has had its connection given back to the pool inside
    ``start`` already (aiohttp releases a connection the moment its body is complete), so that
    connection is closed at once, before any other request can take it (nothing awaits in between),
    and the pool discards it (a pooled connection that is no longer connected is never reused)."""

    async def start(self, connection: aiohttp.connector.Connection) -> aiohttp.ClientResponse:
        protocol = connection.protocol
        await super().start(connection)
        if protocol is not None and self.content_type == SSE_TYPE:
            if self.connection is None:  # the whole stream came with its headers: already released
                protocol.close()
            else:
                protocol.force_close()  # closed instead of pooled when the stream ends
        return self


class Upstream:
    """Forwards requests to one backend base URL: the common case over the connection pool
    (``pool``, see ``backend``: a backend URL that is a plain ``http://host:port``, a body held whole,
    an origin-form target), any other over a pooled aiohttp client session (``session``; its
    ``response_class`` is :class:`BackendResponse`). Both are set when the app starts (they need a
    running loop)."""

    session: aiohttp.ClientSession
    pool: backend.Pool | None = None

    def __init__(
        self,
        *,
        base_url: str,
        max_body_bytes: int,
        body_timeout: float,
        metrics: metrics.Metrics,
        header_timeout: float,
        forward_authorization: bool = False,
    ) -> None:
        self.base_url = base_url
        self.forward_authorization = forward_authorization
        self.max_body_bytes = max_body_bytes
        self.body_timeout = body_timeout
        self.header_timeout = header_timeout
        self._ttfb = metrics.time_to_first_byte
        # SSE responses being relayed (aiohttp's, or the express lane's passages), with the backend
        # answer each reads from (for ``cut_streams``)
        self._streams: dict[object, Reply] = {}
        self._cut: set[object] = set()
        self._none_left: asyncio.Event | None = None
        # requests waiting for the backend's headers, by task, with their deadline; one watchdog
        # (``watch_headers``) cancels the overdue ones, so a request costs two dict operations, not a
        # timer of its own
        self._awaiting_headers: dict[asyncio.Task[object], float] = {}
        self._overdue: set[asyncio.Task[object]] = set()
        # the same for the express lane's requests, which run in no task: told ``overdue()``
        self._awaiting_passages: dict[Overdue, float] = {}
        self._loop = eventloop.RunningLoop()  # the loop requests are forwarded on

    async def watch_headers(self, *, period: float = 1.0) -> None:
        """Cancel every request that has waited ``header_timeout`` for the backend's headers (checked
        every ``period``: the timeout is honoured to within that)."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(period, self.header_timeout))
            now = loop.time()
            if self.pool is not None:
                self.pool.sweep(now=now)
            for task, deadline in list(self._awaiting_headers.items()):
                if deadline <= now and task not in self._overdue:
                    self._overdue.add(task)
                    task.cancel()
            for waiter, deadline in list(self._awaiting_passages.items()):
                if deadline <= now:
                    del self._awaiting_passages[waiter]
                    waiter.overdue()

    def await_headers(self, waiter: Overdue, *, since: float) -> None:
        """``waiter`` (sent by the express lane, at ``since``) is told ``overdue()`` by the watchdog
        once it waited ``header_timeout`` for the backend's headers, unless :meth:`headers_came`."""
        self._awaiting_passages[waiter] = since + self.header_timeout

    def headers_came(self, waiter: Overdue) -> None:
        self._awaiting_passages.pop(waiter, None)

    @property
    def relaying(self) -> int:
        """SSE streams being relayed now (each until its relay ends, the client's leaving included)."""
        return len(self._streams)

    async def cut_streams(self, *, within: float) -> int:
        """End every SSE stream still being relayed with a final ``draining`` error event (the drain
        timeout has passed): its backend answer is closed, the relay writes the event and ends the
        response. Waits at most ``within`` for the relays to finish; returns how many were cut."""
        streams = list(self._streams.items())
        for response, upstream in streams:
            self._cut.add(response)
            upstream.close()
        if self._streams:
            self._none_left = asyncio.Event()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(within):
                    await self._none_left.wait()
        return len(streams)

    def relaying_stream(self, response: object, upstream: Reply) -> None:
        """``response`` (a relay's own key) relays an SSE body from ``upstream``: :meth:`cut_streams`
        closes it when the drain timeout ends."""
        self._streams[response] = upstream

    def relayed_stream(self, response: object) -> bytes | None:
        """The relay of ``response`` is over; the shutdown event to send if it was cut."""
        self._streams.pop(response, None)
        if not self._streams and self._none_left is not None:
            self._none_left.set()
        if response in self._cut:
            self._cut.discard(response)
            return errors.shutdown_event()
        return None

    async def read_body(self, request: web.Request, *, charge: admission.Charge | None = None) -> bytes:
        """The whole request body, within ``max_body_bytes`` (the app's ``client_max_size``, counted
        after any Content-Encoding is inflated) and ``body_timeout``: a 413 or 408. With ``charge``
        (a queued request) every byte is taken from its budget first; a full budget is a 429."""
        if not request.body_exists:
            return b""
        held: bytes | None = request.get(_BODY)
        if held is not None:  # read already (a request held again after a refused connect)
            if charge is not None and not charge.grow_to(len(held)):
                raise charge.budget.refusal()
            return held
        try:
            if charge is not None:
                return await self._read_charged(request, charge)
            content = request.content
            if content.is_eof():  # all of it has arrived (the usual small request): no timer, no wait
                if content.exception() is not None:
                    return await request.read()  # raises what broke it
                body = content.read_nowait()
                if len(body) > self.max_body_bytes:  # inflated past the bound
                    raise errors.too_large(self.max_body_bytes)
                request[_BODY] = body
                return body
            async with asyncio.timeout(self.body_timeout):
                request[_BODY] = body = await request.read()
                return body
        except TimeoutError:
            raise errors.body_timeout(self.body_timeout) from None
        except web.HTTPRequestEntityTooLarge:
            raise errors.too_large(self.max_body_bytes) from None
        except web_protocol.RequestPayloadError:
            raise errors.invalid_encoding("it does not follow its Content-Encoding") from None

    async def _read_charged(self, request: web.Request, charge: admission.Charge) -> bytes:
        declared = request.content_length
        if declared is not None and not decoded(request) and not charge.grow_to(declared):
            raise charge.budget.refusal()  # before a byte is read
        if request.content.is_eof():  # all of it arrived, or was read already (read() keeps it)
            body = await request.read()
            if not charge.grow_to(len(body)):
                raise charge.budget.refusal()
            request[_BODY] = body
            return body
        chunks: list[bytes] = []
        size = 0
        async with asyncio.timeout(self.body_timeout):
            async for chunk in request.content.iter_any():
                size += len(chunk)
                if size > self.max_body_bytes:
                    raise errors.too_large(self.max_body_bytes)
                if not charge.grow_to(size):
                    raise charge.budget.refusal()
                chunks.append(chunk)
        request[_BODY] = body = b"".join(chunks)
        return body

    async def forward(
        self,
        request: web.Request,
        *,
        body: bytes | None,
        sse: web.StreamResponse | None,
        cold_start: float | None = None,
        sent: Callable[[], None] | None = None,
    ) -> web.StreamResponse:
        """Send ``request`` to the backend and relay the answer; ``sse`` = SSE headers already sent;
        ``cold_start`` = seconds the request waited for a cold start (``Noctaya-Cold-Start``)."""
        content_length: str | None = None  # declared for a streamed body
        data: bytes | AsyncIterator[bytes] | None
        if body is not None:
            data = body
        elif not request.body_exists:
            data = None
        elif request.content.is_eof() or (
            # a small body is read whole first (it follows its headers at once): one write to the
            # backend, and a slow client holds no backend connection while it sends
            request.content_length is not None and request.content_length <= SMALL_BODY_BYTES
        ):
            data = await self.read_body(request)
        else:
            if request.content_length is not None and not decoded(request):
                content_length = str(request.content_length)
            data = _stream_body(request, limit=self.max_body_bytes, seconds=self.body_timeout)
        loop = self._loop()
        started = loop.time()
        task = asyncio.current_task(loop)
        assert task is not None
        self._awaiting_headers[task] = started + self.header_timeout
        try:
            upstream: Reply
            pool = self.pool
            # a body held whole (bytes or none) may take the pool (``type``, not ``isinstance`` against
            # the ``AsyncIterator`` ABC, which costs a microsecond a call)
            head = None
            if pool is not None and (data is None or type(data) is bytes):
                head = pooled_head(
                    request,
                    authority=pool.address.authority,
                    forward_authorization=self.forward_authorization,
                    body=data,
                )
            if head is not None:
                assert pool is not None and (data is None or type(data) is bytes)
                upstream = await pool.request(head, data, head_only=request.method == "HEAD")
            else:
                headers = request_headers(request, forward_authorization=self.forward_authorization)
                if content_length is not None:
                    headers["Content-Length"] = content_length
                upstream = await self._send(self.session, request, headers=headers, data=data)
        except asyncio.CancelledError:
            if task not in self._overdue:
                raise  # the client left (or shutdown)
            self._overdue.discard(task)
            task.uncancel()
            raise errors.backend_timeout(self.header_timeout) from None
        except (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError) as exc:
            raise ConnectFailed(f"{type(exc).__name__}: {exc}") from None
        except backend.Unreached as exc:
            raise ConnectFailed(str(exc)) from None
        except BodyError as exc:
            raise exc.error from None
        except (aiohttp.ClientError, OSError) as exc:
            cause = _body_error(exc)
            if cause is not None:
                raise cause.error from None
            raise errors.bad_gateway(f"the backend failed before answering ({type(exc).__name__})") from None
        finally:
            del self._awaiting_headers[task]
        self._ttfb.observe(loop.time() - started)
        if upstream.status == 101:  # switched protocols unasked: what follows is no HTTP answer
            upstream.close()
            raise errors.bad_gateway("the backend switched protocols on a request that asked no upgrade")
        if sse is None and (refusal := control_in_header(upstream)) is not None:
            upstream.close()
            raise refusal
        if sent is not None:  # the backend answered: the request (and its body) is out
            sent()
        try:
            if sse is not None:
                if cold_start is not None:
                    await _try_write(sse, b": cold start %.3fs\n\n" % cold_start)
                return await self._relay_into_sse(request, upstream, sse)
            return await self._relay(request, upstream, cold_start=cold_start)
        finally:
            upstream.release()

    async def _send(
        self,
        session: aiohttp.ClientSession,
        request: web.Request,
        *,
        headers: CIMultiDict[str],
        data: bytes | AsyncIterator[bytes] | None,
    ) -> aiohttp.ClientResponse:
        target = self.base_url + request.rel_url.raw_path_qs
        # ``raw_path_qs``: the origin-form target even when the client sent the absolute form
        # (``GET http://host/v1/...``), which would otherwise end up in the backend's authority
        try:
            return await session.request(
                request.method, target, headers=headers, data=data, allow_redirects=False
            )
        except Unanswered as exc:
            # a pooled connection the backend had just closed: the first write (headers and a body
            # held in memory go out together) found it closing, so nothing was sent; once more on a
            # fresh connection
            if isinstance(data, AsyncIterator) or not not_sent(exc):
                raise
        return await session.request(
            request.method, target, headers=headers, data=data, allow_redirects=False
        )

    async def _relay(
        self, request: web.Request, upstream: Reply, *, cold_start: float | None
    ) -> web.StreamResponse:
        headers = response_headers(upstream)
        if cold_start is not None:
            headers[COLD_START_HEADER] = f"{cold_start:.3f}"
        # an HTTP/1.0 client takes no chunked framing: its answer is decoded (and one whole already
        # is sent with a Content-Length below, as any other)
        raw = isinstance(upstream, backend.Answer) and upstream.raw and request.version >= HTTP_11
        if not raw and upstream.content.is_eof() and request.method != "HEAD":
            # The whole body arrived with the headers (typical of small answers): nothing to wait
            # for, so send headers and body in one write instead of streaming chunk by chunk.
            headers.popall("Content-Length", None)
            return web.Response(
                status=upstream.status,
                reason=reason_phrase(upstream.status, upstream.reason or ""),
                headers=headers,
                body=upstream.content.read_nowait(),
            )
        response = Relayed(
            status=upstream.status,
            reason=reason_phrase(upstream.status, upstream.reason or ""),
            headers=headers,
        )
        if raw and isinstance(upstream, backend.Answer) and upstream.connection.waiting:
            # the first chunks came with the head: it leaves with them, in one write (aiohttp's
            # streamed answer writes its head at once otherwise; left as it is where this is gone)
            response._send_headers_immediately = False
        is_sse = upstream.content_type == SSE_TYPE
        await response.prepare(request)
        if is_sse:
            self.relaying_stream(response, upstream)
        try:
            failure = await _relay_body(request, upstream, response)
        except BaseException:  # the client left: a failed write, or its handler cancelled
            if is_sse:
                self.relayed_stream(response)
            raise
        failed = failure is not None
        if failure is not None and (not is_sse or response.torn):
            # cut the connection: the client must not take a truncated body for a whole one
            logger.warning("backend failed mid-response on %s: %s", request.path, failure)
            response.force_close()
            if request.transport is not None:
                request.transport.abort()
            return response
        if is_sse:
            final = self.relayed_stream(response)
            if response.whole:  # its end is written: nothing may follow it (a cut came too late)
                final = None
            elif final is None and failed:
                logger.warning("backend failed mid-stream on %s", request.path)
                final = errors.backend_failed_event()
            if final is not None:
                await _try_write(response, final)
        await _try_write_eof(response)
        return response

    async def _relay_into_sse(
        self, request: web.Request, upstream: Reply, sse: web.StreamResponse
    ) -> web.StreamResponse:
        """Headers (200, SSE) were sent while the request was queued: relay events or one error event."""
        if upstream.status == 200 and upstream.content_type == SSE_TYPE:
            self.relaying_stream(sse, upstream)
            try:
                failure = await _relay_body(request, upstream, sse, headed=True)
            except BaseException:  # the client left: a failed write, or its handler cancelled
                self.relayed_stream(sse)
                raise
            final = self.relayed_stream(sse)
            if isinstance(sse, Relayed) and sse.whole:  # its end is written: nothing may follow it
                final = None
            if failure is not None and isinstance(sse, Relayed) and sse.torn:
                # a chunk was passed on in part: nothing can follow it, the client sees the cut
                logger.warning("backend failed mid-stream on %s", request.path)
                sse.force_close()
                if request.transport is not None:
                    request.transport.abort()
                return sse
            if final is None and failure is not None:
                final = errors.backend_failed_event()
            if final is not None:
                await _try_write(sse, final)
        else:
            await _try_write(sse, await _error_event(upstream))
        await _try_write_eof(sse)
        return sse


class Relayed(web.StreamResponse):
    """A streamed answer whose body may be written partly past aiohttp's writer (:func:`_pipe`,
    :func:`_pass_raw`): its ``body_length`` counts those bytes too. ``torn``: a relay that failed
    after passing a chunk on in part (nothing may be written after it: the client is cut);
    ``whole``: a raw relay that wrote the body's end itself (nothing may be written after it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.piped = 0
        self.torn = False
        self.whole = False

    @property
    def body_length(self) -> int:
        return super().body_length + self.piped


async def _relay_body(
    request: web.BaseRequest, upstream: Reply, response: web.StreamResponse, *, headed: bool = False
) -> str | None:
    """Relay the backend's body into ``response`` (for an answer from the pool to a chunked response:
    :func:`_pass_raw` when the backend's body is chunked too, else :func:`_pipe`; any other:
    :func:`_copy`); what failed reading the backend, or None once it ended. ``headed``: the
    response's head was written already."""
    if (
        isinstance(upstream, backend.Answer)
        and isinstance(response, Relayed)
        # prepared: aiohttp chose chunked framing (no Content-Length, an HTTP/1.1 client)
        and response.headers.get("Transfer-Encoding") == "chunked"
    ):
        if upstream.raw and isinstance(request.writer, http_writer.StreamWriter):
            return await _pass_raw(request, upstream, response, request.writer, headed=headed)
        return await _pipe(request, upstream, response)
    return await _copy(upstream, response)


async def _pass_raw(
    request: web.BaseRequest,
    upstream: backend.Answer,
    response: Relayed,
    writer: http_writer.StreamWriter,
    *,
    headed: bool,
) -> str | None:
    """:func:`_pipe` for a chunked body passed on as it came (``backend.Connection.relay``): the
    backend's bytes, their framing checked, written with no chunk decoded or framed again, the end
    included (aiohttp's writer frames nothing meanwhile: its ``chunked`` is off while the relay
    writes, on again if it fails, for the event after it). What came with the backend's head goes
    first through aiohttp's writer, with the response's head if that is still held (``headed``: it
    is out already), what comes later to the client's transport from the read callback.
    Backpressure as in :func:`_pipe`. A failure after a chunk was passed on in part marks the
    response ``torn``."""
    transport = request.transport
    if transport is None or transport.is_closing():
        raise ClientLeft("the client's transport is closing")

    def sink(data: bytes) -> bool:
        if transport.is_closing():
            return True
        transport.write(data)
        response.piped += len(data)
        return transport.get_write_buffer_size() > PIPE_BUFFER

    connection = upstream.connection
    first = connection.relay(sink)
    writer.chunked = False
    try:
        if first or not headed:
            try:
                await response.write(first)  # the head too, if the writer still holds it
            except ConnectionError as exc:
                raise ClientLeft(type(exc).__name__) from None
        await _follow(connection, transport, writer)
    except (aiohttp.ClientError, TimeoutError) as exc:
        writer.chunked = True  # what follows (an error event, the end) is framed by the writer
        response.torn = not connection.boundary
        return type(exc).__name__
    response.whole = True  # the end is written (the writer, not chunking, adds nothing to it)
    return None


async def _follow(
    connection: backend.Connection, transport: asyncio.Transport, writer: abc.AbstractStreamWriter
) -> None:
    """Follow a pipe or raw relay to the body's end: while the client's side is full, wait for it to
    drain (the connection layer's write timeout applies meanwhile) and read from the backend again.
    Raises the body's failure, or :class:`ClientLeft`."""
    while await connection.piped():  # the client's side is full, or gone
        if transport.is_closing():
            raise ClientLeft("the client's transport is closing")
        try:
            await writer.drain()
        except ConnectionError as exc:
            raise ClientLeft(type(exc).__name__) from None
        connection.resume()


async def _pipe(request: web.BaseRequest, upstream: backend.Answer, response: Relayed) -> str | None:
    """:func:`_copy` at a lower cost per chunk: the first chunk goes out through aiohttp's writer
    (with the headers, if still unsent), every later one is framed and written to the client's
    transport from the backend connection's read callback (``backend.Connection.pipe``), with no
    task woken per chunk. While the client's transport holds more than :data:`PIPE_BUFFER` bytes,
    reading from the backend pauses until it drains (the writer's ``drain``: the connection layer's
    write timeout applies meanwhile), so the client's backpressure reaches the backend as before."""
    content = upstream.content
    try:
        first = await content.readany()
    except (aiohttp.ClientError, TimeoutError) as exc:
        return type(exc).__name__
    if not first:
        return None
    try:
        await response.write(first)
    except ConnectionError as exc:
        raise ClientLeft(type(exc).__name__) from None
    transport = request.transport
    if transport is None or transport.is_closing():
        raise ClientLeft("the client's transport is closing")
    writer = request.writer

    def sink(chunk: bytes) -> bool:
        if transport.is_closing():
            return True
        frame = b"%x\r\n%b\r\n" % (len(chunk), chunk)
        transport.write(frame)
        response.piped += len(frame)
        return transport.get_write_buffer_size() > PIPE_BUFFER

    connection = upstream.connection
    connection.pipe(sink)
    try:
        await _follow(connection, transport, writer)
    except (aiohttp.ClientError, TimeoutError) as exc:
        return type(exc).__name__
    return None


async def _copy(upstream: Reply, response: web.StreamResponse) -> str | None:
    """Relay the backend's body into ``response`` as it comes; what failed reading the backend, or
    None once it ended. A write that fails is the client leaving, :class:`ClientLeft` (aiohttp's
    ``ClientConnectionResetError`` is both a ``ClientError`` and a ``ConnectionError``, so only
    where it came from tells whose failure it was)."""
    try:
        async for chunk in upstream.content.iter_any():
            try:
                await response.write(chunk)
            except ConnectionError as exc:
                raise ClientLeft(type(exc).__name__) from None
    except (aiohttp.ClientError, TimeoutError) as exc:
        return type(exc).__name__
    return None


async def _error_event(upstream: Reply) -> bytes:
    """The backend's (bounded) error body as one SSE ``data:`` event, OpenAI-shaped."""
    try:
        raw = await upstream.content.read(MAX_ERROR_BODY)
        document = json.loads(raw)
    except (aiohttp.ClientError, TimeoutError, ValueError):
        document = None
    if isinstance(document, dict) and isinstance(document.get("error"), dict):
        return b"data: " + json.dumps({"error": document["error"]}).encode() + b"\n\n"
    return errors.sse_event(
        message=f"the backend answered HTTP {upstream.status}",
        type="backend_error",
        code=f"backend_http_{upstream.status}",
    )


async def _try_write(response: web.StreamResponse, data: bytes) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write(data)


async def _try_write_eof(response: web.StreamResponse) -> None:
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write_eof()


async def start_sse(request: web.Request) -> web.StreamResponse:
    """Send 200 + SSE headers now, with a first comment so they leave at once."""
    response = Relayed(status=200, headers=SSE_HEADERS)
    await response.prepare(request)
    await response.write(b": keepalive\n\n")
    return response
