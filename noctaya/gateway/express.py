"""The express lane: a warm request's common case answered below aiohttp's request handling.

Per request, aiohttp's server costs more than the rest of the gateway: a task, a request object, a
response object and its writer. A request whose every step is known the moment it is parsed needs
none of them. The connection layer (``noctaya.serving.connections``) offers each whole request that
arrives on an otherwise idle connection to :class:`Lane` first, which takes it when all of these hold
(any other request goes the usual way, ``handler``, unchanged):

- the gateway is not draining, and when it asks for an API key, the request carries one of the keys
  read already from an unchanged key file (``auth.KeyFile.allows_now``; anything else, a refusal
  included, is the usual path's to answer);
- the request is HTTP/1.1, keeps its connection alive, names a ``Host``, asks for no upgrade and no
  ``Expect``, carries no ``Content-Encoding`` (the server would inflate its body) and its body came
  whole with its head, within ``max_body_bytes``;
- its method is neither ``HEAD`` nor ``CONNECT``, and its target is an origin-form ``/v1/`` path of
  plain characters (:data:`PLAIN_TARGET`: letters, digits, ``/``, ``-``, ``_``, ``:``; a query of
  visible ASCII): it routes to the proxied path, needs no percent-decoding and has no dot segment;
- the connection came in the clear (no TLS), the backend is ready, nobody is queued, an in-flight slot
  is free (``Admission.try_enter``) and the backend pool (``backend.Pool``) holds an idle open
  connection, so nothing is connected to or waited for.

A taken request is a :class:`Passage`. It is written to that backend connection at once with the head
the usual path would write (``proxy.fields_of``: hop-by-hop and key stripping, ``X-Forwarded-*``);
the rest runs in callbacks of the two connections, no task per request:

- the backend's head is read by the pool's parser (its bounds, its ``backend_header_timeout``
  through the header watchdog of ``proxy.Upstream``: a 504 ``backend_timeout``); a failure before it
  is a 502 and the connection is closed: nothing is sent twice; a ``101`` is a 502;
- the answer's head is written as the usual path writes it: the backend's status and fields (minus
  hop-by-hop ones, those its ``Connection`` names, ``Server``, ``Date`` and ``Content-Length``; an
  untyped body gets ``application/octet-stream``), the body's framing, then ``Date`` and ``Server``.
  Header values pass as the backend sent them (aiohttp's writer drops the bytes of a value that are
  not UTF-8); an answer whose header field holds a control character other than HTAB (llhttp's
  lenient parsing lets DEL and most others through) is a 502 on both paths. A body that came
  whole with its head goes in the same write, with its ``Content-Length``; a chunked one is relayed
  raw (``backend.Connection.relay``, its framing checked); any other is piped (``Content-Length``
  kept when the backend gave one, else chunked framing);
- the client's backpressure reaches the backend: past ``proxy.PIPE_BUFFER`` bytes unsent, reading from
  the backend pauses until the client's transport drains (the connection layer's write timeout
  applies meanwhile);
- a backend that fails mid-body: an event stream that broke at a chunk boundary ends with the SSE
  error event (``backend_disconnected``, or ``draining`` when ``cut_streams`` cut it at the drain
  timeout), any other answer is cut (the client's connection aborted) so it cannot pass for whole;
- a client that leaves (or whose transport is closing): its backend connection is closed (the backend
  sees the request cancelled) and the request counts as a 499;
- what the client sends meanwhile waits, unparsed (``connections.Protocol``), until the answer has
  ended and, when the client's transport is full, drained: requests are answered in order, answers
  cannot pile up unread, and the idle timer does not run while the client is behind.

Each passage counts in the same metrics as the usual path (``admitted_warm``, the request counter and
its failures, time to first byte, rejections) and writes the same access-log line.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

import aiohttp
from aiohttp import helpers, http, http_parser, streams

from noctaya.gateway import accesslog, admission, auth, backend, draining, errors, eventloop, metrics, proxy
from noctaya.serving import connections

logger = logging.getLogger("noctaya.gateway.proxy")

PLAIN_TARGET = re.compile(rb"/v1/[A-Za-z0-9/_:-]*(\?[!-\"$-~]+)?")
"""The targets the lane takes: ``/v1/`` paths of plain characters (no ``.``, so no dot segment; no
``%``, so nothing to decode) and a query, if any, of visible ASCII but ``#`` (the usual path drops a
fragment and an empty query; such a target is left to it)."""
_HTTP_11 = http.HttpVersion11
_NOT_RETURNED = frozenset(name.encode() for name in proxy.HOP_BY_HOP | {"server", "date", "content-length"})
_SERVER = b"Server: " + http.SERVER_SOFTWARE.encode() + b"\r\n"
_LAST_CHUNK = backend.LAST_CHUNK
_NO_BODY = frozenset({204, 304})


def _reason(status: int, reason: str) -> bytes:
    """The status line's reason, as the usual path writes it (``proxy.reason_phrase``)."""
    return proxy.reason_phrase(status, reason).encode()


