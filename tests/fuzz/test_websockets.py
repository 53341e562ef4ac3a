"""Fuzz tier: generated WebSocket handshakes and frames, over real sockets.

Deterministic and bounded as the rest of the tier (``derandomize=True``, no example database, a fixed
number of examples). An echo backend and a gateway in front of it run on one event loop in a
background thread for the whole module; each example talks to them with plain blocking sockets.

Aspects: for any upgrade request (keys of any length and alphabet, any version, protocols, the
marker the input carries) the answer is a 101 or the gateway's JSON error, never the marker, and a
handshake it refuses opens nothing upstream; for any frames after a valid handshake (any opcode,
flags, mask, payload, one over the message bound) the gateway relays or closes with a code a close
frame may carry (never 1005, 1006 or 1015), and the open socket is given back.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import struct
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noctaya.gateway import keys, testing

MARK = b"QZXFUZZ"
FUZZ = settings(
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
MAX_MESSAGE = 1024
KEY = base64.b64encode(b"0123456789abcdef")


class Servers:
    loop: testing.BackgroundLoop
    opened: list[str]  # every socket the backend opened
    gateway: testing.RunningGateway  # warm, a small message bound

    @property
    def port(self) -> int:
        return int(self.gateway.url.rsplit(":", 1)[1])

    def open_sockets(self) -> float | None:
        return self.gateway.app[keys.METRICS].registry.get_sample_value("noctaya_gateway_websockets")


def echo_backend(opened: list[str]) -> web.Application:
    async def health(request: web.Request) -> web.Response:
        return web.Response()

    async def ws(request: web.Request) -> web.WebSocketResponse:
        sock = web.WebSocketResponse(max_msg_size=0, protocols=("realtime",))
        await sock.prepare(request)
        opened.append(request.path)
        async for message in sock:
            if isinstance(message.data, str):
                await sock.send_str(message.data)
            elif isinstance(message.data, bytes):
                await sock.send_bytes(message.data)
        return sock

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_get("/v1/ws", ws)
    return app


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    loop = testing.BackgroundLoop(name="fuzz-websockets")
    servers = Servers()
    servers.loop = loop
    servers.opened = []
    stack: list[Any] = []

    async def start() -> None:
        runner, url = await testing.serve(echo_backend(servers.opened), shutdown_timeout=0.2)
        stack.append(runner)
        starter = testing.GatewayStarter(backend_url=url)
        await starter.__aenter__()
        stack.append(starter)
        servers.gateway = await starter.start(
            wait_ready=True,
            headerTimeout="1s",
            keepAliveTimeout="200ms",
            websocketMaxMessageBytes=MAX_MESSAGE,
            websocketIdleTimeout="2s",
            websocketMaxOpenPerPeer=16,
        )

    async def stop() -> None:
        for item in reversed(stack):
            if isinstance(item, web.AppRunner):
                await item.cleanup()
            else:
                await item.__aexit__(None, None, None)

    loop.run(start())
    try:
        yield servers
    finally:
        loop.run(stop())
        loop.close()


def read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    """The response head (up to the blank line) and whatever came after it."""
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = sock.recv(65536)
        if not chunk:
            break
        raw += chunk
    head, _, rest = raw.partition(b"\r\n\r\n")
    return head, rest


def read_rest(sock: socket.socket, rest: bytes) -> bytes:
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionError, TimeoutError):
            return rest
        if not chunk:
            return rest
        rest += chunk


def upgrade(key: bytes, *, extra: bytes = b"") -> bytes:
    return (
        b"GET /v1/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
        b"Sec-WebSocket-Key: " + key + b"\r\n" + extra + b"\r\n"
    )


TOKENS = st.one_of(
    st.sampled_from([b"13", b"8", b"12", b"", b"13, 8", b"x" + MARK]),
    st.binary(max_size=12).filter(lambda b: b"\r" not in b and b"\n" not in b and b"\x00" not in b),
)
KEYS = st.one_of(
    st.binary(min_size=0, max_size=24).map(base64.b64encode),
    st.sampled_from([KEY, b"x", b"", KEY + b"=", b"!" * 24, MARK]),
)


@FUZZ
@given(
    key=st.one_of(st.none(), KEYS),
    version=st.one_of(st.none(), TOKENS),
    protocol=st.one_of(st.none(), TOKENS),
)
def test_any_handshake(
    servers: Servers, key: bytes | None, version: bytes | None, protocol: bytes | None
) -> None:
    lines = b"GET /v1/ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nX-Mark: " + MARK
    for name, value in ((b"Sec-WebSocket-Key", key), (b"Sec-WebSocket-Version", version)):
        if value is not None:
            lines += b"\r\n" + name + b": " + value
    if protocol is not None:
        lines += b"\r\nSec-WebSocket-Protocol: " + protocol
    before = len(servers.opened)
    with socket.create_connection(("127.0.0.1", servers.port), timeout=10) as sock:
        sock.sendall(lines + b"\r\n\r\n")
        head, rest = read_head(sock)
        status = int(head.split(b" ", 2)[1])
        if status == 101:
            sock.sendall(frame(0x8, struct.pack("!H", 1000)))  # close at once
            raw = head + b"\r\n\r\n" + read_rest(sock, rest)
        else:  # the error's body, by its length (the connection may be kept alive)
            length = int(
                next(line for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:"))[15:]
            )
            while len(rest) < length:
                chunk = sock.recv(65536)
                assert chunk, head
                rest += chunk
            raw = head + b"\r\n\r\n" + rest
    assert MARK not in raw
    if status != 101:
        assert b"application/json" in head.lower(), head
        body = raw.partition(b"\r\n\r\n")[2]
        assert {"message", "type", "code"} <= set(json.loads(body)["error"])
        assert len(servers.opened) == before  # refused: nothing opened upstream
    servers.loop.run(servers.gateway.wait_idle(within=10))


def frame(opcode: int, payload: bytes, *, fin: bool = True, rsv: int = 0, masked: bool = True) -> bytes:
    """One client frame, its length encoded in the shortest form."""
    first = (0x80 if fin else 0) | (rsv << 4) | opcode
    size = len(payload)
    mask_bit = 0x80 if masked else 0
    if size < 126:
        head = struct.pack("!BB", first, mask_bit | size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", first, mask_bit | 126, size)
    else:
        head = struct.pack("!BBQ", first, mask_bit | 127, size)
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def close_codes(raw: bytes) -> list[int]:
    """The codes of the close frames among the server's (unmasked) frames in ``raw``."""
    codes = []
    while len(raw) >= 2:
        opcode, size = raw[0] & 0x0F, raw[1] & 0x7F
        offset = 2
        if size == 126:
            (size,) = struct.unpack("!H", raw[2:4])
            offset = 4
        elif size == 127:
            (size,) = struct.unpack("!Q", raw[2:10])
            offset = 10
        payload, raw = raw[offset : offset + size], raw[offset + size :]
        if opcode == 0x8 and len(payload) >= 2:
            codes.append(struct.unpack("!H", payload[:2])[0])
    return codes


