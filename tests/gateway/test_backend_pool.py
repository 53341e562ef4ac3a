"""The backend connection pool, on the wire, against a raw-socket backend that keeps connections open.

Aspects: answers are read over one kept-alive connection, each request's head written once with the
rewritten headers (``Host`` the backend's, one ``Content-Length``, ``X-Forwarded-*``, no hop-by-hop);
an answer that says ``Connection: close``, an answer whose head does not parse and one whose body
is cut short are never pooled, nor is an event stream's within its probation (the next request
opens a new connection and is answered); an interim ``103`` is passed over; idle connections are
closed after the keep-alive; a head that a CR or LF would split is never written by the pool; the
pool's open, idle and paused connections and its bound are on ``/metrics``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from noctaya.gateway import app as app_
from noctaya.gateway import backend, keys, proxy, testing
from tests.gateway.conftest import ServeApp, pool_for

Answer = Callable[[int, bytes, bytes], bytes]
"""(request number, request head, request body) -> the raw answer written to it (ending in
:data:`CLOSE`: the connection is closed after it)."""
CLOSE = b"<close>"


class KeptAlive:
    """Answers ``/health`` probes and the gateway's own model-list read, and closes; every other
    request is recorded with its connection's number and answered ``answer(n, head, body)`` on a
    connection kept open for the next. Its connections' ends (``closed``) are told to ``on_close``."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[tuple[int, bytes]] = []  # (connection number, head)
        self.connections = 0
        self.closed = 0
        self.on_close = asyncio.Event()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"GET /health ") or testing.own_read(head):  # probes, and its model read
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    await writer.drain()
                    return
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                self.requests.append((number, head))
                answer = self.answer(len(self.requests), head, body)
                writer.write(answer.removesuffix(CLOSE))
                await writer.drain()
                if answer.endswith(CLOSE):
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed += 1
            self.on_close.set()
        finally:
            writer.close()