def answer_head(status: int, reason: str, fields: list[bytes], framing: bytes) -> bytes:
    """An answer's head: status line, ``fields`` (whole lines), ``framing`` (a whole line or
    nothing), ``Date`` and ``Server``, the blank line."""
    return b"".join(
        (
            b"HTTP/1.1 %d %s\r\n" % (status, _reason(status, reason)),
            *fields,
            framing,
            b"Date: ",
            helpers.rfc822_formatted_time().encode(),
            b"\r\n",
            _SERVER,
            b"\r\n",
        )
    )


_UNTYPED = b"Content-Type: application/octet-stream\r\n"


def returned_fields(raw: tuple[tuple[bytes, bytes], ...], *, body: bool) -> list[bytes]:
    """The backend's header lines the client gets, as the backend sent them and in its order: minus
    hop-by-hop ones (those ``Connection`` names too), ``Server``, ``Date`` and ``Content-Length``
    (the answer's framing is written anew). An answer with a ``body`` and no ``Content-Type`` gets
    ``application/octet-stream``, as aiohttp's writer gives it on the usual path."""
    dropped = _NOT_RETURNED
    named = [value for name, value in raw if name.lower() == b"connection"]
    if named:
        dropped = dropped | {token.strip().lower() for value in named for token in value.split(b",")}
    fields = []
    typed = False
    for name, value in raw:
        lower = name.lower()
        if lower not in dropped:
            fields.append(b"%s: %s\r\n" % (name, value))
            typed = typed or lower == b"content-type"
    if body and not typed:
        fields.append(_UNTYPED)
    return fields


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


