"""What crosses the wire between the gateway and a raw-socket backend.

Aspects: a client sending ``Expect: 100-continue`` (as curl does for a large body) gets the gateway's
own 100, sends its body, and the backend gets the whole body with no ``Expect`` (an engine that never
sends a 100 of its own would otherwise hold the request until the backend header timeout); a backend
answering ``101 Switching Protocols`` to a plain request is a 502, never relayed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import struct
from collections.abc import AsyncIterator, Callable
from urllib.parse import urlsplit

import pytest

from noctaya.gateway import keys, testing

Answer = Callable[[bytes, bytes], bytes]
"""(request head, request body) -> the raw answer."""


@contextlib.asynccontextmanager
async def raw_backend(answer: Answer) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A backend that reads each request's head and its ``Content-Length`` body, answers
    ``answer(head, body)`` and closes; ``/health`` (and the gateway's own model-list read) is a
    200. Yields its URL and the heads it got."""
    heads: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /health ") or testing.own_read(head):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            heads.append(head)
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = await reader.readexactly(length)
            writer.write(answer(head, body))
            await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}", heads
    finally:
        server.close()
        await server.wait_closed()


def json_answer(document: object) -> bytes:
    body = json.dumps(document).encode()
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n" % len(body)
    ) + body


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return int(head.split(b" ", 2)[1]), await reader.readexactly(length)


ASYNCIO = "asyncio"


@pytest.mark.parametrize("size", [1000, 1024 * 1024], ids=["small", "streamed"])
async def test_a_client_expecting_100_continue_is_answered_by_the_gateway_and_the_backend_gets_no_expect(
    size: int,
) -> None:
    def echo(head: bytes, body: bytes) -> bytes:
        return json_answer({"expect": b"\r\nexpect:" in head.lower(), "length": len(body)})

    async with (
        raw_backend(echo) as (url, heads),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True, backendHeaderTimeout="30s", bodyTimeout="30s")
        parts = urlsplit(gateway.url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            # what curl does with a large body: the head, then the body only after the 100
            writer.write(
                b"POST /v1/files HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n"
                b"Expect: 100-continue\r\nContent-Length: %d\r\n\r\n" % size
            )
            async with asyncio.timeout(10):
                assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
                writer.write(b"b" * size)
                status, body = await read_answer(reader)
        finally:
            writer.close()
        assert status == 200
        assert json.loads(body) == {"expect": False, "length": size}
        assert len(heads) == 1
        await gateway.wait_idle()


async def test_a_backend_switching_protocols_on_a_plain_request_is_a_502() -> None:
    def switch(head: bytes, body: bytes) -> bytes:
        return b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: other\r\nConnection: Upgrade\r\n\r\n\x00\x01"

    async with (
        raw_backend(switch) as (url, heads),
        testing.GatewayStarter(backend_url=url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        parts = urlsplit(gateway.url)
        for request in (
            b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n",
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}",
        ):
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            try:
                async with asyncio.timeout(10):
                    writer.write(request)
                    status, body = await read_answer(reader)
            finally:
                writer.close()
            assert status == 502
            assert json.loads(body)["error"]["code"] == "backend_unavailable"
        assert len(heads) == 2
        await gateway.wait_idle()


@pytest.mark.parametrize("content_type", ["text/event-stream", "application/json"])
async def test_a_client_leaving_mid_answer_is_its_own_499_not_a_backend_failure(
    caplog: pytest.LogCaptureFixture, content_type: str
) -> None:
    """Two chunks of the backend's answer and the client's reset reach the gateway in one turn of
    the loop: its first write finds the client gone, its second one its transport closing, before
    the handler is cancelled (aiohttp's ``ClientConnectionResetError``, a ``ClientError`` and a
    ``ConnectionError`` at once)."""
    caplog.set_level(logging.INFO, logger="noctaya.gateway")
    streams: list[asyncio.StreamWriter] = []
    started = asyncio.Event()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if head.startswith(b"GET /health ") or testing.own_read(head):
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            writer.close()
            return
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nTransfer-Encoding: chunked\r\n\r\n"
            % content_type.encode()
        )
        writer.write(b"9\r\ndata: 1\n\n\r\n")
        streams.append(writer)
        started.set()
        with contextlib.suppress(ConnectionError):
            await reader.read()  # until the gateway closes its side
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    loop = asyncio.get_running_loop()
    try:
        async with testing.GatewayStarter(backend_url=url) as starter:
            gateway = await starter.start(wait_ready=True, accessLog="on")
            parts = urlsplit(gateway.url)
            client = socket.socket()
            client.setblocking(False)
            await loop.sock_connect(client, (parts.hostname, parts.port))
            await loop.sock_sendall(client, b"GET /v1/stream HTTP/1.1\r\nHost: x\r\n\r\n")
            received = b""
            while b"data: 1" not in received:
                received += await loop.sock_recv(client, 4096)
            await started.wait()
            # in one step: two more chunks from the backend, then the client's reset
            streams[0].write(b"9\r\ndata: 2\n\n\r\n9\r\ndata: 3\n\n\r\n")
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            client.close()
            await gateway.wait_idle()
            exposition = gateway.app[keys.METRICS].exposition().decode()
    finally:
        server.close()
        await server.wait_closed()
    # the gateway's and aiohttp's warnings; asyncio's are left out: another test's leftovers collected
    # here (an SDK client closed on a loop that is gone) are reported under its name
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and r.name != ASYNCIO]
    assert warnings == []
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "noctaya.gateway.access"]
    assert [(line["status"], line.get("code")) for line in lines] == [(499, "client_closed")]
    assert 'noctaya_gateway_requests_total{code="499",route="other"} 1.0' in exposition
