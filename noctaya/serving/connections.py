"""The HTTP connection layer under the gateway and the scaler's report port.

aiohttp's server is used as it is, with one protocol subclass (:class:`Protocol`) that adds what a
listener facing hostile clients needs and aiohttp leaves out:

- a bound on open connections, overall and per peer address (:class:`ConnectionTable`): a
  connection beyond it is closed at once, before a byte is parsed, so one client cannot take the
  file descriptors that reporters, KEDA and other clients need;
- a write timeout: a connection whose client stops reading (its socket buffer full, so writes
  pause) for ``write_timeout`` is closed, and with it the request that held an in-flight slot; the
  timer runs only while writing is paused, so a reading client costs nothing;
- a header timeout: a connection that has not sent one complete request head within
  ``header_timeout`` of connecting is closed (a slow or silent client holds nothing for long);
  between requests aiohttp's own keep-alive timeout applies, which also closes a connection whose
  next head trickles in too slowly;
- requests that arrived whole before a malformed one on the same connection (pipelined in one
  packet) are answered, then the malformed one: aiohttp's parser drops everything it parsed in the
  read that failed, so :class:`_Replaying` keeps the first :data:`REPLAY_BYTES` a connection sends
  and, on a parse error, replays them line by line through a fresh parser to recover the requests
  that were complete before the error;
- after a parse error a connection parses nothing more: what it sends on is dropped unread (the
  failed parser would raise again on every chunk, each error quoting it), the error is answered once
  and the connection closes; the error aiohttp holds until then is :class:`Malformed`, its
  classification only, never the bytes that failed;
- ``CONNECT`` (an authority-form target, which no route can take) is a JSON 405: this server is
  not a forward proxy; a header value that is not UTF-8 (obs-text bytes such as ``\\xff``) is a
  JSON 400, since aiohttp's writer would drop those bytes when passing it on;
- malformed requests (bad request line, unknown method, bad or duplicate Content-Length, bad chunk,
  too many or too long headers, an HTTP/2 preface...) are answered in the server's own JSON error
  shape (``error_body``), never echoing the raw bytes, and logged at debug level without a
  traceback, since they are the client's mistake; a failure of our own (500) keeps its traceback;
- a :data:`Taker` (the gateway's express lane) may take a parsed request below aiohttp's request
  handling: when a read yields one whole request (its body in) on an otherwise idle connection, the
  taker is offered it first; a request it takes is a :class:`Passage` that writes its answer to the
  transport itself and says when it ended (:meth:`Protocol.passage_ended`). Meanwhile the
  connection counts as handling a request (a shutdown waits for it, no idle check closes it) and
  what the client sends on is held unparsed (reading pauses past :data:`REPLAY_BYTES`), then parsed
  once the passage ended, so pipelined requests are answered in order whichever path takes them.
  A request that comes while aiohttp's loop is between two requests (the last one's handler has
  ended, the loop has not yet come back to wait: a client that sends its next request as soon as an
  answer ends meets that window every time) is parked, and offered to the taker when the loop
  waits; if any more bytes come first, or the taker leaves it, it goes aiohttp's way, in order.

:class:`Runner` is ``web.AppRunner`` with this protocol; every server of this project uses it.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import logging
import resource
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any, cast
from typing import Protocol as Interface

from aiohttp import http_exceptions, http_parser, streams, web, web_protocol, web_request, web_server

from noctaya.serving import peers as peers_

logger = logging.getLogger(__name__)

REPLAY_BYTES = 64 * 1024
"""How much of a connection's first bytes is kept to recover pipelined requests after a parse error."""

ErrorBody = Callable[[int, str, str], bytes]
"""``(status, code, message) -> JSON bytes`` in the server's error shape."""


class Passage(Interface):
    """A request a :data:`Taker` took: the connection tells it what happens to the client."""

    def client_lost(self) -> None:
        """The client's connection is gone (the passage has not ended)."""

    def drained(self) -> None:
        """The client's transport, full before, takes writes again."""