class Lane:
    """The connection layer's ``Taker`` for the gateway: takes the requests it can answer itself
    (see the module's docstring) and starts their :class:`Passage`."""

    def __init__(
        self,
        *,
        admission: admission.Admission,
        drain: draining.Drain,
        auth: auth.KeyFile,
        upstream: proxy.Upstream,
        metrics: metrics.Metrics,
        access: accesslog.AccessLog,
        max_body_bytes: int,
        forward_authorization: bool,
    ) -> None:
        self.admission = admission
        self.drain = drain
        self.auth = auth
        self.upstream = upstream
        self.metrics = metrics
        self.access = access
        self.max_body_bytes = max_body_bytes
        self.forward_authorization = forward_authorization
        self.taken = 0  # requests the lane took (for tests and the bench)
        self._loop = eventloop.RunningLoop()

    def __call__(
        self,
        protocol: connections.Protocol,
        message: http_parser.RawRequestMessage,
        payload: streams.StreamReader,
    ) -> Passage | None:
        pool = self.upstream.pool
        if (
            pool is None
            or self.drain.draining
            or message.version != _HTTP_11
            or message.should_close
            or message.upgrade
            or message.method in ("HEAD", "CONNECT")
            or not payload.is_eof()
            or payload.exception() is not None
        ):
            return None
        headers = message.headers
        host = headers.get("Host")
        if (
            host is None
            or "Expect" in headers
            or "Content-Encoding" in headers
            or "Upgrade" in headers
            or PLAIN_TARGET.fullmatch(target := message.path.encode("utf-8", "surrogateescape")) is None
        ):
            return None
        if self.auth.path is not None and self.auth.allows_now(headers.get("Authorization")) is not True:
            return None
        transport = protocol.transport
        if transport is None or protocol.tls:
            return None
        # the body is looked at where the parser left it, and taken only once the request is
        # (aiohttp's path reads it from there otherwise)
        bodiless = type(payload) is streams.EmptyStreamReader
        if bodiless:
            body = b""
        else:
            buffered = payload._buffer
            body = buffered[0] if len(buffered) == 1 else b"".join(buffered)
        if len(body) > self.max_body_bytes:
            return None
        head = backend.head_of(
            method=message.method.encode(),
            target=target,
            authority=pool.address.authority.encode(),
            fields=proxy.fields_of(
                message.raw_headers,
                remote=protocol.remote,
                scheme=b"http",
                host=host.encode("utf-8", "surrogateescape"),
                forward_authorization=self.forward_authorization,
                inflated=False,
            ),
            body=None if bodiless else bytes(body),
        )
        if head is None:
            return None
        # the connection first: a miss then costs no in-flight slot taken and given back (each of
        # which the demand's subscribers would be told of)
        connection = pool.take_idle()
        if connection is None:
            return None
        admission_ = self.admission
        if not admission_.try_enter():
            pool.untake(connection)
            return None
        try:
            passage = Passage(
                self,
                protocol,
                connection,
                head=head,
                body=bytes(body),
                method=message.method,
                path=message.path,
            )
        except BaseException:  # nothing may leak: the slot and the connection go back
            connection.close()
            admission_.leave(None)
            raise
        self.taken += 1
        self.metrics.admitted_warm.inc()
        # The body's reader is not read out: it goes with the parsed request, its body with it.
        # (Reading it would only make aiohttp's protocol feed its parser an empty read. Nor does it
        # hold the connection's reading paused: a body past the reader's high mark pauses the
        # parser before the body ends, so such a body is not whole when the lane looks at it, and a
        # body's end resumes the reading its size paused.)
        return passage


_SENT, _RELAYING, _ENDED = range(3)


