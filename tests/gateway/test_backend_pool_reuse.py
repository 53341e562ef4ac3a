"""The backend connection pool against a raw-socket backend that keeps connections open: its
waiters and its paused connections.

Aspects: a request waiting for a connection that leaves (cancelled) after it was woken does not
keep the connection given back from the next waiter; a connection whose reading was paused (a
congested pipe, or a body reader that stopped partway) is never handed to the next request, through
the gateway too (a client cut by its write timeout); a connection idle past the keep-alive is not
taken before the next sweep; the pool's ``paused`` count returns to 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp

from noctaya.gateway import app as app_
from noctaya.gateway import backend, testing
from tests.gateway.conftest import pool_for

Respond = Callable[[int, bytes, asyncio.StreamWriter], Awaitable[None]]
"""(request number, request head, the connection's writer): writes the answer."""


class RawBackend:
    """Reads request heads (no bodies) on kept-alive connections, numbers them and answers each with
    ``respond``; ``requests`` holds (connection number, head)."""

    def __init__(self, respond: Respond) -> None:
        self.respond = respond
        self.requests: list[tuple[int, bytes]] = []
        self.connections = 0
        self.serving: set[asyncio.Task[object]] = set()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self.serving.add(task)
        self.connections += 1
        number = self.connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                self.requests.append((number, head))
                await self.respond(len(self.requests), head, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            self.serving.discard(task)


@contextlib.asynccontextmanager
async def pool_on(
    respond: Respond, *, limit: int = 4
) -> AsyncIterator[tuple[backend.Pool, RawBackend, bytes]]:
    """A pool in front of a :class:`RawBackend` answering ``respond``, and a GET head for it."""
    raw = RawBackend(respond)
    server = await asyncio.start_server(raw.serve, "127.0.0.1", 0)
    pool, head = pool_for(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", limit=limit)
    try:
        yield pool, raw, head
    finally:
        pool.close()
        async with asyncio.timeout(5):  # every backend connection has seen its end
            while raw.serving:  # noqa: ASYNC110 - one task per connection, each ends on its own
                await asyncio.sleep(0.01)
        server.close()
        await server.wait_closed()


async def small(n: int, head: bytes, writer: asyncio.StreamWriter) -> None:
    body = b'{"n": %d}' % n
    writer.write(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%b"
        % (len(body), body)
    )
    await writer.drain()


async def test_a_waiter_woken_then_cancelled_passes_the_connection_on_to_the_next() -> None:
    async with pool_on(small, limit=1) as (pool, _, head):
        first = await pool.request(head, None, head_only=False)
        second = asyncio.create_task(pool.request(head, None, head_only=False))
        third = asyncio.create_task(pool.request(head, None, head_only=False))
        await asyncio.sleep(0)  # both have asked for a connection and wait: the one open is taken
        assert not second.done() and not third.done()
        assert await first.content.read() == b'{"n": 1}'
        first.release()  # back to the pool: the first waiter (second) is woken...
        second.cancel()  # ...and its client leaves before it ran
        with contextlib.suppress(asyncio.CancelledError):
            await second
        async with asyncio.timeout(5):
            answer = await third
        assert await answer.content.read() == b'{"n": 2}'
        answer.release()


async def chunked(n: int, head: bytes, writer: asyncio.StreamWriter) -> None:
    """Request 1: a chunked answer whole in one write; later ones: a small answer."""
    if n == 1:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            b"5\r\nfirst\r\n4\r\nlast\r\n0\r\n\r\n"
        )
        await writer.drain()
    else:
        await small(n, head, writer)


async def test_a_connection_paused_by_a_congested_pipe_is_never_handed_to_the_next_request() -> None:
    """The relay pipes the body to a client whose side is full (the sink says so), then gives up on
    it (the client left, or its write timeout cut it) before the pipe resumed: the body had been
    read whole from the backend, but reading from the backend is still paused."""
    async with pool_on(chunked) as (pool, _, head):
        answer = await pool.request(head, None, head_only=False)
        piped: list[bytes] = []

        def full(chunk: bytes) -> bool:
            piped.append(chunk)
            return True  # the client's side holds more than it may

        answer.connection.pipe(full)
        assert await answer.connection.piped()  # congested
        assert b"".join(piped) == b"firstlast" and answer.content.is_eof()
        answer.release()  # the client left while the pipe waited for it to drain
        async with asyncio.timeout(5):  # the next request is answered, on this connection or another
            second = await pool.request(head, None, head_only=False)
        assert await second.content.read() == b'{"n": 2}'
        second.release()
        assert pool.paused == 0  # the gauge counts connections paused for a client: none is


async def test_through_the_gateway_a_client_cut_by_its_write_timeout_leaves_no_paused_connection_pooled() -> (
    None
):
    """A chunked answer whose last piece (with its end) fills the client's side: the pipe pauses the
    backend connection, the client reads nothing, its write timeout closes it. The backend's answer
    was read whole, so the connection goes back to the pool: it must go back reading."""
    go = asyncio.Event()
    # the first piece within aiohttp's writer's drain mark; the last takes the client's side past the pipe's
    first, last = 48 * 1024, 40 * 1024

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if head.startswith(b"GET /health ") or testing.own_read(head):
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    await writer.drain()
                    return
                if head.startswith(b"GET /v1/files/big "):
                    writer.write(
                        b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                        b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%b\r\n" % (first, b"a" * first)
                    )
                    await writer.drain()
                    await go.wait()
                    writer.write(b"%x\r\n%b\r\n0\r\n\r\n" % (last, b"b" * last))
                    await writer.drain()
                else:
                    await small(0, head, writer)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    try:
        async with testing.GatewayStarter(backend_url=url) as starter, aiohttp.ClientSession() as http:
            gateway = await starter.start(wait_ready=True, clientWriteTimeout="1s", backendHeaderTimeout="3s")
            pool = gateway.app[app_.UPSTREAM].pool
            assert pool is not None
            host, port = gateway.url.removeprefix("http://").split(":")
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)  # a client that holds little
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
            _reader, writer = await asyncio.open_connection(sock=sock, limit=1024)  # reads next to nothing
            server_side = gateway.runner.server.connections  # type: ignore[union-attr]
            await gateway.wait_for(lambda: len(server_side) == 1)
            transport = server_side[0].transport
            assert transport is not None
            transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
            writer.write(b"GET /v1/files/big HTTP/1.1\r\nHost: x\r\n\r\n")
            # the first chunk went out through aiohttp's writer and sits mostly in the transport
            await gateway.wait_for(lambda: transport.get_write_buffer_size() > first // 2)
            go.set()  # the rest, and the end of the answer, in one piece
            await gateway.wait_for(
                lambda: gateway.admission.in_flight == 0, within=10.0
            )  # cut by its write timeout
            writer.close()
            async with http.get(gateway.url + "/v1/models") as answer:  # the same backend connection, LIFO
                assert answer.status == 200, await answer.text()
            assert pool.paused == 0
    finally:
        server.close()
        await server.wait_closed()


async def test_a_connection_idle_past_the_keepalive_is_not_taken_before_the_next_sweep() -> None:
    """The gateway sweeps once a second: between sweeps, a connection idle for longer than the
    keep-alive (4 s, chosen below the usual 5 s of a backend's) must not carry a request."""
    async with pool_on(small) as (pool, raw, head):
        pool.keepalive = 0.2
        answer = await pool.request(head, None, head_only=False)
        assert await answer.content.read() == b'{"n": 1}'
        answer.release()
        await asyncio.sleep(0.5)  # idle for longer than the keep-alive; no sweep ran meanwhile
        second = await pool.request(head, None, head_only=False)
        assert await second.content.read() == b'{"n": 2}'
        second.release()
        (one, _), (two, _) = raw.requests
        assert one != two
