"""Chunked answers from the backend pool passed to the client as they came, and event streams'
connections kept or closed by what the backend is seen to do.

Aspects: a chunked answer reaches an HTTP/1.1 client with the backend's chunks, canonically framed
(extensions, spaces after a size and a bare LF after a chunk's data rewritten; trailer fields
dropped), and an HTTP/1.0 client decoded; a backend that fails between chunks ends an event stream
with the error event, one that fails inside a large chunk already passed on in part cuts the client
(nothing may follow a partial chunk), and broken framing is a failure of the backend's, never passed
on; an event stream's connection waits out its probation before it carries another request, a
backend that closes one in it has every later one closed at its end, and one proven to keep them
has them pooled at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import pytest
from aiohttp import web

from noctaya.gateway import app as app_
from noctaya.gateway import backend, errors, proxy, testing
from tests.gateway.conftest import pool_for

Writer = Callable[[asyncio.StreamWriter, int], Awaitable[bool]]
"""(the connection's writer, request number) -> writes an answer; False: then close the connection."""

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


class ChunkedBackend:
    """Answers probes (and the gateway's own model-list read) with a 200 and closes; every other
    request with ``write``, on a connection kept open unless ``write`` says otherwise."""

    def __init__(self, write: Writer) -> None:
        self.write = write
        self.requests = 0
        self.connections = 0
        self.closed_by_us = 0
        self.serving: set[asyncio.Task[object]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.serving.add(task)
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"GET /health ") or testing.own_read(head):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    await writer.drain()
                    return
                match = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                await reader.readexactly(int(match.group(1)) if match else 0)
                self.requests += 1
                if not await self.write(writer, self.requests):
                    self.closed_by_us += 1
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            self.serving.discard(task)


@contextlib.asynccontextmanager
async def chunked_backend(write: Writer) -> AsyncIterator[tuple[str, ChunkedBackend]]:
    served = ChunkedBackend(write)
    server = await asyncio.start_server(served.serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", served
    finally:
        async with asyncio.timeout(5):  # every connection has seen its end (the pool closed them)
            while served.serving:  # noqa: ASYNC110 - one task per connection, each ends on its own
                await asyncio.sleep(0.01)
        server.close()
        await server.wait_closed()


async def raw_exchange(url: str, request: bytes) -> bytes:
    """Send ``request`` on a new connection and read the whole answer (until the gateway closes)."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(request)
        async with asyncio.timeout(10):
            return await reader.read(-1)
    finally:
        writer.close()


def chunks(body: bytes) -> list[bytes]:
    """The chunks of a canonically framed body ending in its last chunk (every size line is hex digits
    and CRLF, nothing else)."""
    found: list[bytes] = []
    pos = 0
    while True:
        line = re.compile(rb"([0-9a-fA-F]+)\r\n").match(body, pos)
        assert line is not None, body[pos : pos + 40]
        size = int(line.group(1), 16)
        if size == 0:
            assert body[line.end() :] == b"\r\n"
            return found
        end = line.end() + size
        assert body[end : end + 2] == b"\r\n"
        found.append(body[line.end() : end])
        pos = end + 2


EVENTS = [b"data: %d\n\n" % n for n in range(3)]


async def odd_framing(writer: asyncio.StreamWriter, n: int) -> bool:
    """Three events, each framed another way llhttp's lax reading accepts, then trailer fields."""
    writer.write(
        SSE_HEAD
        + b"%x;name=value\r\n%b\r\n" % (len(EVENTS[0]), EVENTS[0])
        + b"%x  \r\n%b\n" % (len(EVENTS[1]), EVENTS[1])
        + b"000%X\r\n%b\r\n" % (len(EVENTS[2]), EVENTS[2])
        + b"0\r\nX-Usage: 3\r\n\r\n"
    )
    await writer.drain()
    return True


async def test_a_chunked_answer_reaches_the_client_canonically_framed_and_an_old_client_decoded() -> None:
    async with (
        chunked_backend(odd_framing) as (url, _),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        target = b"POST /v1/chat/completions HTTP/1.%d\r\nHost: g\r\nContent-Length: 2\r\n%b\r\n{}"
        answer = await raw_exchange(gateway.url, target % (1, b"Connection: close\r\n"))
        head, _, body = answer.partition(b"\r\n\r\n")
        assert b"\r\ntransfer-encoding: chunked" in head.lower() and b"x-usage" not in answer.lower()
        assert chunks(body) == EVENTS  # the backend's chunks, each framed as HEX CRLF data CRLF
        old = await raw_exchange(gateway.url, target % (0, b""))
        head, _, body = old.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.0 200") and b"chunked" not in head.lower()
        assert body == b"".join(EVENTS)
        await gateway.wait_idle()


def event_stream(*, then: bytes, close: bool = True) -> Writer:
    """Two events, then ``then`` (the rest of the answer, or what breaks it); the connection is
    closed after it when ``close``."""

    async def write(writer: asyncio.StreamWriter, n: int) -> bool:
        writer.write(SSE_HEAD + chunk(b"data: one\n\n") + chunk(b"data: two\n\n"))
        await writer.drain()
        await asyncio.sleep(0.05)  # the first events are relayed before the rest comes
        writer.write(then)
        await writer.drain()
        return not close

    return write


def error_of(event: bytes) -> dict[str, object]:
    assert event.startswith(b"data: ") and event.endswith(b"\n\n")
    document = json.loads(event[6:])
    assert isinstance(document, dict) and isinstance(document["error"], dict)
    return document["error"]


@pytest.mark.parametrize(
    "then",
    [b"", b"d\r\ndata: thr", b"zz\r\n"],
    ids=["closed-between-chunks", "closed-inside-a-small-chunk", "broken-framing"],
)
async def test_a_stream_the_backend_breaks_at_a_chunk_boundary_ends_with_the_error_event(
    http: aiohttp.ClientSession, then: bytes
) -> None:
    """A small chunk not yet whole is held, not passed on in part: the stream is still at a chunk
    boundary, so the error event can follow; broken framing is never passed on."""
    async with (
        chunked_backend(event_stream(then=then)) as (url, _),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        async with http.post(gateway.url + "/v1/chat/completions", json={"stream": True}) as answer:
            assert answer.status == 200
            body = await answer.read()
        one, two, failed = body.split(b"\n\n", 2)
        assert (one, two) == (b"data: one", b"data: two")
        assert error_of(failed) == error_of(errors.backend_failed_event())
        await gateway.wait_idle()


async def test_a_stream_cut_inside_a_large_chunk_cuts_the_client() -> None:
    """A chunk larger than the hold is passed on as it arrives; cut inside it, the client's stream
    cannot go on (nothing may follow part of a chunk): it is cut, never given an event after it."""
    size = backend.READ_BUFFER * 2
    part = b"data: " + b"x" * 1000
    async with (
        chunked_backend(event_stream(then=b"%x\r\n%b" % (size, part))) as (url, _),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        answer = await raw_exchange(
            gateway.url, b"POST /v1/chat/completions HTTP/1.1\r\nHost: g\r\nContent-Length: 2\r\n\r\n{}"
        )
        _, _, body = answer.partition(b"\r\n\r\n")
        assert body.endswith(b"%x\r\n%b" % (size, part))  # the part passed on, then the cut
        assert b"error" not in body
        await gateway.wait_idle()


async def stream_then_keep(writer: asyncio.StreamWriter, n: int) -> bool:
    writer.write(SSE_HEAD + chunk(b"data: %02d\n\n" % n) + b"0\r\n\r\n")
    await writer.drain()
    return True


async def stream_then_close(writer: asyncio.StreamWriter, n: int) -> bool:
    """What llama.cpp's server does: the stream ends, then the connection, with no word of it."""
    await stream_then_keep(writer, n)
    return False


async def one_stream(pool: backend.Pool, head: bytes) -> bytes:
    answer = await pool.request(head, None, head_only=False)
    assert answer.status == 200 and answer.raw
    passed: list[bytes] = []

    def sink(data: bytes) -> bool:
        passed.append(data)
        return False

    passed.insert(0, answer.connection.relay(sink))  # what came with the head, then the rest
    assert not await answer.connection.piped()
    answer.release()
    return b"".join(passed)


async def test_an_event_streams_connection_waits_out_its_probation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)
    async with chunked_backend(stream_then_keep) as (url, served):
        pool, head = pool_for(url, limit=4)
        assert await one_stream(pool, head) == chunk(b"data: 01\n\n") + backend.LAST_CHUNK
        assert (pool.open, pool.idle) == (1, 1)  # idle, on probation
        assert await one_stream(pool, head) == chunk(b"data: 02\n\n") + backend.LAST_CHUNK  # a new connection
        assert served.connections == 2 and pool.streams_kept is None
        pool.close()


async def test_a_backend_seen_closing_a_streams_connection_has_every_later_one_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)
    async with chunked_backend(stream_then_close) as (url, served):
        pool, head = pool_for(url, limit=4)
        await one_stream(pool, head)
        async with asyncio.timeout(10):  # the backend closes it while it waits out its probation
            while pool.streams_kept is None:  # noqa: ASYNC110 - the pool learns it from the close
                await asyncio.sleep(0.01)
        assert pool.streams_kept is False and pool.idle == 0
        await one_stream(pool, head)
        assert pool.idle == 0  # closed at its end, not put on probation
        assert served.connections == 2
        pool.close()


async def test_a_backend_proven_to_keep_streams_connections_has_them_pooled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(backend, "STREAM_PROBATION", 0.0)  # every probation is over at the next take
    async with chunked_backend(stream_then_keep) as (url, served):
        pool, head = pool_for(url, limit=4)
        for _ in range(backend.STREAMS_PROVEN + 1):  # each probation is seen over at the next take
            await one_stream(pool, head)
        assert pool.streams_kept is True
        monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)  # proven: no probation any more
        await one_stream(pool, head)
        await one_stream(pool, head)
        assert served.connections == 1 and served.requests == backend.STREAMS_PROVEN + 3
        pool.close()


async def test_a_pool_at_its_limit_closes_a_connection_on_probation_for_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)
    async with chunked_backend(stream_then_keep) as (url, served):
        pool, head = pool_for(url, limit=1)
        await one_stream(pool, head)
        async with asyncio.timeout(10):  # not a wait for the probation's end: room is made at once
            await one_stream(pool, head)
        assert served.connections == 2 and pool.open == 1
        pool.close()


async def test_a_pool_at_its_limit_makes_room_with_the_youngest_on_probation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Streams coming faster than ``limit`` a probation must not have every connection closed before
    its probation ends (the backend would never be proven, every stream a new connection)."""
    monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)
    async with chunked_backend(stream_then_keep) as (url, served):
        pool, head = pool_for(url, limit=2)
        used = []
        for _ in range(5):
            answer = await pool.request(head, None, head_only=False)
            used.append(answer.connection)
            answer.connection.relay(lambda data: False)
            assert not await answer.connection.piped()
            answer.release()
        assert served.connections == 5 and pool.open == 2
        open_ = [c.transport is not None and not c.transport.is_closing() for c in used]
        assert open_ == [True, False, False, False, True]  # the oldest sees its probation out
        monkeypatch.setattr(backend, "STREAM_PROBATION", 0.0)
        used[-1].probation_until = used[0].probation_until = 0.0  # both probations over now
        await one_stream(pool, head)  # on a connection that outlasted its probation
        assert served.connections == 5
        pool.close()


HEADS = [
    b"Content-Type: application/json\r\nX-Trace:   spaced value   \r\n",
    b"Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-Kept: 2\r\nTE: trailers\r\nUpgrade: h2c\r\n",
    b"X-Forwarded-For: 10.0.0.1\r\nX-Forwarded-For: 10.0.0.2, 10.0.0.3\r\nX-Forwarded-Host: evil\r\n",
    b"Authorization: Bearer k\r\nProxy-Authorization: p\r\nExpect: 100-continue\r\nKeep-Alive: 5\r\n",
    b"Content-Encoding: gzip\r\nx-forwarded-proto: ftp\r\nCONNECTION: close\r\nAccept: */*\r\n",
    b"X-Cafe: caf\xc3\xa9\r\nX-Empty:\r\nX-Dup: a\r\nX-Dup: b\r\n",
]


@pytest.mark.parametrize("forward_authorization", [False, True])
async def test_the_pooled_head_built_from_the_bytes_sent_is_the_head_of_the_rewritten_headers(
    forward_authorization: bool,
) -> None:
    """The pool's head (``proxy.pooled_head``, from the raw header bytes) and the head of the headers
    aiohttp's client is given (``proxy.request_headers``) pass on the same fields, in the same
    order, for requests parsed by the gateway's own server."""
    seen: list[tuple[bytes | None, bytes | None]] = []

    async def both(request: web.Request) -> web.Response:
        body = await request.read() if request.body_exists else None
        headers = proxy.request_headers(request, forward_authorization=forward_authorization)
        if proxy.decoded(request):  # the decoded body is what goes: the client's coding is not named
            assert "Content-Encoding" not in headers
        old = backend.request_head(
            method=request.method,
            target=request.rel_url.raw_path_qs,
            authority="engine:8000",
            headers=headers.items(),
            body=body,
        )
        new = proxy.pooled_head(
            request, authority="engine:8000", forward_authorization=forward_authorization, body=body
        )
        seen.append((old, new))
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", both)
    runner, url = await testing.serve(app, shutdown_timeout=0.2)
    try:
        for extra in HEADS:
            body = gzip.compress(b"{}") if b"gzip" in extra else b"{}"
            request = (
                b"POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: gw.example:8080\r\n%bContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n%b" % (extra, len(body), body)
            )
            answer = await raw_exchange(url, request)
            assert b"HTTP/1.1 200 OK\r\n" in answer, answer[:200]
        get = b"GET /v1/models HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n"
        assert (await raw_exchange(url, get)).startswith(b"HTTP/1.1 200")
    finally:
        await runner.cleanup()
    assert len(seen) == len(HEADS) + 1
    for old, new in seen:
        assert old is not None and new == old


async def test_a_request_waiting_for_room_is_not_kept_waiting_by_a_probation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)
    async with chunked_backend(stream_then_keep) as (url, served):
        pool, head = pool_for(url, limit=1)
        first = await pool.request(head, None, head_only=False)
        second = asyncio.create_task(pool.request(head, None, head_only=False))
        await asyncio.sleep(0)  # it asked for a connection: none is free, none may open
        assert not second.done()
        first.connection.relay(lambda data: False)
        assert not await first.connection.piped()
        first.release()  # closed rather than put on probation: the waiter opens its own
        async with asyncio.timeout(10):
            answer = await second
        assert answer.raw
        answer.close()
        answer.release()
        assert served.connections == 2
        pool.close()