class Passage:
    """One request taken by the :class:`Lane`, from its write to the backend to its answer's end."""

    __slots__ = (
        "_answer",
        "_connection",
        "_framed",
        "_is_sse",
        "_lane",
        "_protocol",
        "_raw",
        "_scheduled",
        "_state",
        "method",
        "path",
        "route",
        "sent",
        "started",
        "status",
    )

    def __init__(
        self,
        lane: Lane,
        protocol: connections.Protocol,
        connection: backend.Connection,
        *,
        head: bytes,
        body: bytes,
        method: str,
        path: str,
    ) -> None:
        self._lane = lane
        self._protocol = protocol
        self._connection = connection
        self._answer: backend.Answer | None = None
        self._state = _SENT
        self._framed = False  # a piped body written with chunked framing
        self._raw = False  # a chunked body relayed as it came
        self._is_sse = False
        self._scheduled = False
        self.method = method
        self.path = path
        self.route = metrics.route_label(path.partition("?")[0])
        self.status = 0
        self.sent = 0  # body bytes written to the client
        loop = lane._loop()
        self.started = loop.time()
        connection.send_told(head, body or None, self._headed)
        lane.upstream.await_headers(self, since=self.started)

    # -- the backend's head

    def _headed(self, came: backend.AnswerHead | None, failure: BaseException | None) -> None:
        if self._state != _SENT:
            return  # answered already (the header timeout) or the client left
        lane = self._lane
        lane.upstream.headers_came(self)
        connection = self._connection
        if came is None:
            connection.close()
            reason = type(failure).__name__
            self._refuse(errors.bad_gateway(f"the backend failed before answering ({reason})"))
            return
        message, payload, raw = came
        lane.metrics.time_to_first_byte.observe(lane._loop().time() - self.started)
        if message.code == 101:  # switched protocols unasked: what follows is no HTTP answer
            connection.close()
            self._refuse(
                errors.bad_gateway("the backend switched protocols on a request that asked no upgrade")
            )
            return
        raw_fields = message.raw_headers
        if proxy.CONTROL_IN_VALUE.search(b"".join([value for _, value in raw_fields])) is not None:
            connection.close()
            self._refuse(errors.control_in_header())
            return
        answer = self._answer = backend.Answer(
            connection,
            status=message.code,
            reason=message.reason,
            headers=message.headers,
            content=payload,
            raw=raw,
        )
        self.status = status = message.code
        self._state = _RELAYING
        fields = returned_fields(raw_fields, body=status not in _NO_BODY)
        transport = self._protocol.transport
        if transport is None or transport.is_closing():
            self.client_lost()
            return
        if status in _NO_BODY:
            transport.write(answer_head(status, message.reason, fields, b""))
            self._finish()
            return
        if raw:
            self._raw = True
            self._is_sse = answer.content_type == proxy.SSE_TYPE
            first = connection.relay(self._sink_to(transport))
            transport.write(
                answer_head(status, message.reason, fields, b"Transfer-Encoding: chunked\r\n") + first
            )
            self.sent += len(first)
            self._follow()
            return
        if payload.is_eof() and payload.exception() is None:
            # taken where llhttp left it, unread (as the lane takes a request's body): the reader
            # goes with the answer (``Answer.release``)
            buffered = payload._buffer
            body = buffered[0] if len(buffered) == 1 else b"".join(buffered)
            framing = b"Content-Length: %d\r\n" % len(body)
            transport.write(answer_head(status, message.reason, fields, framing) + body)
            self.sent += len(body)
            self._finish()
            return
        self._is_sse = answer.content_type == proxy.SSE_TYPE
        declared = message.headers.get("Content-Length")
        if declared is not None and not message.chunked:
            framing = b"Content-Length: %s\r\n" % declared.encode()
        else:
            framing, self._framed = b"Transfer-Encoding: chunked\r\n", True
        transport.write(answer_head(status, message.reason, fields, framing))
        connection.pipe(self._sink_to(transport, framed=self._framed))
        self._follow()

    # -- the body

    def _sink(self, data: bytes) -> bool:
        transport = self._protocol.transport
        if transport is None or transport.is_closing():
            return True
        transport.write(data)
        self.sent += len(data)
        return transport.get_write_buffer_size() > proxy.PIPE_BUFFER

    def _sink_to(self, transport: asyncio.Transport, *, framed: bool = False) -> Callable[[bytes], bool]:
        """:meth:`_sink` bound to the client's ``transport`` (once closing, it takes nothing more), for
        the body's every chunk: the fewest lookups a chunk. ``framed``: each chunk in chunked framing."""
        write, closing, buffered = transport.write, transport.is_closing, transport.get_write_buffer_size
        limit = proxy.PIPE_BUFFER

        def sink(data: bytes) -> bool:
            if closing():
                return True
            if framed:
                data = b"%x\r\n%b\r\n" % (len(data), data)
            write(data)
            self.sent += len(data)
            return buffered() > limit

        return sink

    def _follow(self) -> None:
        """Where the body stands now; listened to from here on (see ``backend.Connection.listen``)."""
        if self._is_sse and self._answer is not None:
            self._lane.upstream.relaying_stream(self, self._answer)
        self._connection.listen(self._progress)
        self._progress()

    def _progress(self) -> None:
        if self._state != _RELAYING:
            return
        try:
            state = self._connection.progress()
        except (aiohttp.ClientError, TimeoutError) as exc:
            self._broke(type(exc).__name__)
            return
        if state is None:
            return
        transport = self._protocol.transport
        if transport is None or transport.is_closing():  # the client is going: nothing more to read
            self.client_lost()
            return
        if state:  # congested: the client's side is full
            if not self._protocol.writing_paused and not self._scheduled:
                # below the transport's own mark already: no resume_writing will come
                self._scheduled = True
                self._lane._loop().call_soon(self.drained)
            return
        if self._framed:
            self._sink(_LAST_CHUNK)
        if self._is_sse:
            self._lane.upstream.relayed_stream(self)  # its end is written: a cut came too late
        self._finish()

    def drained(self) -> None:
        """The client's transport takes writes again: read from the backend again."""
        self._scheduled = False
        if self._state == _RELAYING:
            self._connection.resume()
            self._progress()

    def _broke(self, failure: str) -> None:
        """The backend failed mid-body: an event stream at a chunk boundary gets its final error
        event and ends; any other answer is cut."""
        final = self._lane.upstream.relayed_stream(self) if self._is_sse else None
        transport = self._protocol.transport
        # only chunked framing lets an event follow, and a raw relay only at a chunk's boundary
        at_boundary = self._framed or (self._raw and self._connection.boundary)
        if self._is_sse and at_boundary and transport is not None:
            if final is None:
                logger.warning("backend failed mid-stream on %s", self.path)
                final = errors.backend_failed_event()
            self._sink(_chunk(final) + _LAST_CHUNK)
            self._finish()
            return
        logger.warning("backend failed mid-response on %s: %s", self.path, failure)
        if transport is not None:
            transport.abort()  # the client must not take a truncated body for a whole one
        self._end(self.status, code=None, keep_alive=False)

    # -- the end

    def _finish(self) -> None:
        """The answer is written whole: the backend connection goes back to the pool if it may."""
        self._end(self.status, code=None, keep_alive=True)

    def _refuse(self, error: errors.GatewayError) -> None:
        """Answer ``error`` (nothing of the backend's answer was written)."""
        lane = self._lane
        lane.metrics.rejected(error.reason)
        transport = self._protocol.transport
        body = errors.encode(message=error.message, type=error.type, code=error.code)
        fields = [b"Content-Type: application/json\r\n"]
        for name, value in (error.headers or {}).items():
            fields.append(b"%s: %s\r\n" % (name.encode(), value.encode()))
        if error.retry_after is not None:
            fields.append(b"Retry-After: %d\r\n" % max(1, round(error.retry_after)))
        keep_alive = not lane.drain.draining  # send clients elsewhere: no keep-alive while draining
        if not keep_alive:
            fields.append(b"Connection: close\r\n")
        if transport is not None and not transport.is_closing():
            framing = b"Content-Length: %d\r\n" % len(body)
            phrase = proxy.standard_phrase(error.status)  # as the usual path's refusals have it
            transport.write(answer_head(error.status, phrase, fields, framing) + body)
            self.sent = len(body)
        self._end(error.status, code=error.code, keep_alive=keep_alive)

    def overdue(self) -> None:
        """The backend sent no head within ``backend_header_timeout``: a 504, its connection closed."""
        if self._state == _SENT:
            self._connection.close()
            self._refuse(errors.backend_timeout(self._lane.upstream.header_timeout))

    def client_lost(self) -> None:
        """The client left before the answer ended: its backend connection is closed (unless the
        answer was read whole), and it counts as a 499."""
        if self._state == _ENDED:
            return
        if self._is_sse:
            self._lane.upstream.relayed_stream(self)
        if self._answer is None:
            self._connection.close()
        self._end(499, code="client_closed", keep_alive=False, lost=True)

    def _end(self, status: int, *, code: str | None, keep_alive: bool, lost: bool = False) -> None:
        if self._state == _ENDED:
            return
        self._state = _ENDED
        lane = self._lane
        lane.upstream.headers_came(self)
        answer = self._answer
        if answer is not None:
            answer.release()  # back to the pool when read whole and reusable, else closed
        lane.admission.leave(None)
        lane.metrics.request(self.route, status)
        if not lost:
            lane.metrics.failures.request(status=status, reason=code)
        access = lane.access
        if access.wants(status, code=code):
            access.record(
                status=status,
                method=self.method,
                route=self.route,
                cold=False,
                wait=None,
                duration=lane._loop().time() - self.started,
                sent=self.sent,
                code=code,
            )
        if not lost:
            self._protocol.passage_ended(keep_alive=keep_alive)

    def __repr__(self) -> str:
        return f"<Passage {self.method} {self.route} state={self._state}>"
