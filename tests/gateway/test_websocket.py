"""WebSocket upgrades through the gateway, with aiohttp's real WebSocket client, to the fake engine's
``/v1/realtime`` echo.

Aspects: text and binary messages are relayed both ways, the subprotocol is negotiated end to end,
a close code from the engine reaches the client; an open socket counts as in flight and frees its
slot when it closes; a cold upgrade is held (like a non-streaming request), wakes the backend and is
then upgraded; a message over the bound closes the socket with 1009; a socket over the open-socket
bound is a 429 ``websockets_full`` (the bound and the open count are gauges); an idle socket is
closed with 1001 after the idle timeout; draining closes open sockets with 1001 so the drain completes; an
upgrade the engine refuses is answered with its status, OpenAI-shaped; the key is checked first; a
backend message over the bound is a 1009 too, a leg that drops closes the other with 1011 (no 1006 on
the wire); a handshake the gateway could not answer is its own 400 (counted and logged) before
anything is queued or opened upstream; one peer holds at most its share of the sockets
(``websocketMaxOpenPerPeer``), another host (or another client behind a trusted proxy) still gets one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing

UPGRADE = {
    "Connection": "Upgrade",
    "Upgrade": "websocket",
    "Sec-WebSocket-Version": "13",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
}


async def test_messages_both_ways_and_the_slot_is_held_while_open(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(wait_ready=True)
    async with http.ws_connect(gateway.url + "/v1/realtime", protocols=("realtime",)) as ws:
        assert ws.protocol == "realtime"
        await ws.send_str("hello")
        assert await ws.receive_str(timeout=5) == "hello"
        await ws.send_bytes(b"\x00\x01" * 1000)
        assert await ws.receive_bytes(timeout=5) == b"\x00\x01" * 1000
        async with http.get(gateway.url + "/noctaya/queue") as response:
            assert (await response.json())["inFlight"] == 1  # open: in flight
        await ws.send_str("close 4001")
        message = await ws.receive(timeout=5)
        assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 4001
    await gateway.wait_idle()


async def test_a_cold_upgrade_is_held_then_upgraded(http: aiohttp.ClientSession) -> None:
    engine = fake_engine.FakeEngine(ready_override=False)
    async with (
        fake_engine.running(engine) as running,
        testing.GatewayStarter(backend_url=running.url) as starter,
    ):
        gateway = await starter.start()
        opening = asyncio.create_task(http.ws_connect(gateway.url + "/v1/realtime"))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        assert gateway.demand.demand() >= 1
        engine.ready_override = True
        async with await opening as ws:
            await ws.send_str("after the cold start")
            assert await ws.receive_str(timeout=5) == "after the cold start"
        await gateway.wait_idle()


async def test_bounds_message_size_and_idle_time(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(
        wait_ready=True, websocketMaxMessageBytes=1024, websocketIdleTimeout="300ms"
    )
    async with http.ws_connect(gateway.url + "/v1/realtime", max_msg_size=0) as ws:
        await ws.send_str("x" * 2048)
        message = await ws.receive(timeout=5)
        assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1009
    async with http.ws_connect(gateway.url + "/v1/realtime") as ws:
        await ws.send_str("one")
        assert await ws.receive_str(timeout=5) == "one"
        message = await ws.receive(timeout=5)  # then nothing for 300 ms
        assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1001
    await gateway.wait_idle()


async def test_open_sockets_are_bounded(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(wait_ready=True, websocketMaxOpen=1)
    async with http.ws_connect(gateway.url + "/v1/realtime") as ws:
        await ws.send_str("one")
        assert await ws.receive_str(timeout=5) == "one"
        async with http.get(
            gateway.url + "/v1/realtime",
            headers={
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            },
        ) as response:
            assert response.status == 429 and "Retry-After" in response.headers
            assert (await response.json())["error"]["code"] == "websockets_full"
        async with http.get(gateway.url + "/metrics") as response:
            exposition = await response.text()
        assert "noctaya_gateway_websockets 1.0" in exposition
        assert "noctaya_gateway_max_websockets 1.0" in exposition
        assert 'noctaya_gateway_rejections_total{reason="websockets_full"} 1.0' in exposition
    await gateway.wait_idle()  # the first socket's relay has ended: its place is free
    async with http.ws_connect(gateway.url + "/v1/realtime") as ws:
        await ws.send_str("two")
        assert await ws.receive_str(timeout=5) == "two"
    await gateway.wait_idle()


async def test_drain_closes_open_sockets_with_going_away(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(wait_ready=True)
    async with http.ws_connect(gateway.url + "/v1/realtime") as ws:
        await ws.send_str("ping")
        assert await ws.receive_str(timeout=5) == "ping"
        drained = asyncio.create_task(gateway.app[keys.DRAIN].wait_idle(within=5))
        message = await ws.receive(timeout=5)
        assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1001
        assert await drained is True


async def test_a_refused_upgrade_and_a_missing_key(
    serve_app: Any, http: aiohttp.ClientSession, tmp_path: pathlib.Path
) -> None:
    async def plain(request: web.Request) -> web.Response:
        return web.Response(status=403, text="no sockets here")

    async def health(request: web.Request) -> web.Response:
        return web.Response()

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/realtime", plain)
    key_file = tmp_path / "key"
    key_file.write_text("sk-1\n")
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(wait_ready=True, apiKeyFile=str(key_file))
        try:
            await http.ws_connect(gateway.url + "/v1/realtime")
            raise AssertionError("upgraded without a key")
        except aiohttp.WSServerHandshakeError as exc:
            assert exc.status == 401
        async with http.get(
            gateway.url + "/v1/realtime",
            headers={
                "Authorization": "Bearer sk-1",
                "Connection": "Upgrade",
                "Upgrade": "websocket",
                "Sec-WebSocket-Version": "13",
                "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
            },
        ) as response:
            assert response.status == 403
            assert (await response.json())["error"]["code"] == "websocket_refused"
        await gateway.wait_idle()


def socket_backend(closes: list[int | None], opened: list[str]) -> web.Application:
    """A backend whose ``/v1/ws`` socket answers ``big`` with a 4 KiB message, ``die`` by dropping its
    connection without a close frame, anything else by echoing; it records each socket it opened and
    the close code each one got."""

    async def health(request: web.Request) -> web.Response:
        return web.Response()

    async def ws(request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse(max_msg_size=0)
        await socket.prepare(request)
        opened.append(request.path)
        async for message in socket:
            if message.data == "big":
                await socket.send_str("b" * 4096)
            elif message.data == "die":
                assert request.transport is not None
                request.transport.abort()
                break
            else:
                await socket.send_str(message.data)
        closes.append(socket.close_code)
        return socket

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/ws", ws)
    return app


async def test_close_codes_on_the_wire(serve_app: Any, http: aiohttp.ClientSession) -> None:
    closes: list[int | None] = []
    opened: list[str] = []
    async with testing.GatewayStarter(backend_url=await serve_app(socket_backend(closes, opened))) as starter:
        gateway = await starter.start(wait_ready=True, websocketMaxMessageBytes=1024)
        async with http.ws_connect(gateway.url + "/v1/ws", max_msg_size=0) as ws:
            await ws.send_str("big")  # the backend's message is over the bound: 1009, as from a client
            message = await ws.receive(timeout=5)
            assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1009
        async with http.ws_connect(gateway.url + "/v1/ws") as ws:
            await ws.send_str("die")  # the backend's connection drops: 1011, never 1006 on the wire
            message = await ws.receive(timeout=5)
            assert message.type is aiohttp.WSMsgType.CLOSE and message.data == 1011
        await gateway.wait_idle()
        # the client's connection drops: the backend is told 1001, the client went away (never 1006)
        async with http.ws_connect(gateway.url + "/v1/ws") as ws:
            await ws.send_str("hello")
            assert await ws.receive_str(timeout=5) == "hello"
            assert ws._response.connection is not None and ws._response.connection.transport is not None
            ws._response.connection.transport.abort()
        await gateway.wait_for(lambda: len(closes) == 3)
        assert closes[0] == 1009 and closes[2] == 1001
        await gateway.wait_idle()
    assert len(opened) == 3


@pytest.mark.parametrize(
    ("case", "headers"),
    [
        ("no key", {"Sec-WebSocket-Version": "13"}),
        ("key x", {"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "x"}),
        ("short key", {"Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "c2hvcnQ="}),
        ("version 12", {"Sec-WebSocket-Version": "12", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}),
        ("no version", {"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}),
    ],
)
@pytest.mark.parametrize("warm", [True, False])
async def test_an_invalid_handshake_is_the_gateways_400_before_anything_opens(
    serve_app: Any,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
    case: str,
    headers: dict[str, str],
    warm: bool,
) -> None:
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    closes: list[int | None] = []
    opened: list[str] = []
    app = socket_backend(closes, opened)
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(
            wait_ready=warm, readinessPath="/health" if warm else "/not-there", accessLog="on"
        )
        async with http.get(
            gateway.url + "/v1/ws",
            headers={"Connection": "Upgrade", "Upgrade": "websocket", **headers, "X-Mark": "ZQXMARK"},
        ) as response:
            assert response.status == 400
            assert response.content_type == "application/json"
            body = await response.read()
        assert json.loads(body)["error"]["code"] == "invalid_websocket_handshake"
        assert b"ZQXMARK" not in body and b"dGhl" not in body
        assert gateway.demand.demand() == 0 and gateway.lease_state.value == "closed"  # nothing queued
        exposition = gateway.app[keys.METRICS].exposition().decode()
    assert opened == []
    assert 'noctaya_gateway_rejections_total{reason="invalid_websocket_handshake"} 1.0' in exposition
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "noctaya.gateway.access"]
    assert [(line["status"], line["code"]) for line in lines] == [(400, "invalid_websocket_handshake")]


async def test_one_client_cannot_hold_every_socket(gateways: testing.GatewayStarter) -> None:
    """Four sockets in all, two per peer: a client holding its two (one message each inside the idle
    timeout) is refused a third, while another host still gets one; behind a trusted proxy each
    client its X-Forwarded-For names has a share of its own."""
    gateway = await gateways.start(
        wait_ready=True, websocketMaxOpen=4, websocketMaxOpenPerPeer=2, trustedProxies=["127.0.0.3/32"]
    )
    url = gateway.url + "/v1/realtime"

    def client(address: str) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))

    async with client("127.0.0.1") as one, client("127.0.0.2") as other, client("127.0.0.3") as proxy:
        held = [await one.ws_connect(url) for _ in range(2)]
        for ws in held:
            await ws.send_str("still here")
            assert await ws.receive_str(timeout=5) == "still here"
        async with one.get(url, headers=UPGRADE) as response:
            assert response.status == 429 and "Retry-After" in response.headers
            assert (await response.json())["error"]["code"] == "websockets_full"
        async with other.ws_connect(url) as ws:  # another host: its own share
            await ws.send_str("mine")
            assert await ws.receive_str(timeout=5) == "mine"
        # through the proxy: the client it names, here one that holds nothing yet
        async with proxy.ws_connect(url, headers={"X-Forwarded-For": "203.0.113.9"}) as ws:
            await ws.send_str("via proxy")
            assert await ws.receive_str(timeout=5) == "via proxy"
            async with proxy.get(url, headers={**UPGRADE, "X-Forwarded-For": "127.0.0.1"}) as response:
                assert response.status == 429  # the proxy says it is the client holding two
        exposition = gateway.app[keys.METRICS].exposition().decode()
        assert "noctaya_gateway_max_websockets_per_peer 2.0" in exposition
        assert 'noctaya_gateway_rejections_total{reason="websockets_peer_full"} 2.0' in exposition
        for ws in held:
            await ws.close()
    await gateway.wait_idle()
    # its sockets closed: its share is free again
    async with client("127.0.0.1") as one, one.ws_connect(url) as ws:
        await ws.send_str("again")
        assert await ws.receive_str(timeout=5) == "again"
    await gateway.wait_idle()