Taker = Callable[["Protocol", http_parser.RawRequestMessage, streams.StreamReader], "Passage | None"]
"""Offered one whole request on an idle connection: its :class:`Passage` once it has taken it (it
then writes the whole answer itself and calls :meth:`Protocol.passage_ended`), or None to leave it
to aiohttp's request handling."""

MAX_HEADER_BYTES = 16 * 1024
"""Longest request line, header name and header value accepted (one bound for all three)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    """Connection bounds of one listener; every field is a config setting of its process."""

    #: open connections overall (the probe reserve included); beyond it a new connection is closed
    max_connections: int = 4096
    #: open connections from one peer (``peers``); a trusted proxy's connections are not counted
    max_connections_per_peer: int = 256
    #: from connect to one complete request head
    header_timeout: float = 10.0
    #: idle time between requests on a kept-alive connection
    keepalive_timeout: float = 60.0
    #: a connection whose client reads nothing of what is written for this long is closed
    write_timeout: float = 60.0
    #: longest request line, header name and header value; most header lines
    max_header_bytes: int = MAX_HEADER_BYTES
    max_headers: int = 128
    #: what a peer is
    peers: peers_.Peers = peers_.DEFAULT
    #: connections of ``max_connections`` kept for ``probe_paths`` (see :class:`ConnectionTable`)
    probe_connections: int = 0
    #: the paths (``GET``/``HEAD``) a connection in the probe reserve may ask for
    probe_paths: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if not 0 <= self.probe_connections < self.max_connections:
            raise ValueError("probe_connections must be from 0 to below max_connections")


def max_header_value(limits: Limits, prefix: str = "") -> int:
    """Longest value (after ``prefix``, e.g. ``"Bearer "``) a header can carry within ``limits``: the
    parser bounds a header's name and its value each by ``max_header_bytes``."""
    return limits.max_header_bytes - len(prefix)


#: descriptors a process keeps beside its client connections and what they need: the listeners,
#: the event loop's own, standard streams, config, key and token files, probe and scaler sockets
RESERVED_DESCRIPTORS = 64


def descriptor_limit() -> int:
    """The process's open-file limit (``RLIMIT_NOFILE``'s soft value)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 20


def raise_descriptor_limit() -> int:
    """Raise the soft open-file limit to the hard one, as most servers do at start; the new limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return descriptor_limit()