FRAMES = st.lists(
    st.builds(
        frame,
        opcode=st.integers(0, 15),
        payload=st.one_of(
            st.binary(max_size=200),
            st.binary(max_size=8).map(lambda b: b + MARK),
            st.just(b"\xff\xfe" + MARK),  # not UTF-8 in a text frame
            st.integers(0, 5000).map(lambda code: struct.pack("!H", code) + MARK),  # a close code
            st.just(b"m" * (MAX_MESSAGE + 1)),  # over the bound
        ),
        fin=st.booleans(),
        rsv=st.integers(0, 7),
        masked=st.booleans(),
    ),
    min_size=1,
    max_size=4,
)


@FUZZ
@given(frames=FRAMES)
def test_any_frames_after_a_valid_handshake(servers: Servers, frames: list[bytes]) -> None:
    with socket.create_connection(("127.0.0.1", servers.port), timeout=10) as sock:
        sock.sendall(upgrade(KEY, extra=b"Sec-WebSocket-Version: 13\r\n"))
        head, rest = read_head(sock)
        assert head.startswith(b"HTTP/1.1 101"), head
        with contextlib.suppress(ConnectionError):  # closed already after a broken frame
            sock.sendall(b"".join(frames) + frame(0x8, struct.pack("!H", 1000)))
        raw = read_rest(sock, rest)
    for code in close_codes(raw):
        assert 1000 <= code <= 4999 and code not in (1004, 1005, 1006, 1015), code
    servers.loop.run(servers.gateway.wait_idle(within=10))
    assert servers.open_sockets() == 0