@contextlib.asynccontextmanager
async def kept_alive(answer: Answer) -> AsyncIterator[tuple[str, KeptAlive]]:
    backend_ = KeptAlive(answer)
    server = await asyncio.start_server(backend_.serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", backend_
    finally:
        server.close()
        await server.wait_closed()


def ok(body: bytes = b"{}", *, extra: bytes = b"", head: bytes = b"") -> bytes:
    """A 200 with ``body`` (none to the HEAD request whose head is ``head``)."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n" % (
        extra,
        len(body),
    )
    return answer if head.startswith(b"HEAD ") else answer + body


def header_lines(head: bytes) -> list[tuple[str, str]]:
    lines = head.decode().split("\r\n")[1:]
    return [
        (name.lower(), value.strip()) for name, _, value in (line.partition(":") for line in lines if line)
    ]


async def test_answers_are_read_over_one_kept_alive_connection_with_each_head_rewritten_once(
    http: aiohttp.ClientSession,
) -> None:
    async with (
        kept_alive(lambda n, head, body: ok(b'{"n": %d, "length": %d}' % (n, len(body)), head=head)) as (
            url,
            seen,
        ),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        hop_by_hop = {"Connection": "keep-alive, X-Private", "Keep-Alive": "timeout=5", "X-Private": "1"}
        async with http.post(gateway.url + "/v1/completions", data=b'{"a": 1}', headers=hop_by_hop) as first:
            assert (first.status, await first.json()) == (200, {"n": 1, "length": 8})
        async with http.get(gateway.url + "/v1/models?x=1") as second:
            assert (second.status, await second.json()) == (200, {"n": 2, "length": 0})
        async with http.head(gateway.url + "/v1/models") as third:
            assert third.status == 200
        await gateway.wait_idle()
        # the pool's bound and state are on /metrics: the one connection open and idle, none paused
        async with http.get(gateway.url + "/metrics") as response:
            families = {f.name: f for f in text_string_to_metric_families(await response.text())}
        pool = {s.labels["state"]: s.value for s in families["noctaya_gateway_backend_connections"].samples}
        assert pool == {"open": 1, "idle": 1, "paused": 0}
        limit = families["noctaya_gateway_max_backend_connections"].samples[0].value
        assert limit == gateway.app[keys.CONFIG].max_in_flight + app_.BACKEND_SPARE
    assert len({number for number, _ in seen.requests}) == 1  # one connection carried all three
    post, get, head = (header_lines(head) for _, head in seen.requests)
    assert seen.requests[1][1].startswith(b"GET /v1/models?x=1 HTTP/1.1\r\n")
    host = url.removeprefix("http://")
    for lines in (post, get, head):
        names = [name for name, _ in lines]
        assert ("host", host) in lines and names.count("host") == 1
        assert not {"connection", "keep-alive", "x-private", "transfer-encoding", "expect"} & set(names)
        assert ("x-forwarded-for", "127.0.0.1") in lines
        assert ("x-forwarded-proto", "http") in lines
    assert [value for name, value in post if name == "content-length"] == ["8"]
    assert not [name for name, _ in get + head if name == "content-length"]


@pytest.mark.parametrize(
    "first",
    [
        ok(extra=b"Connection: close\r\n"),
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"c\r\ndata: one\n\n\r\n0\r\n\r\n",
        b"HTTP/1.1 20x OK\r\nContent-Length: 0\r\n\r\n",
        b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}",
    ],
    ids=["connection-close", "event-stream", "malformed-head", "http-1.0"],
)
async def test_a_connection_whose_answer_ends_it_is_never_pooled(
    http: aiohttp.ClientSession, first: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    # an event stream's connection is on probation: unused for as long as this test runs
    monkeypatch.setattr(backend, "STREAM_PROBATION", 3600.0)
    async with (
        kept_alive(lambda n, head, body: first if n == 1 else ok()) as (url, seen),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        async with http.post(gateway.url + "/v1/completions", json={}) as answer:
            await answer.read()
            assert answer.status == (502 if b"20x" in first else 200)
        async with http.post(gateway.url + "/v1/completions", json={}) as answer:
            assert (answer.status, await answer.json()) == (200, {})
        await gateway.wait_idle()
    (one, _), (two, _) = seen.requests
    assert one != two


async def test_an_interim_answer_is_passed_over(http: aiohttp.ClientSession) -> None:
    def early_hints(n: int, head: bytes, body: bytes) -> bytes:
        return b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" + ok(b'{"final": true}')

    async with (
        kept_alive(early_hints) as (url, _),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        async with http.post(gateway.url + "/v1/completions", json={}) as answer:
            assert (answer.status, await answer.json()) == (200, {"final": True})
        await gateway.wait_idle()


async def test_a_body_cut_short_is_cut_for_the_client_and_its_connection_dropped(
    http: aiohttp.ClientSession,
) -> None:
    answers = {
        1: b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{}" + CLOSE
    }
    async with (
        kept_alive(lambda n, head, body: answers.get(n, ok())) as (url, seen),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        with pytest.raises(aiohttp.ClientPayloadError):
            async with http.post(gateway.url + "/v1/completions", json={}) as answer:
                await answer.read()
        async with http.post(gateway.url + "/v1/completions", json={}) as answer:
            assert (answer.status, await answer.json()) == (200, {})
        await gateway.wait_idle()
    (one, _), (two, _) = seen.requests
    assert one != two


async def test_idle_connections_are_closed_after_the_keepalive() -> None:
    async with kept_alive(lambda n, head, body: ok()) as (url, seen):
        pool, head = pool_for(url, limit=2)
        answer = await pool.request(head, None, head_only=False)
        assert (answer.status, await answer.content.read()) == (200, b"{}")
        answer.release()
        assert (pool.open, pool.idle) == (1, 1)
        loop = asyncio.get_running_loop()
        pool.sweep(now=loop.time() + 29.0)
        assert pool.idle == 1
        pool.sweep(now=loop.time() + 30.0)
        assert pool.idle == 0
        async with asyncio.timeout(10):
            await seen.on_close.wait()  # the backend saw its end
        pool.close()


@pytest.mark.parametrize(
    ("target", "headers"),
    [
        ("/v1/models", [("X-Split", "a\r\nX-Injected: 1")]),
        ("/v1/models", [("X-Split\n", "a")]),
        ("/v1/models\r\nX-Injected: 1", []),
        ("/v1/models", [("X-Bad", "\udcff")]),
    ],
    ids=["cr-lf-in-value", "lf-in-name", "cr-lf-in-target", "not-utf-8"],
)
def test_a_head_a_cr_or_lf_would_split_is_never_written(target: str, headers: list[tuple[str, str]]) -> None:
    assert (
        backend.request_head(method="GET", target=target, authority="b:1", headers=headers, body=None) is None
    )


@pytest.mark.parametrize(
    ("url", "served"),
    [
        ("http://127.0.0.1:8000", True),
        ("http://engine.models.svc:8000", True),
        ("http://[::1]:8000", True),
        ("http://engine", True),
        ("https://engine:8443", False),
        ("http://engine:8000/prefix", False),
        ("http://engine:8000/", False),
        ("http://user:pw@engine:8000", False),
    ],
)
def test_which_backend_urls_the_pool_serves(url: str, served: bool) -> None:
    assert (backend.address_of(url) is not None) is served


async def test_a_client_that_reads_nothing_pauses_the_backend_and_an_event_stream_is_relayed_whole(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    """A chunked answer is piped from the backend connection's read callback: a client that reads
    nothing fills its socket, and the pipe stops reading from the backend (nothing piles up in the
    gateway) while its slot stays held; a reading client gets every event in order."""
    flooding: list[web.Request] = []

    async def flood(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
        await response.prepare(request)
        flooding.append(request)
        while True:
            await response.write(b"x" * 65536)

    async def events(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for n in range(500):
            await response.write(b"data: %d\n\n" % n)
        await response.write_eof()
        return response

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/v1/files/big", flood)
    app.router.add_post("/v1/chat/completions", events)
    app.router.add_get("/health", health)
    gateway = await gateways.start(backendUrl=await serve_app(app), wait_ready=True, clientWriteTimeout="60s")
    async with http.post(gateway.url + "/v1/chat/completions", json={"stream": True}) as answer:
        assert answer.status == 200
        assert await answer.read() == b"".join(b"data: %d\n\n" % n for n in range(500))
    host, port = gateway.url.removeprefix("http://").split(":")
    _reader, writer = await asyncio.open_connection(host, int(port), limit=1024)
    try:
        writer.write(b"GET /v1/files/big HTTP/1.1\r\nHost: x\r\n\r\n")
        await gateway.wait_for(lambda: bool(flooding))
        pool = gateway.app[app_.UPSTREAM].pool
        assert pool is not None
        await gateway.wait_for(lambda: pool.paused == 1, within=20.0)  # reading from the backend paused
        held = [
            connection.transport.get_write_buffer_size()
            for connection in gateway.runner.server.connections  # type: ignore[union-attr]
            if connection.transport is not None
        ]
        assert max(held) <= proxy.PIPE_BUFFER + 4 * 65536  # the gateway holds little of it
        assert gateway.admission.in_flight == 1  # held by the paused relay, not cut
    finally:
        writer.close()
    await gateway.wait_for(lambda: gateway.admission.in_flight == 0, within=10.0)


async def test_a_request_beyond_the_limit_waits_for_a_connection_given_back() -> None:
    async with kept_alive(lambda n, head, body: ok(b'{"n": %d}' % n)) as (url, seen):
        pool, head = pool_for(url, limit=1)
        first = await pool.request(head, None, head_only=False)
        second = asyncio.create_task(pool.request(head, None, head_only=False))
        await asyncio.sleep(0)  # the second has asked for a connection: none is free, none may open
        assert not second.done() and pool.open == 1
        assert await first.content.read() == b'{"n": 1}'
        first.release()
        async with asyncio.timeout(10):
            answer = await second
        assert await answer.content.read() == b'{"n": 2}'
        answer.release()
        assert pool.open == 1 and len({number for number, _ in seen.requests}) == 1
        pool.close()


async def test_a_connection_given_back_to_a_waiting_request_is_not_taken_from_it() -> None:
    async with kept_alive(lambda n, head, body: ok(b'{"n": %d}' % n)) as (url, seen):
        pool, head = pool_for(url, limit=1)
        first = await pool.request(head, None, head_only=False)
        assert pool.take_idle() is None  # none idle
        second = asyncio.create_task(pool.request(head, None, head_only=False))
        await asyncio.sleep(0)  # it waits for room
        await first.content.read()
        first.release()  # given back: the waiting request is woken for it, and has not run yet
        assert pool.idle == 1 and pool.take_idle() is None  # the express lane does not take it first
        async with asyncio.timeout(10):
            answer = await second
        assert await answer.content.read() == b'{"n": 2}'
        answer.release()
        taken = pool.take_idle()  # nobody waits now: the lane may take it
        assert taken is not None and pool.idle == 0
        pool.untake(taken)  # not used after all: idle again, as it was
        assert pool.idle == 1 and pool.take_idle() is taken
        pool.untake(taken)
        pool.close()
        async with asyncio.timeout(10):
            await seen.on_close.wait()  # the backend saw its end


async def test_a_pooled_connection_the_backend_closed_is_forgotten_and_the_next_request_opens_one() -> None:
    # the backend closes after its answer without saying so in the answer
    async with kept_alive(lambda n, head, body: ok(b'{"n": %d}' % n) + (CLOSE if n == 1 else b"")) as (
        url,
        seen,
    ):
        pool, head = pool_for(url, limit=4)
        answer = await pool.request(head, None, head_only=False)
        assert await answer.content.read() == b'{"n": 1}'
        answer.release()
        async with asyncio.timeout(10):
            while pool.open:  # noqa: ASYNC110 - the connection's loss is only seen by the pool
                await asyncio.sleep(0.01)
        assert pool.idle == 0
        answer = await pool.request(head, None, head_only=False)
        assert (answer.status, await answer.content.read()) == (200, b'{"n": 2}')
        answer.release()
        (one, _), (two, _) = seen.requests
        assert one != two
        pool.close()