def connection_room(*, descriptors: int, backend: int) -> int:
    """How many client connections ``descriptors`` file descriptors hold beside
    :data:`RESERVED_DESCRIPTORS` and at most ``backend`` backend sockets (each made for a client
    connection's request, so also at most one per client connection); at least 1."""
    free = descriptors - RESERVED_DESCRIPTORS
    return max(1, free - backend, free // 2)


def within_descriptors(limits: Limits, *, room: int) -> Limits:
    """``limits`` with ``max_connections`` (and the bounds within it) at most ``room``: a bound the
    file descriptors cannot hold would turn into accept failures, answering nobody."""
    if limits.max_connections <= room:
        return limits
    reserve = min(limits.probe_connections, room // 2)
    return dataclasses.replace(
        limits,
        max_connections=room,
        max_connections_per_peer=min(limits.max_connections_per_peer, room),
        probe_connections=reserve,
    )


class ConnectionTable:
    """Open connections by peer, within :class:`Limits`; read by the metrics.

    The last ``probe_connections`` of ``max_connections`` are the probe reserve: a connection that
    arrives when the others are taken (by one peer or by many) still gets in, but may only ask for a
    probe path, once (anything else is a 503 ``connections_full``), within a short header timeout,
    and when the reserve too is full it takes the place of the oldest reserve connection that has
    not sent a complete head yet. So the kubelet's probe is answered whoever holds the rest, short
    of a client opening connections faster than the probe sends its head."""

    def __init__(self, *, limits: Limits) -> None:
        self.limits = limits
        self._by_peer: collections.Counter[str] = collections.Counter()
        self._reserve: dict[Protocol, None] = {}  # in arrival order
        self.open = 0
        self.refused = 0
        self.on_refused: Callable[[], None] | None = None
        #: told the code of every request the HTTP layer refused as malformed (for the metrics)
        self.on_malformed: Callable[[str], None] | None = None

    @property
    def reserve_open(self) -> int:
        """Connections open in the probe reserve."""
        return len(self._reserve)

    def enter(self, peer: str | None, *, connection: Protocol | None = None) -> bool | None:
        """Admit a connection from ``peer`` (None: a trusted proxy's, no per-peer bound): True as an
        ordinary one, None into the probe reserve (``connection`` given), False not at all."""
        limits = self.limits
        ordinary = self.open - len(self._reserve)
        if ordinary < limits.max_connections - limits.probe_connections and (
            peer is None or self._by_peer[peer] < limits.max_connections_per_peer
        ):
            self.open += 1
            if peer is not None:
                self._by_peer[peer] += 1
            return True
        if connection is not None and limits.probe_connections:
            if len(self._reserve) >= limits.probe_connections:
                oldest = next((c for c in self._reserve if not c.headed), None)
                if oldest is not None:
                    self._reserve.pop(oldest)
                    self.open -= 1
                    oldest.evict()
            if len(self._reserve) < limits.probe_connections:
                self._reserve[connection] = None
                self.open += 1
                return None
        self.refused += 1
        if self.on_refused is not None:
            self.on_refused()
        return False

    def leave(self, peer: str | None, *, connection: Protocol | None = None) -> None:
        if connection is not None and connection in self._reserve:
            del self._reserve[connection]
            self.open -= 1
            return
        self.open -= 1
        if peer is None:
            return
        left = self._by_peer[peer] - 1
        if left > 0:
            self._by_peer[peer] = left
        else:
            del self._by_peer[peer]

    def refuse(self) -> None:
        self.refused += 1
        if self.on_refused is not None:
            self.on_refused()


_MESSAGES: tuple[tuple[type[BaseException], str], ...] = (
    (http_exceptions.LineTooLong, "a request line or header line is too long"),
    (http_exceptions.BadHttpMethod, "the request method is not valid"),
    (http_exceptions.BadStatusLine, "the request line is not valid HTTP/1.x"),
    (http_exceptions.InvalidHeader, "a header is not valid"),
    (http_exceptions.ContentLengthError, "the body does not match its Content-Length"),
    (http_exceptions.TransferEncodingError, "the chunked body is not valid"),
    (http_exceptions.ContentEncodingError, "the body's Content-Encoding is not one this server decodes"),
    (http_exceptions.InvalidURLError, "the request target is not valid"),
)


class Malformed(http_exceptions.BadHttpMessage):
    """A parse error as the connection answers it: its ``(code, message)`` from :func:`describe`,
    nothing of the client's bytes (the parser's own error quotes the input it failed on)."""

    def __init__(self, *, code: str, text: str, status: int = 400) -> None:
        super().__init__(text)
        self.error_code = code
        self.text = text
        self.status = status

    @classmethod
    def of(cls, exc: BaseException) -> Malformed:
        code, text = describe(exc)
        return cls(code=code, text=text)


def _not_a_proxy() -> Malformed:
    return Malformed(
        code="method_not_allowed",
        text="CONNECT is not served: this server is not a forward proxy",
        status=405,
    )


def describe(exc: BaseException | None) -> tuple[str, str]:
    """``(code, message)`` of a parse error, both fixed: never the client's bytes."""
    if isinstance(exc, Malformed):
        return exc.error_code, exc.text
    for kind, text in _MESSAGES:
        if isinstance(exc, kind):
            code = (
                "invalid_content_encoding"
                if kind is http_exceptions.ContentEncodingError
                else "malformed_request"
            )
            return code, text
    return "malformed_request", "the request is not valid HTTP/1.x"


def _utf8_values(message: Any) -> bool:
    """Whether every header value of ``message`` is UTF-8 (ASCII, as almost all are, at once).

    aiohttp's parser decodes a value with ``surrogateescape`` and its writer drops the surrogates
    that stand for the bytes that were not UTF-8 (``caf\\xe9`` would reach a backend as ``caf``):
    such a value is refused rather than passed on altered."""
    for _, value in getattr(message, "raw_headers", ()):
        if not value.isascii():
            try:
                value.decode("utf-8")
            except UnicodeDecodeError:
                return False
    return True


class _Replaying:
    """The protocol's request parser, answering for the requests a failed read had already parsed.

    While a connection's input is within :data:`REPLAY_BYTES` it is kept. When the parser fails,
    that input is fed again, line by line, to a fresh parser: the messages it yields whole (body
    included) before failing, beyond those already delivered, are returned now, and the parse error
    is raised on the next feed (scheduled at once), so the protocol answers them in order and then
    the error. Once an error is raised the parser is failed: every later feed is dropped unparsed.
    Every other attribute is the wrapped parser's."""

    __slots__ = ("_ascii", "_delivered", "_failed", "_history", "_parser", "_pending", "_protocol")

    def __init__(self, parser: Any, *, protocol: Protocol) -> None:
        self._parser = parser
        self._protocol = protocol
        self._history: bytearray | None = bytearray()
        self._delivered = 0
        self._pending: Malformed | None = None
        self._failed = False
        self._ascii = True  # every byte fed so far was ASCII

    def __getattr__(self, name: str) -> Any:
        return getattr(self._parser, name)

    def feed_data(self, data: bytes) -> tuple[Any, bool, bytes]:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            raise pending
        if self._failed:  # answered once, then closed: nothing more is parsed or kept
            return [], False, b""
        history = self._history
        if history is not None:
            if len(history) + len(data) <= REPLAY_BYTES:
                history += data
            else:
                self._history = history = None  # too long to replay: the parser alone decides
        error: Malformed | None = None
        messages: list[Any] = []
        upgraded, tail = False, b""
        try:
            messages, upgraded, tail = self._parser.feed_data(data)
        except http_exceptions.HttpProcessingError as exc:
            # raised outside this block, so that the parser's error (its message quotes the chunk
            # that failed) is not kept as the context of ours
            error = Malformed.of(exc)
        if error is not None:
            self._failed, self._history = True, None
            # at most aiohttp's own bound on queued requests are answered before the error
            recovered = (
                self._replay(bytes(history))[
                    self._delivered : self._delivered + web_protocol.MAX_MSG_QUEUE_SIZE
                ]
                if history is not None
                else []
            )
            if not recovered:
                raise error
            messages, upgraded, tail = recovered, False, b""
        # while every byte the connection sent is ASCII (almost always), no header value can be
        # anything but UTF-8; after the first one that is not, every request's values are checked
        if self._ascii and not data.isascii():
            self._ascii = False
        for index, (message, _) in enumerate(messages):
            if getattr(message, "version", (1, 1))[0] != 1:  # "HTTP/2.0" in a request line
                messages, upgraded, tail = messages[:index], False, b""
                error = Malformed.of(http_exceptions.BadStatusLine("unsupported HTTP version"))
                break
            if getattr(message, "method", "") == "CONNECT":  # an authority-form target: no path
                messages, upgraded, tail = messages[:index], False, b""
                error = _not_a_proxy()
                break
            if not self._ascii and not _utf8_values(message):
                messages, upgraded, tail = messages[:index], False, b""
                error = Malformed(
                    code="malformed_request",
                    text="a header value is not UTF-8 text, so it cannot be passed on as received",
                )
                break
        if messages and self._protocol.probing:
            messages, refusal = self._protocol.probe_only(messages)
            self._failed, self._history = True, None
            error = error or refusal
        self._delivered += len(messages)
        if error is not None:
            self._failed, self._history = True, None
            self._fail_next(error)
        elif len(messages) == 1 and not upgraded and self._protocol.express(messages[0]):
            return [], False, b""
        for _, payload in messages:
            _lighten(payload)
        return messages, upgraded, tail

    def _fail_next(self, error: Malformed) -> None:
        """Answer ``error`` after the messages returned now: it is raised by the next feed."""
        self._pending = error
        self._protocol._loop.call_soon(self._protocol.data_received, b"")

    def _replay(self, data: bytes) -> list[Any]:
        parser = self._protocol.fresh_parser()
        recovered: list[Any] = []
        position = 0
        while position < len(data):
            end = data.find(b"\n", position)
            end = len(data) if end < 0 else end + 1
            try:
                messages, _, _ = parser.feed_data(data[position:end])
            except http_exceptions.HttpProcessingError:
                break
            recovered.extend(messages)
            position = end
        # only requests that arrived whole: one whose body the error cut short is not answered
        complete = 0
        while complete < len(recovered) and recovered[complete][1].is_eof():
            complete += 1
        return recovered[:complete]


class _ShortQueue(list[Any]):
    """A first-in first-out queue of a few items, for aiohttp's per-connection queues: a ``deque``
    allocates a block of 64 slots (~0.7 KiB) as soon as it is made, and a held request keeps two of
    them for as long as it waits. Only where the number of items is small and fixed: the parsed
    requests not yet handled (aiohttp holds at most ``max_msg_queue_size`` of them), and the chunks of
    a body that was complete when its head was parsed (at most ``_SHORT_BODY_CHUNKS``, never added
    to). A body still arriving keeps aiohttp's deque: a client sending many one-byte chunks would make
    a list's ``pop(0)`` quadratic."""

    __slots__ = ()

    def popleft(self) -> Any:
        return self.pop(0)

    def appendleft(self, item: Any) -> None:
        self.insert(0, item)


_SHORT_BODY_CHUNKS = 8
"""A complete body in at most this many chunks gets a :class:`_ShortQueue` (see there)."""


def _lighten(payload: Any) -> None:
    """Give a request body's reader a :class:`_ShortQueue` for its chunks when the whole body is
    already in and in a few chunks (a held request's usual body); otherwise leave it as it is."""
    if (
        type(payload) is streams.StreamReader
        and payload.is_eof()
        and type(payload._buffer) is collections.deque
        and len(payload._buffer) <= _SHORT_BODY_CHUNKS
    ):
        payload._buffer = _ShortQueue(payload._buffer)  # type: ignore[assignment]


_NEW, _OPEN, _PROBE, _GONE = range(4)
PROBE_HEADER_TIMEOUT = 2.0
"""A connection in the probe reserve sends its request head within this (or less: headerTimeout)."""


class Protocol(web_protocol.RequestHandler):
    """aiohttp's request handler with connection bounds, a header timeout and JSON errors."""

    __slots__ = (
        "_auto_decompress",
        "_error_body",
        "_flushing",
        "_header_timer",
        "_held",
        "_held_bytes",
        "_parked",
        "_passage",
        "_peer",
        "_state",
        "_table",
        "_taker",
        "_waiting",
        "_write_timer",
        "remote",
        "tls",
    )

    def __init__(
        self,
        manager: web_server.Server,
        *,
        table: ConnectionTable,
        error_body: ErrorBody,
        taker: Taker | None = None,
        **kwargs: Any,
    ) -> None:
        limits = table.limits
        kwargs.setdefault("keepalive_timeout", limits.keepalive_timeout)
        kwargs.setdefault("max_line_size", limits.max_header_bytes)
        kwargs.setdefault("max_field_size", limits.max_header_bytes)
        kwargs.setdefault("max_headers", limits.max_headers)
        # after answering a request whose body was not read, the rest of that body is drained this
        # long before the connection closes (aiohttp's default is 10 s, whatever the other bounds)
        kwargs.setdefault("lingering_time", limits.header_timeout)
        self._parked: tuple[Any, Any] | None = None  # before aiohttp's init sets ``_waiter``
        super().__init__(manager, **kwargs)
        self._auto_decompress: bool = kwargs.get("auto_decompress", True)
        self._parser = _Replaying(self._parser, protocol=self)  # type: ignore[assignment]
        # aiohttp's queue of parsed requests (a deque there): see _ShortQueue
        self._messages = _ShortQueue()  # type: ignore[assignment]
        self._table = table
        self._error_body = error_body
        self._peer: str | None = None
        self._state = _NEW
        self._header_timer: asyncio.TimerHandle | None = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._taker = taker
        self._passage: Passage | None = None
        # what the client sent while a passage was in flight (a list only once there is some: a held
        # cold request's connection is one of thousands)
        self._held: list[bytes] | None = None
        self._held_bytes = 0
        self._flushing = False  # a passage ended, its answer not yet drained
        #: the client's address (None on a Unix socket) and whether it came over TLS, read at connect
        self.remote: str | None = None
        self.tls = False

    def fresh_parser(self) -> Any:
        """A new request parser with this connection's settings (for :class:`_Replaying`)."""
        return http_parser.HttpRequestParser(
            self,
            self._loop,
            self._read_bufsize,
            max_line_size=self.max_line_size,
            max_field_size=self.max_field_size,
            max_headers=self.max_headers,
            payload_exception=web_protocol.RequestPayloadError,
            auto_decompress=self._auto_decompress,
        )

    @property
    def headed(self) -> bool:
        """Whether a complete request head has come on this connection."""
        return self._request_count > 0

    @property
    def probing(self) -> bool:
        """Whether this connection is in the probe reserve (see :class:`ConnectionTable`)."""
        return self._state == _PROBE

    def evict(self) -> None:
        """Close this reserve connection for a newer one (the table has already let it go)."""
        self._state = _GONE
        if self.transport is not None:
            self.transport.abort()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peername = transport.get_extra_info("peername")
        self.remote = str(peername[0]) if isinstance(peername, tuple) and peername else None
        self.tls = transport.get_extra_info("sslcontext") is not None
        host = "unix" if self.remote is None else self.remote
        limits = self._table.limits
        peer = limits.peers.of_connection(host)
        admitted = self._table.enter(peer, connection=self)
        if admitted is False:
            cast(
                asyncio.Transport, transport
            ).abort()  # nothing parsed, nothing answered: the bound is the answer
            return
        self._peer = peer
        self._state = _OPEN if admitted else _PROBE
        super().connection_made(transport)
        timeout = limits.header_timeout if admitted else min(limits.header_timeout, PROBE_HEADER_TIMEOUT)
        self._header_timer = self._loop.call_later(timeout, self._header_expired)

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._state == _NEW:
            return  # refused in connection_made: never entered
        passage = self._passage
        if passage is not None:
            self._passage_over()
            passage.client_lost()
        self._held = None
        self._flushing = False
        self._parked = None
        if self._state != _GONE:
            self._table.leave(self._peer, connection=self if self._state == _PROBE else None)
        self._state = _GONE
        self._peer = None
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        super().connection_lost(exc)

    def probe_only(self, messages: list[Any]) -> tuple[list[Any], Malformed | None]:
        """A reserve connection's requests: its first if it asks for a probe path (answered, then
        the connection closes), else a 503 ``connections_full``; nothing after it is parsed."""
        if not messages:
            return messages, None
        message, payload = messages[0]
        limits = self._table.limits
        if message.method in ("GET", "HEAD") and message.path.partition("?")[0] in limits.probe_paths:
            return [(message._replace(should_close=True), payload)], None
        self._table.refuse()
        return [], Malformed(
            code="connections_full",
            text="the server holds as many connections as it takes; try again later",
            status=503,
        )

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_timer is None:
            self._write_timer = self._loop.call_later(self._table.limits.write_timeout, self._write_expired)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None
        if self._passage is not None:
            self._passage.drained()
        elif self._flushing:  # the last passage's answer has drained: now the connection is idle
            self._flushing = False
            if not self._force_close:
                self._idle_again()

    @property
    def _waiter(self) -> asyncio.Future[None] | None:
        """aiohttp's future for the next request, set while its loop waits for one."""
        return self._waiting

    @_waiter.setter
    def _waiter(self, waiter: asyncio.Future[None] | None) -> None:
        # aiohttp's loop sets it when it comes back to wait: a request parked meanwhile is offered
        # to the taker now, and given to aiohttp (the loop then waits for nothing) if left
        self._waiting = waiter
        parked = self._parked
        if waiter is not None and parked is not None:
            self._parked = None
            try:
                taken = self.express(parked)
            except Exception:  # inside aiohttp's loop: a failure there would leave the connection open
                self.log_exception("offering a parked request failed; the connection is closed")
                self.force_close()
                return
            if not taken:
                self._unpark(parked)
                if not waiter.done():
                    waiter.set_result(None)

    def _unpark(self, item: tuple[Any, Any]) -> None:
        """Hand a parked request to aiohttp's queue, as its own parse would have."""
        _lighten(item[1])
        self._request_count += 1
        self._messages.append(item)

    def express(self, item: tuple[Any, Any]) -> bool:
        """Offer one parsed request to the taker (only on an open, idle connection: aiohttp's loop is
        waiting for a request and holds none); True when it took it, or parked it: aiohttp's loop is
        between two requests, and it is offered once the loop waits (see :attr:`_waiter`)."""
        waiter = self._waiter
        if (
            self._taker is None
            or self._passage is not None
            or self._state != _OPEN
            or (waiter is not None and waiter.done())
            or self._parked is not None
            or self._messages
            or self._request_in_progress
            or self._paused  # the client reads too slowly: aiohttp's writer waits for it to drain
            or self._flushing
            or self._close
            or self._force_close
            or self._upgraded
            or self._payload_parser is not None
            or self.transport is None
        ):
            return False
        if waiter is None:  # aiohttp's loop has not come back to wait yet
            if self._task_handler is None:  # nor will it: the connection is closing
                return False
            self._parked = item
            return True
        message, payload = item
        try:
            passage = self._taker(self, message, payload)
        except Exception:  # a failure of ours: the request goes aiohttp's way, the failure is logged
            self.log_exception("the taker failed on a request; it is handled the usual way")
            return False
        if passage is None:
            return False
        # what aiohttp does for a request it takes from the parser, short of handling it
        self._passage = passage
        self._request_in_progress = True
        self._request_count += 1
        if self._manager is not None:
            self._manager.requests_count += 1
        if self._parser is not None:
            self._parser.message_consumed()
        # the keep-alive timer is left as it is: when it fires before the answer ends it stands down
        # (see _process_keepalive), and the answer's end arms it anew
        return True

    def passage_ended(self, *, keep_alive: bool) -> None:
        """The passage wrote its whole answer (or gave up on it): the connection closes once that is
        written unless ``keep_alive``, else is idle again (see :meth:`_idle_again`) once the answer
        has drained, if the client's transport is full now: until then what the client sends is held
        still, and no idle timer runs (as aiohttp's writer waits for the drain before the next)."""
        if self._passage is None:
            return
        self._passage_over()
        if not keep_alive or self._close or self._force_close:
            self._held = None
            self.force_close()
            return
        if self._paused:
            self._flushing = True  # idle once resume_writing comes (or the write timeout closes it)
            return
        self._idle_again()

    def _passage_over(self) -> None:
        """No request is in progress any more (a shutdown waiting for one goes on)."""
        self._passage = None
        self._request_in_progress = False
        waiter = self._handler_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _idle_again(self) -> None:
        """After a passage: the keep-alive timer runs, and what the client sent meanwhile is parsed."""
        close_time = self._loop.time() + self._keepalive_timeout
        self._next_keepalive_close_time = close_time
        if self._keepalive_handle is None:
            self._keepalive_handle = self._loop.call_at(close_time, self._process_keepalive)
        held = self._held
        if held is not None:
            data = b"".join(held)
            self._held = None
            self._held_bytes = 0
            if self._buffer_paused:
                self._resume_reading_for_buffer()
            self.data_received(data)

    def _process_keepalive(self) -> None:
        # aiohttp's idle check closes a connection whose loop waits for a request, as it does while a
        # passage is answered or its answer drains: no idle timer runs then (as on aiohttp's own path,
        # whose handler is not idle), and the passage's end arms a new one (_idle_again)
        if self._passage is not None or self._flushing:
            self._keepalive_handle = None
            return
        super()._process_keepalive()

    def _write_expired(self) -> None:
        self._write_timer = None
        logger.debug("closing a connection whose client read nothing within the write timeout")
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        parked = self._parked
        if parked is not None:  # whatever these bytes hold comes after it: aiohttp's, in order
            self._parked = None
            self._unpark(parked)
        if self._passage is not None or self._flushing:  # parsed once the passage has ended, in order
            if data and not self._force_close:
                if self._held is None:
                    self._held = []
                self._held.append(data)
                self._held_bytes += len(data)
                if self._held_bytes > REPLAY_BYTES and not self._buffer_paused:
                    self._pause_reading_for_buffer()
            return
        super().data_received(data)
        if self._header_timer is not None and self._request_count:
            self._header_timer.cancel()
            self._header_timer = None
            # aiohttp arms its keep-alive timer at connect, against a client that sends nothing; the
            # header timer does that job, so once a head has come it goes (aiohttp arms a new one when
            # the response ends), rather than being kept for as long as a held request waits
            if self._keepalive_handle is not None:
                self._keepalive_handle.cancel()
                self._keepalive_handle = None

    def _header_expired(self) -> None:
        self._header_timer = None
        if not self._request_count:
            logger.debug("closing a connection that sent no request head within the header timeout")
            self.force_close()

    def handle_error(
        self,
        request: web_request.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, Malformed):
            status = exc.status
        if isinstance(exc, Malformed) and status >= 500:  # a refusal of ours, counted already
            code, text = exc.error_code, exc.text
        elif status >= 500:
            self.log_exception("request failed with %d", status, exc_info=exc)
            code, text = "internal_error", "the server failed to handle the request"
        else:
            code, text = describe(exc)
            logger.debug("refused a malformed request (%s, %d)", code, status)
            if self._table.on_malformed is not None:
                self._table.on_malformed(code)
        if request.writer.output_size > 0:
            raise ConnectionError("the response had started; the connection is closed instead")
        try:
            phrase = HTTPStatus(status).phrase
        except ValueError:
            phrase = "Error"
        response = web.Response(
            status=status,
            reason=phrase,
            body=self._error_body(status, code, text),
            content_type="application/json",
        )
        response.force_close()
        return response


ExpectHandler = Callable[[web.Request], Awaitable[web.StreamResponse | None]]


def expect_handler(refuse: Callable[[web.Request], web.StreamResponse]) -> ExpectHandler:
    """A route's ``expect_handler``: ``Expect: 100-continue`` is answered as aiohttp does; any other
    expectation gets ``refuse(request)`` (aiohttp's own 417 quotes the header back as text) and the
    connection closes."""

    async def handle(request: web.Request) -> web.StreamResponse | None:
        expect = request.headers.get("Expect", "")
        if expect.lower() == "100-continue":
            if request.version >= (1, 1):
                await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                request.writer.output_size = 0
            return None
        response = refuse(request)
        response.force_close()
        return response

    return handle


class _Server(web_server.Server):
    """aiohttp's connection factory, making :class:`Protocol` (set up by :class:`Runner`)."""

    table: ConnectionTable
    error_body: ErrorBody
    taker: Taker | None

    def __call__(self) -> web_protocol.RequestHandler:
        kwargs = dict(self._kwargs)
        return Protocol(
            self, loop=self._loop, table=self.table, error_body=self.error_body, taker=self.taker, **kwargs
        )


class Runner(web.AppRunner):
    """``web.AppRunner`` whose connections are :class:`Protocol` within ``table``'s bounds, offering
    their requests to ``taker`` first when one is given."""

    def __init__(
        self,
        app: web.Application,
        *,
        table: ConnectionTable,
        error_body: ErrorBody,
        taker: Taker | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(app, **kwargs)
        self.table = table
        self.error_body = error_body
        self.taker = taker

    async def _make_server(self) -> web_server.Server:
        server = await super()._make_server()
        # The app builds its own Server (with its handler and request factory); only the protocol it
        # makes per connection changes, so the class is swapped rather than the Server rebuilt.
        server.__class__ = _Server
        assert isinstance(server, _Server)
        server.table = self.table
        server.error_body = self.error_body
        server.taker = self.taker
        return server
