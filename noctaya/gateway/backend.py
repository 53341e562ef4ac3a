"""The backend connection pool: HTTP/1.1 keep-alive connections to one backend, on asyncio protocols.

The proxied request path's common case (a plain ``http://host:port`` backend, a request whose body
the gateway holds whole, no upgrade) is sent here rather than through aiohttp's client session, whose
machinery per request (request and response objects, timers, middlewares, the connector's bookkeeping)
cost more than the rest of the gateway together. Everything else (a streamed request body, a backend
URL with a path or TLS, WebSockets) keeps aiohttp's client.

- A request goes out as one write: its head, rewritten once by the caller, and its body.
- The answer's head is parsed by aiohttp's response parser (``aiohttp.http_parser.HttpResponseParser``:
  llhttp, the parser aiohttp's client itself uses, with the same line, field and header bounds), fed
  no further than the head's end. A chunked body (``Transfer-Encoding: chunked`` alone, no
  ``Content-Length``) waits there, buffered (reading pauses past :data:`READ_BUFFER`), for the relay
  to choose: passed on raw (:meth:`Connection.relay`: its framing followed and checked by
  ``chunked.Framing``, its bytes written to the client as they came, no chunk decoded or re-framed)
  or decoded (:attr:`Answer.content`). Any other body, and a decoded one, is read by llhttp into an
  aiohttp ``StreamReader`` with the client's flow control (a full buffer pauses reading from the
  backend), so the relay reads it as it reads an aiohttp client response.
- Nothing is ever sent twice: a pooled connection is taken only while its transport is open (one
  found closing is dropped before a byte is written to it), and a connection that breaks after the
  write fails its request (:class:`aiohttp.ServerDisconnectedError` or ``ClientOSError``), never
  retried. A failed connect is :class:`Unreached` (nothing was sent).
- A connection goes back to the pool only when its answer was read to its end and said nothing of
  closing; any other is closed. One that carried an event stream first waits out a probation
  (:data:`STREAM_PROBATION`, idle and unused): llama.cpp's server closes such a connection after the
  stream without saying so, and a request written to it then would be lost after it was sent. A
  backend seen closing one (in its probation or later) has every later one closed at its end (as
  ``proxy.BackendResponse`` does on aiohttp's path); once :data:`STREAMS_PROVEN` have outlasted it
  with none closed, they go back to the pool at once, as any other. A request waiting for room is
  never kept waiting by a probation: the connection is closed for it instead. Idle
  connections are closed after ``keepalive`` seconds (:meth:`Pool.sweep`, from the header watchdog's
  loop: no timer per request) and bytes a backend sends on an idle connection close it.
- Open connections (connecting ones included) are bounded by ``limit``; a request beyond it waits
  for one to be given back or closed (within the caller's backend header timeout).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
from collections.abc import Callable, Iterable
from typing import cast

import aiohttp
import yarl
from aiohttp import base_protocol, http_parser, streams
from multidict import CIMultiDictProxy

from noctaya.gateway import chunked, eventloop

#: the response parser's bounds: aiohttp's client defaults, as before this pool
MAX_LINE_BYTES = 8190
MAX_FIELD_BYTES = 8190
MAX_HEADERS = 128
READ_BUFFER = 2**16
"""Bytes of an answer's body buffered before reading from the backend pauses."""
STREAM_PROBATION = 1.0
"""Seconds a connection that carried an event stream waits, idle, before it may carry a request: a
backend that closes such connections after the stream is seen doing so within it."""
STREAMS_PROVEN = 3
"""Event streams' connections that must outlast their probation (none closed by the backend) before
such connections go back to the pool at once."""
_NO_BODY_STATUSES = frozenset({204, 304})
EVENT_STREAM = "text/event-stream"
LAST_CHUNK = b"0\r\n\r\n"
"""The end of a chunked body as a raw relay writes it (no trailer fields)."""


class Unreached(Exception):
    """The backend could not be connected to; no byte of the request was sent."""