async def test_a_backend_that_closes_a_streams_connection_after_being_trusted_is_trusted_no_more(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trusted = backend.STREAMS_PROVEN + 1  # streams before the pool has seen enough outlast probation

    async def keep_then_close(writer: asyncio.StreamWriter, n: int) -> bool:
        await stream_then_keep(writer, n)
        return n <= trusted

    monkeypatch.setattr(backend, "STREAM_PROBATION", 0.0)
    async with chunked_backend(keep_then_close) as (url, _):
        pool, head = pool_for(url, limit=4)
        for _ in range(trusted):
            await one_stream(pool, head)
        verdicts = [pool.streams_kept]
        await one_stream(pool, head)  # this one's connection the backend closes after the stream
        async with asyncio.timeout(10):
            while pool.streams_kept:  # noqa: ASYNC110 - the pool learns it from the close
                await asyncio.sleep(0.01)
        verdicts.append(pool.streams_kept)
        assert verdicts == [True, False]
        await one_stream(pool, head)
        assert pool.idle == 0  # closed at its end: no stream's connection is kept any more
        pool.close()


async def big_stream(writer: asyncio.StreamWriter, n: int) -> bool:
    """An event stream of ~4 MiB (more than the socket buffers between it and a client that reads
    nothing hold) and its end in one write, the connection kept."""
    events = b"".join(chunk(b"data: %s\n\n" % (b"%05d" % i * 100)) for i in range(8000))
    writer.write(SSE_HEAD + events + b"0\r\n\r\n")
    await writer.drain()
    return True


async def test_streams_cut_by_the_drain_keep_their_framing_whole_for_a_kept_alive_client() -> None:
    """The drain cuts a stream its client is slow to read (the relay waits for it to drain, the
    backend's body read to its end or not): the client still reads one well-framed answer, and its
    next request on the same connection gets an answer of its own (nothing of the first after its
    end)."""
    async with (
        chunked_backend(big_stream) as (url, _),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True, clientWriteTimeout="60s")
        host, port = gateway.url.removeprefix("http://").split(":")
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect((host, int(port)))
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock, limit=1024)
        try:
            request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: g\r\nContent-Length: 2\r\n\r\n{}"
            writer.write(request)
            upstream = gateway.app[app_.UPSTREAM]
            pool = upstream.pool
            assert pool is not None
            await gateway.wait_for(lambda: pool.paused == 1, within=20.0)  # the client's side is full
            await upstream.cut_streams(within=0.0)
            async with asyncio.timeout(20):
                head = await reader.readuntil(b"\r\n\r\n")
                assert b"transfer-encoding: chunked" in head.lower()
                body = b""
                while not body.endswith(b"\r\n0\r\n\r\n"):
                    body += await reader.read(1 << 20)
            events = chunks(body)
            assert events and all(event.startswith(b"data: ") for event in events)
            writer.write(request)  # the same connection: its next answer starts where the first ended
            async with asyncio.timeout(20):
                assert (await reader.readuntil(b"\r\n")).startswith(b"HTTP/1.1 ")
        finally:
            writer.close()
