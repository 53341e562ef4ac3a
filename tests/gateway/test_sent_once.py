"""Nothing that may have reached a backend is ever sent again, whatever the method.

A raw-socket backend answers the gateway's probes, then breaks every connection that brings a
request in one of four ways (reset after the body, close after the body, reset after the head,
close with the request unread); it counts the connections the request's bytes reached. Each method
(GET, HEAD, OPTIONS, PUT, DELETE, POST, PATCH, and a WebSocket upgrade) reaches it exactly once and is
answered 502 — aiohttp's client alone would send the idempotent ones twice (pinned below, so a
change of that library shows here). A request that provably reached nothing (its connect refused)
is still held and sent once the backend is back.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest

from noctaya.gateway import keys, proxy, testing

BREAKS = ("reset-after-body", "close-after-body", "reset-after-head", "close-unread")
METHODS = ("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "POST", "PATCH")
UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


class BreakingBackend:
    """Answers the probes' ``/health`` (and the gateway's own model-list read); every other request
    is one receipt (its first bytes arrived) and its connection is broken as ``mode`` says.
    ``close-unread`` reads no head to tell a probe: it answers every connection as a probe while
    ``probing``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.probing = True
        self.receipts: list[bytes] = []  # each receipt's request line (or first byte, unread)
        self.server: asyncio.Server | None = None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            if self.mode == "close-unread" and not self.probing:
                self.receipts.append(await reader.read(1))  # it arrived; nothing more is read
                return
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /health ") or testing.own_read(head):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                await writer.drain()
                return
            self.receipts.append(head.split(b"\r\n", 1)[0])
            if self.mode.endswith("after-body"):
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                await reader.readexactly(length)
            if self.mode.startswith("reset"):
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                writer.transport.abort()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @contextlib.asynccontextmanager
    async def running(self, *, port: int = 0) -> AsyncIterator[str]:
        server = await asyncio.start_server(self.serve, "127.0.0.1", port, reuse_address=True)
        try:
            yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        finally:
            server.close()
            await server.wait_closed()


async def send(http: aiohttp.ClientSession, url: str, method: str) -> int:
    if method == "UPGRADE":
        async with http.get(url + "/v1/realtime", headers=UPGRADE) as response:
            return response.status
    data = b'{"input": "x"}' if method in ("PUT", "DELETE", "POST", "PATCH") else None
    async with http.request(method, url + "/v1/things", data=data) as response:
        await response.read()
        return response.status


@pytest.mark.parametrize("mode", BREAKS)
async def test_every_method_reaches_a_breaking_backend_once(http: aiohttp.ClientSession, mode: str) -> None:
    backend = BreakingBackend(mode)
    async with (
        backend.running() as url,
        testing.GatewayStarter(
            backend_url=url, defaults={**testing.FAST_TIMINGS, "warmProbeInterval": "60s"}
        ) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        backend.probing = False
        for method in (*METHODS, "UPGRADE"):
            before = len(backend.receipts)
            status = await send(http, gateway.url, method)
            assert (method, status) == (method, 502)
            assert (method, len(backend.receipts) - before) == (method, 1)
            if mode != "close-unread":
                assert backend.receipts[-1].startswith(b"GET " if method == "UPGRADE" else method.encode())
        assert gateway.app[keys.READINESS].ready  # a broken answer is no sign of a cold backend
        await gateway.wait_idle()


@pytest.mark.parametrize("method", ["GET", "PUT", "UPGRADE"])
async def test_a_refused_connect_is_still_held_and_sent_once_when_the_backend_is_back(
    http: aiohttp.ClientSession, reserve_port: Callable[[], int], method: str
) -> None:
    port = reserve_port()
    backend = BreakingBackend("close-after-body")
    async with backend.running(port=port) as url:
        starter = testing.GatewayStarter(
            backend_url=url, defaults={**testing.FAST_TIMINGS, "warmProbeInterval": "60s"}
        )
        gateway = await starter.start(wait_ready=True)
    async with starter:  # nothing listens now: refused
        task = asyncio.create_task(send(http, gateway.url, method))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)  # held again, as a cold request
        async with backend.running(port=port):
            assert await asyncio.wait_for(task, 5) == 502  # sent, and broken: not sent again
        assert len(backend.receipts) == 1
        await gateway.wait_idle()


@pytest.mark.parametrize("middlewares", [(), (proxy.sent_once,)], ids=["aiohttp", "sent_once"])
async def test_aiohttp_sends_a_broken_idempotent_request_twice_unless_told(
    middlewares: tuple[aiohttp.ClientMiddlewareType, ...],
) -> None:
    backend = BreakingBackend("close-after-body")
    backend.probing = False
    async with backend.running() as url, aiohttp.ClientSession(middlewares=middlewares) as session:
        with pytest.raises(aiohttp.ClientError):
            async with session.get(url + "/v1/things"):
                pass
    assert len(backend.receipts) == (2 if not middlewares else 1)