class MalformedAnswer(aiohttp.ClientError):
    """The backend's answer is not valid HTTP/1.x (its head did not parse)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class Address:
    """Where the backend listens, and the ``Host`` its requests carry."""

    host: str
    port: int
    authority: str


class Answer:
    """A backend's answer as the relay reads it: the parts of ``aiohttp.ClientResponse`` it uses
    (``status``, ``reason``, ``headers``, ``content``, ``content_type``, ``close``, ``release``), and
    for a chunked body :attr:`raw` (it may be passed on as it came, :meth:`Connection.relay`)."""

    __slots__ = ("_connection", "_content", "_released", "content_type", "headers", "raw", "reason", "status")

    def __init__(
        self,
        connection: Connection,
        *,
        status: int,
        reason: str,
        headers: CIMultiDictProxy[str],
        content: streams.StreamReader,
        raw: bool,
    ) -> None:
        self._connection = connection
        self._released = False
        self.status = status
        self.reason = reason
        self.headers = headers
        #: the body is chunked and not yet read: :meth:`Connection.relay` may pass it on as it came
        self.raw = raw
        self._content: streams.StreamReader | None = None if raw else content
        raw_type = headers.get("Content-Type")
        self.content_type = (
            "application/octet-stream" if raw_type is None else raw_type.partition(";")[0].strip().lower()
        )
        if self.content_type == EVENT_STREAM:
            # pooled only past its probation, or once the backend is known to keep such connections
            # (llama.cpp's server closes them after the stream without saying so: see ``Pool.put``)
            connection.streamed = True

    @property
    def content(self) -> streams.StreamReader:
        """The body, decoded (for a :attr:`raw` one, from now on: it can no longer be relayed raw)."""
        if self._content is None:
            self.raw = False
            self._content = self._connection.decode()
        return self._content

    def close(self) -> None:
        """Close the connection now (the body's reader fails with ``ClientPayloadError``)."""
        self._connection.close()

    @property
    def connection(self) -> Connection:
        """The connection the answer is read from (for :meth:`Connection.pipe` and ``relay``)."""
        return self._connection

    def release(self) -> None:
        """The relay is done with the answer: its connection back to the pool if it may be reused
        (once: a second call does nothing)."""
        if self._released:
            return
        self._released = True
        connection = self._connection
        if connection.reusable():
            connection.pool.put(connection)
        else:
            connection.close()


_NOT_LOST = object()
"""``Connection._lost`` while the connection is open (a loss is kept there while a chunked body
waits for its reader: the exception, or None for a clean close)."""

AnswerHead = tuple[http_parser.RawResponseMessage, streams.StreamReader, bool]
"""An answer's head, its body's llhttp reader, and whether that body may be relayed raw."""


Told = Callable[["AnswerHead | None", "BaseException | None"], None]
"""Told an answer's head, or the failure that came before it (``Connection.send_told``)."""


class _Telling:
    """An answer's waiter that tells a callback instead of waking a task: the head once the read that
    completed it is done (so the callback may use the connection at once: no read is in progress),
    a failure in a callback of its own (it may come from inside the connection's loss)."""

    __slots__ = ("_connection", "_done", "_result", "_told")

    def __init__(self, connection: Connection, told: Told) -> None:
        self._connection = connection
        self._told = told
        self._done = False
        self._result: AnswerHead | None = None

    def done(self) -> bool:
        return self._done

    def set_result(self, result: AnswerHead) -> None:
        self._done = True
        self._result = result
        self._connection._telling = self  # told at the end of the read: ``Connection.data_received``

    def set_exception(self, exc: BaseException) -> None:
        self._done = True
        self._connection._loop.call_soon(self._told, None, exc)

    def tell(self) -> None:
        self._told(self._result, None)


class Connection(base_protocol.BaseProtocol):
    """One backend connection: its parser for the answer being read, and that answer's waiter."""

    __slots__ = (
        "_answer",
        "_body",
        "_congested",
        "_failure",
        "_flushing",
        "_framing",
        "_head_only",
        "_listener",
        "_lost",
        "_pending",
        "_pending_size",
        "_signal",
        "_sink",
        "_tail",
        "_telling",
        "counted",
        "ended_at",
        "idle_since",
        "keep",
        "pool",
        "probation_until",
        "streamed",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop, pool: Pool) -> None:
        super().__init__(loop)
        self.pool = pool
        self.counted = True  # in the pool's ``open`` count until it is forgotten
        self.idle_since = 0.0
        #: when the backend's answer ended (its last byte read), for the keep-alive: None until then
        self.ended_at: float | None = None
        self.keep = True
        #: its last answer was an event stream (see ``Pool.put``)
        self.streamed = False
        #: idle on probation until then (see ``Pool.put``); None when it is not
        self.probation_until: float | None = None
        self._answer: asyncio.Future[AnswerHead] | _Telling | None = None
        self._telling: _Telling | None = None  # a head to tell at the end of this read
        self._body: streams.StreamReader | None = None  # the body being read by llhttp
        self._head_only = False
        # the last bytes of a head not yet whole (its end may straddle two reads); None: llhttp reads
        # all of this answer as it comes
        self._tail: bytes | None = b""
        # a chunked body's bytes waiting for the relay to choose raw or decoded (None: no such body)
        self._pending: list[bytes] | None = None
        self._pending_size = 0
        self._lost: object = _NOT_LOST  # the connection's loss while the body waited
        self._framing: chunked.Framing | None = None  # the body passed on raw, its framing followed
        self._failure: aiohttp.ClientPayloadError | None = None  # how a raw body broke off
        self._sink: Callable[[bytes], bool] | None = None  # where the body goes while piped
        self._signal: asyncio.Future[None] | None = None  # the pipe's waiter
        self._listener: Callable[[], None] | None = None  # the pipe's callback (see ``listen``)
        self._congested = False
        self._flushing = False

    def send(self, head: bytes, body: bytes | None, *, head_only: bool) -> asyncio.Future[AnswerHead]:
        """Write one request (one write); the future of its answer's head and body reader."""
        answer = self._loop.create_future()
        self._write(head, body, head_only=head_only, answer=answer)
        return answer

    def send_told(self, head: bytes, body: bytes | None, told: Told) -> None:
        """:meth:`send` for a caller that follows the answer in callbacks: ``told(head, None)`` at the
        end of the read that completed the head (no loop turn in between), or ``told(None, failure)``."""
        self._write(head, body, head_only=False, answer=_Telling(self, told))

    def _write(
        self,
        head: bytes,
        body: bytes | None,
        *,
        head_only: bool,
        answer: asyncio.Future[AnswerHead] | _Telling,
    ) -> None:
        self._head_only = head_only
        self._telling = None
        self._parser = http_parser.HttpResponseParser(
            self,
            self._loop,
            READ_BUFFER,
            payload_exception=aiohttp.ClientPayloadError,
            response_with_body=not head_only,
            read_until_eof=True,
            auto_decompress=False,
            max_line_size=MAX_LINE_BYTES,
            max_field_size=MAX_FIELD_BYTES,
            max_headers=MAX_HEADERS,
        )
        self._body = None
        self._tail = b""
        self._pending = None
        self._pending_size = 0
        self._lost = _NOT_LOST
        self._framing = None
        self._failure = None
        self._listener = None
        self.ended_at = None
        self.streamed = False
        self._answer = answer
        assert self.transport is not None
        if body:
            self.transport.writelines((head, body))
        else:
            self.transport.write(head)

    def reusable(self) -> bool:
        """Its answer was read whole and nothing holds its reading paused: a connection a congested
        pipe paused (its client left or timed out before draining) would never read the next answer."""
        if not (
            self.keep
            and self.transport is not None
            and not self.transport.is_closing()
            and self._answer is None
            and self._pending is None
            and not self._congested
            and not self._buffer_paused
            and not self._reading_paused
        ):
            return False
        framing = self._framing
        if framing is not None:
            return framing.ended and not framing.extra and self._failure is None
        body = self._body
        return body is not None and body.is_eof() and body.exception() is None

    def idle(self) -> None:
        """Its answer is over: nothing is expected on it until the next request."""
        self._parser = None
        self._body = None
        self._sink = None
        self._listener = None
        self._framing = None
        self._pending = None

    def resume_reading(self, resume_parser: bool = True) -> None:
        """The body's reader asks to resume whenever it was read below its low mark, paused or not
        (every chunk, when piped): only a paused connection has anything to resume."""
        if self._reading_paused:
            super().resume_reading(resume_parser)

    @property
    def boundary(self) -> bool:
        """What a raw relay passed on ends at a chunk boundary (another chunk may follow it)."""
        framing = self._framing
        return framing is None or framing.boundary

    def decode(self) -> streams.StreamReader:
        """The answer's body as llhttp decodes it. A chunked body that waits for its reader is decoded
        from now on: what was buffered is parsed now, and what comes next as it comes."""
        assert self._framing is None, "decode: the body is being relayed raw"
        pending = self._pending
        if pending is None:
            body = self._body
            assert body is not None
            return body
        self._pending = None
        lost, self._lost = self._lost, _NOT_LOST
        for data in pending:
            self._parse(data)
        if lost is not _NOT_LOST:
            self._lose(lost if isinstance(lost, BaseException) else None)
        elif self._buffer_paused and not self._congested:
            self._resume_reading_for_buffer()
        body = self._body
        assert body is not None
        return body

    @property
    def waiting(self) -> bool:
        """Bytes of a chunked body that waits for its reader have come already."""
        return bool(self._pending)

    def relay(self, sink: Callable[[bytes], bool]) -> bytes:
        """Pass the waiting chunked body on as it came: canonically framed, its trailer fields left
        out and its end written as ``0 CRLF CRLF`` after the last chunk. What came already is
        returned (for the caller to write first); what comes next goes to ``sink`` in the callback
        that read it. ``sink`` returns True when its side cannot take more: reading pauses until
        :meth:`resume`. See :meth:`piped`."""
        pending = self._pending
        assert pending is not None, "relay: no chunked body waits"
        self._pending = None
        self._framing = chunked.Framing(hold=READ_BUFFER)
        passed = [self._pass(data) for data in pending]
        self._sink = sink
        lost, self._lost = self._lost, _NOT_LOST
        if lost is not _NOT_LOST:
            self._break_off(lost if isinstance(lost, BaseException) else None)
        elif self._buffer_paused and not self._congested:
            self._resume_reading_for_buffer()
        return b"".join(passed)

    def pipe(self, sink: Callable[[bytes], bool]) -> None:
        """From now on the answer's decoded body goes to ``sink`` as it is parsed, in the callback that
        read it (no reader task woken per chunk). ``sink`` returns True when its side cannot take
        more: reading from the backend pauses until :meth:`resume`. See :meth:`piped`."""
        if self._pending is not None:
            self.decode()
        self._sink = sink
        self._flush()

    def progress(self) -> bool | None:
        """Where the pipe (or raw relay) stands: True when its sink is congested (call :meth:`resume`
        once it drained), False when the body ended, None while it runs; raises the body's failure
        (``ClientPayloadError``)."""
        framing = self._framing
        if framing is not None:
            if self._failure is not None:
                raise self._failure
            if self._congested:
                return True
            return False if framing.ended else None
        body = self._body
        assert body is not None
        failure = body.exception()
        if failure is not None:
            raise failure
        if self._congested:
            return True
        return False if body.at_eof() else None

    async def piped(self) -> bool:
        """Wait for the pipe (or raw relay) to congest or end: :meth:`progress` once it is not None."""
        while True:
            state = self.progress()
            if state is not None:
                return state
            self._signal = signal = self._loop.create_future()
            try:
                await signal
            finally:
                self._signal = None

    def listen(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` soon (never from inside a read) whenever :meth:`progress` may have moved:
        the body ended, failed, or its sink filled. For a caller that follows the pipe in callbacks
        rather than awaiting :meth:`piped`."""
        self._listener = callback

    def resume(self) -> None:
        """The sink drained: pass on what is buffered and read from the backend again."""
        if self._congested:
            self._congested = False
            self.pool.paused -= 1
            self._resume_reading_for_buffer()
        if self._framing is None:
            self._flush()

    def _congest(self) -> None:
        self._congested = True
        self.pool.paused += 1
        self._pause_reading_for_buffer()

    def _wake(self) -> None:
        signal = self._signal
        if signal is not None and not signal.done():
            signal.set_result(None)
        if self._listener is not None:
            # after the read that woke it: that read may still be passing bytes to the sink
            self._loop.call_soon(self._listener)

    def _flush(self) -> None:
        """Pass the buffered body to the sink, unless it is congested; wake the pipe's waiter when
        the body ends, fails or the sink fills. A reader that resumes reading re-enters here through
        ``data_received``: the outer call goes on with what it parsed, in order."""
        body, sink = self._body, self._sink
        if body is None or sink is None or self._flushing:
            return
        self._flushing = True
        try:
            while not self._congested and body.exception() is None:
                chunk = body.read_nowait()
                if not chunk:
                    break
                if sink(chunk):
                    self._congest()
        finally:
            self._flushing = False
        if self._congested or body.at_eof() or body.exception() is not None:
            self._wake()

    def _pass(self, data: bytes) -> bytes:
        """One read of a raw relay's body: what may pass now (with the body's end, once it came)."""
        framing = self._framing
        assert framing is not None
        if self._failure is not None:
            return b""
        try:
            out = framing.feed(data)
        except chunked.BadFraming as exc:
            return self._broken(exc)
        if framing.ended:
            return self._ending(out, data)
        return out

    def _broken(self, exc: chunked.BadFraming) -> bytes:
        """A raw relay's framing is broken: the body fails, the connection is closed; nothing passes."""
        self.keep = False
        self._failure = aiohttp.ClientPayloadError(f"the backend's answer broke off ({exc})")
        self._wake()
        if self.transport is not None:
            self.transport.abort()
        return b""

    def _ending(self, out: bytes, data: bytes) -> bytes:
        """A raw relay's read after its framing ended: the body's end the first time, with ``out``;
        later, bytes nothing asked for close the connection."""
        framing = self._framing
        assert framing is not None
        if self.ended_at is None:
            self.ended_at = self._loop.time()
            if framing.extra:
                self.keep = False
            self._wake()
            return out + LAST_CHUNK
        if data:
            self.close()  # bytes after the answer's end: nothing asked for them
        return out

    def _break_off(self, exc: BaseException | None) -> None:
        """A raw relay's connection is lost: its body broke off unless it had ended."""
        framing = self._framing
        if framing is None or framing.ended or self._failure is not None:
            return
        reason = "the connection closed" if exc is None else type(exc).__name__
        self._failure = aiohttp.ClientPayloadError(f"the backend's answer broke off ({reason})")
        self._wake()

    def close(self) -> None:
        self.keep = False
        if self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        if self._framing is not None:  # a raw relay
            if data and (out := self._pass(data)):
                sink = self._sink
                assert sink is not None
                if sink(out) and not self._congested:
                    self._congest()
                    self._wake()
            return
        if self._parser is None:
            # bytes on an idle connection (b"": a reader resuming): nothing asked for them
            if data:
                self.close()
            return
        pending = self._pending
        fed = False  # llhttp was fed all of ``data`` already (b"" still resumes a paused parser)
        if pending is None and data and self._answer is not None and not self._head_only:
            data = self._head(data)
            pending = self._pending
            fed = not data
        if pending is not None:  # a chunked body waiting for the relay to choose how it is read
            if data:
                pending.append(data)
                self._pending_size += len(data)
                if self._pending_size > READ_BUFFER and not self._buffer_paused:
                    self._pause_reading_for_buffer()
        elif not fed:
            self._parse(data)
        telling = self._telling
        if telling is not None:  # a head completed by this read, for a caller told in a callback
            self._telling = None
            telling.tell()

    def _head(self, data: bytes) -> bytes:
        """Feed llhttp the answer's head(s) in ``data``, no further than the end of the final one when
        its body is chunked (the rest is returned, for :attr:`_pending`); otherwise all of it is fed
        (nothing returned). An interim answer's head (1xx) is fed and passed over."""
        while self._answer is not None and data and self._tail is not None:
            if b"chunked" not in data:  # not a chunked answer's head (or one written oddly: decoded)
                self._tail = (self._tail + data[-2:])[-2:]
                break
            seen = self._tail + data
            ends = [found + len(mark) for mark in (b"\n\r\n", b"\n\n") if (found := seen.find(mark)) >= 0]
            if not ends:
                self._tail = seen[-2:]
                self._parse(data)
                return b""
            end = min(ends) - len(self._tail)
            self._tail = b""
            head, data = data[:end], data[end:]
            if not self._parse(head, whole_head=True):
                if self._answer is None or self.transport is None or self.transport.is_closing():
                    return b""  # failed: the connection is closed
                self._tail = None  # llhttp read no head where one ended: it reads all of this answer
            elif self._pending is not None:
                return data
        if data:
            self._parse(data)
        return b""

    def _parse(self, data: bytes, *, whole_head: bool = False) -> bool:
        """Feed ``data`` to llhttp; False when parsing failed (the connection is closed), or when
        ``whole_head`` (``data`` ends where a head ends) and llhttp did not see a head end there."""
        parser = self._parser
        assert parser is not None
        try:
            messages, _, _ = parser.feed_data(data)
        except Exception as exc:  # every parse failure ends the connection
            self.keep = False
            self._fail(MalformedAnswer(type(exc).__name__), cause=exc)
            if self.transport is not None:
                self.transport.abort()
            return False
        for message, payload in messages:
            self._message(message, payload, whole_head=whole_head)
        body = self._body
        if self.ended_at is None and body is not None and body.is_eof():
            self.ended_at = self._loop.time()
        if self._sink is not None:
            self._flush()
        return not (whole_head and not messages)

    def _message(
        self, message: http_parser.RawResponseMessage, payload: streams.StreamReader, *, whole_head: bool
    ) -> None:
        answer = self._answer
        if 100 <= message.code < 200 and message.code != 101:
            return  # an interim answer (103 Early Hints...): the final one follows
        if answer is None or answer.done():  # a second answer to one request: the backend is confused
            self.close()
            return
        self._answer = None
        if message.should_close:
            self.keep = False
        if self._head_only or message.code in _NO_BODY_STATUSES:
            payload = streams.EMPTY_PAYLOAD
        self._body = payload
        raw = whole_head and payload is not streams.EMPTY_PAYLOAD and _chunked_alone(message)
        if raw:
            self._pending = []
        answer.set_result((message, payload, raw))

    def _fail(self, exc: BaseException, *, cause: BaseException | None) -> None:
        answer = self._answer
        if answer is not None:
            self._answer = None
            if not answer.done():
                exc.__cause__ = cause
                answer.set_exception(exc)
            return
        body = self._body
        if body is not None and not body.is_eof() and body.exception() is None:
            body.set_exception(aiohttp.ClientPayloadError(f"the backend's answer broke off ({exc})"))
            self._flush()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # not aiohttp's, which sets TCP_NODELAY again through a socket object made for it: uvloop's
        # and asyncio's TCP transports set it themselves
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: BaseException | None) -> None:
        super().connection_lost(exc)
        by_backend = self.keep  # we set it False before we close a connection
        self.keep = False
        if self._congested:
            self._congested = False
            self.pool.paused -= 1
        self.pool.forget(self, by_backend=by_backend)
        if self._pending is not None:  # the body waits for its reader: the loss is its to meet
            self._lost = exc
            return
        if self._framing is not None:
            self._break_off(exc)
            return
        self._lose(exc)

    def _lose(self, exc: BaseException | None) -> None:
        """The connection is lost while llhttp reads its answer: an answer read until the connection
        closes ends here, any other one not yet whole fails."""
        parser = self._parser
        if parser is not None and self._answer is None:
            try:
                parser.feed_eof()  # an answer read until the connection closes ends here
            except Exception as failed:  # a body cut short
                self._fail(failed, cause=exc)
        if isinstance(exc, OSError):
            error: BaseException = aiohttp.ClientOSError(*exc.args)
        else:
            error = aiohttp.ServerDisconnectedError()
        self._fail(error, cause=exc)  # the answer not yet headed, or its body not ended
        self._flush()  # a body read until the connection closed has ended
        self._parser = None


def _chunked_alone(message: http_parser.RawResponseMessage) -> bool:
    """The answer's body is framed by chunked coding alone (no other transfer coding, no
    ``Content-Length``), so it may pass on as it came."""
    if not message.chunked or message.upgrade:
        return False
    headers = message.headers
    codings = headers.getall("Transfer-Encoding", ())
    return len(codings) == 1 and codings[0].strip().lower() == "chunked" and "Content-Length" not in headers


class Pool:
    """Keep-alive connections to one backend ``address``, at most ``limit`` open."""

    def __init__(self, *, address: Address, limit: int, connect_timeout: float, keepalive: float) -> None:
        self.address = address
        self.limit = limit
        self.connect_timeout = connect_timeout
        self.keepalive = keepalive
        self.open = 0
        #: connections whose reading is paused until the client they are piped to drains
        self.paused = 0
        self._idle: list[Connection] = []  # the most recently used last
        #: event streams' connections waiting out their probation, oldest first (see :meth:`put`)
        self._probation: collections.deque[Connection] = collections.deque()
        self._outlasted = 0  # of them, how many outlasted it
        #: whether the backend keeps an event stream's connection open: None until it is known
        self.streams_kept: bool | None = None
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._woken = 0  # waiters woken for a connection given back, not yet run
        self._closed = False
        self._loop = eventloop.RunningLoop()  # the loop the pool runs on

    @property
    def idle(self) -> int:
        return len(self._idle) + len(self._probation)

    async def take(self) -> Connection:
        """An open connection: a pooled one if any is still open and idle for less than ``keepalive``,
        else a new one within ``limit``."""
        connection = self._pooled()
        if connection is not None:
            return connection
        if self.open >= self.limit and self._probation:
            # room is worth more than an unproven connection: the youngest goes, so that the oldest
            # still see their probation out (dropping the oldest, streams coming faster than
            # ``limit`` a probation would have every one dropped before it ends: never proven)
            self._drop(self._probation[-1])
        while self.open >= self.limit and not self._closed:
            waiter = self._loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                elif waiter.done() and not waiter.cancelled():
                    self._woken -= 1
                    self._wake()  # woken, then gone before it ran: the wake is the next waiter's
                raise
            self._woken -= 1
            connection = self._pooled()
            if connection is not None:
                return connection
        return await self._connect()

    def _pooled(self) -> Connection | None:
        """The most recently used idle connection still open and inside the keep-alive (checked here,
        not only by :meth:`sweep`, which runs once per watchdog period); the others met are closed."""
        idle = self._idle
        now = self._loop().time()
        if self._probation:
            self._promote(now)
        while idle:
            connection = idle.pop()
            transport = connection.transport
            if (
                transport is not None
                and not transport.is_closing()
                and now - connection.idle_since < self.keepalive
            ):
                return connection
            self._drop(connection)  # closing, or idle too long: before a byte was written to it
        return None

    def take_idle(self) -> Connection | None:
        """An idle pooled connection now (see :meth:`take`), or None: nothing is opened or waited for."""
        if self._waiters or self._woken:  # those waiting for room come first, woken or not yet
            return None
        return self._pooled()

    def untake(self, connection: Connection) -> None:
        """``connection`` (from :meth:`take_idle`) was not used after all: idle again, as it was."""
        self._idle.append(connection)
        self._wake()

    async def request(self, head: bytes, body: bytes | None, *, head_only: bool) -> Answer:
        """Send one request (``head`` ends with its blank line) and return its answer once its head
        is read; a failure after the write is never retried. Cancelled (the header timeout, or the
        client left), its connection is closed."""
        connection = await self.take()
        answer = connection.send(head, body, head_only=head_only)
        try:
            message, payload, raw = await answer
        except BaseException:
            connection.close()
            raise
        return Answer(
            connection,
            status=message.code,
            reason=message.reason,
            headers=message.headers,
            content=payload,
            raw=raw,
        )

    async def _connect(self) -> Connection:
        loop = self._loop()
        made: list[Connection] = []

        def factory() -> Connection:
            connection = Connection(loop, self)
            made.append(connection)
            return connection

        self.open += 1
        try:
            async with asyncio.timeout(self.connect_timeout):
                _, connection = await loop.create_connection(factory, self.address.host, self.address.port)
        except BaseException as exc:
            if made:
                made[0].close()
                self.forget(made[0])
            else:
                self.open -= 1
                self._wake()
            if isinstance(exc, TimeoutError | OSError):
                raise Unreached(f"{type(exc).__name__}: {exc}") from None
            raise
        return connection

    def put(self, connection: Connection) -> None:
        """A connection whose answer was read to its end, back for the next request."""
        connection.idle()
        if self._closed:
            connection.close()
            return
        now = self._loop().time()
        # idle since the backend's answer ended, not since a slow client finished reading it
        connection.idle_since = now if connection.ended_at is None else min(now, connection.ended_at)
        streamed = connection.streamed
        if now - connection.idle_since >= self.keepalive or (streamed and self.streams_kept is False):
            self._drop(connection)
            return
        if streamed and self.streams_kept is None:
            if self._waiters:  # a request waits for room: it is not kept waiting for a probation
                self._drop(connection)
                return
            # on probation: idle and unused until the backend has had the time to close it
            connection.probation_until = now + STREAM_PROBATION
            self._probation.append(connection)
            return
        self._idle.append(connection)
        self._wake()

    def _promote(self, now: float) -> None:
        """Connections past their probation (all still open: a closed one has left it) join the
        idle ones; enough of them prove the backend keeps event streams' connections."""
        probation = self._probation
        while probation:
            until = probation[0].probation_until
            if until is None or until > now:
                return
            if self.streams_kept is False:  # seen closing another meanwhile: none is trusted
                self._drop(probation[0])
                continue
            connection = probation.popleft()
            connection.probation_until = None
            self._outlasted += 1
            if self._outlasted >= STREAMS_PROVEN and self.streams_kept is None:
                self.streams_kept = True
            self._idle.append(connection)
            self._wake()

    def _drop(self, connection: Connection) -> None:
        """Close ``connection`` now and stop counting it (on probation or idle, it leaves that too)."""
        connection.close()
        self.forget(connection)

    def forget(self, connection: Connection, *, by_backend: bool = False) -> None:
        """``connection`` is closed (``by_backend``: the backend closed it): it no longer counts."""
        if connection.counted:
            connection.counted = False
            self.open -= 1
            if connection.probation_until is not None:
                connection.probation_until = None
                self._probation.remove(connection)
            elif connection in self._idle:
                self._idle.remove(connection)
            if by_backend and connection.streamed:
                # it closes event streams' connections after them (on probation, or later: a verdict
                # of keeping them is taken back), so every later one is closed at its end
                self.streams_kept = False
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                self._woken += 1
                return

    def sweep(self, *, now: float) -> None:
        """Close the connections idle for ``keepalive`` seconds or more (probation ends first: a
        connection past it joins the idle ones, in no particular order of idleness)."""
        self._promote(now)
        expired = [connection for connection in self._idle if now - connection.idle_since >= self.keepalive]
        for connection in expired:
            self._idle.remove(connection)
            connection.close()

    def close(self) -> None:
        """Close every idle connection and take none back (the gateway is stopping)."""
        self._closed = True
        for connection in self._idle:
            connection.close()
        self._idle.clear()
        while self._probation:
            connection = self._probation.popleft()
            connection.probation_until = None
            connection.close()
        while self._waiters:  # every waiter, not one: none of them will get a connection now
            self._wake()


def address_of(base_url: str) -> Address | None:
    """The address of a backend URL the pool serves: plain ``http://host[:port]`` with no path,
    user or query; None for any other (those keep aiohttp's client)."""
    try:
        url = yarl.URL(base_url)
    except ValueError:
        return None
    if (
        url.scheme != "http"
        or url.raw_host is None
        or url.port is None
        or url.raw_user is not None
        or url.raw_password is not None
        or url.raw_path not in ("", "/")
        or base_url.endswith("/")
        or url.raw_query_string
        or url.raw_fragment
    ):
        return None
    authority = url.host_port_subcomponent
    if authority is None:
        return None
    return Address(host=url.raw_host, port=url.port, authority=authority)


#: methods sent with no ``Content-Length`` when they carry no body (aiohttp's client does the same)
_BODILESS_METHODS = frozenset({b"GET", b"HEAD", b"OPTIONS", b"TRACE"})


def request_head(
    *, method: str, target: str, authority: str, headers: Iterable[tuple[str, str]], body: bytes | None
) -> bytes | None:
    """:func:`head_of` for headers given as text; None also for text that is not UTF-8 (the caller
    uses aiohttp's client, which refuses it)."""
    try:
        fields = [(name.encode("utf-8"), value.encode("utf-8")) for name, value in headers]
        return head_of(
            method=method.encode("utf-8"),
            target=target.encode("utf-8"),
            authority=authority.encode("utf-8"),
            fields=fields,
            body=body,
        )
    except UnicodeEncodeError:
        return None


def head_of(
    *,
    method: bytes,
    target: bytes,
    authority: bytes,
    fields: Iterable[tuple[bytes, bytes]],
    body: bytes | None,
) -> bytes | None:
    """The request's head as it is written to the backend: request line, ``Host``, ``fields`` (the
    caller's rewritten headers, with no ``Host`` or ``Content-Length``), the body's ``Content-Length``
    and the blank line, in one buffer. None when it cannot be written as given (a CR or LF inside a
    name, value or the target, which would split it): the caller uses aiohttp's client, which
    refuses those."""
    parts = [method, b" ", target, b" HTTP/1.1\r\nHost: ", authority, b"\r\n"]
    lines = 3  # the request line, Host and the blank line
    for name, value in fields:
        parts += (name, b": ", value, b"\r\n")
        lines += 1
    if body is not None:
        parts += (b"Content-Length: ", b"%d" % len(body), b"\r\n")
        lines += 1
    elif method not in _BODILESS_METHODS:
        parts.append(b"Content-Length: 0\r\n")
        lines += 1
    parts.append(b"\r\n")
    head = b"".join(parts)
    if head.count(b"\n") != lines or head.count(b"\r") != lines:
        return None
    return head
