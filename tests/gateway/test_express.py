"""The express lane: warm requests answered below aiohttp's request handling, as the usual path would.

Aspects: every shape of backend answer (a whole body, a chunked one relayed raw, a body piped with its
Content-Length or with chunked framing, no body, an error) reaches the client as the usual path writes
it (the same gateway with the lane off, compared byte for byte but for the Date); what the lane leaves
to the usual path (HEAD, Expect, HTTP/1.0, Connection: close, a percent-encoded or dotted path, the
gateway's own paths, a key to check, a body still arriving, a cold backend, draining) is left there
and answered as before; pipelined requests behind a taken one are answered in order; a backend that
fails before its head is a 502 sent once, one that sends no head in time a 504; a stream the backend
breaks ends with the error event, any other body it breaks cuts the client; a client that leaves
closes its backend connection and frees its slot (a 499); a client that stops reading pauses the
backend and is cut at the write timeout; the drain cuts a running stream with the draining event; the
keep-alive timeout closes a connection idle after a taken request; the access log and the metrics
count a taken request as the usual path does; the openai SDK works through it; a client that sends its
next request as soon as a relayed answer ends (before aiohttp's loop has come back to wait) has it
taken all the same.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import pathlib
import re
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
from aiohttp import base_protocol, http_parser
from openai.types.chat import ChatCompletionMessageParam

from noctaya.gateway import app as app_
from noctaya.gateway import express, keys, proxy, testing
from noctaya.serving import connections
from tests.gateway.conftest import SdkFactory

Script = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[bool]]
"""Writes one answer; False: the connection is closed after it."""

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
JSON_ANSWER = (
    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Request-Id: r1\r\nServer: engine\r\n"
    b"Date: yesterday\r\nConnection: keep-alive, X-Hop\r\nX-Hop: h\r\nKeep-Alive: timeout=5\r\n"
    b'Content-Length: 11\r\n\r\n{"ok":true}'
)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%b\r\n" % (len(data), data)


def answer(data: bytes) -> Script:
    async def write(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(data)
        await writer.drain()
        return True

    return write


def slow_then(release: asyncio.Event, body: bytes) -> Script:
    async def write(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        await release.wait()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body))
        await writer.drain()
        return True

    return write


async def silent(reader: asyncio.StreamReader, _: asyncio.StreamWriter) -> bool:
    """Answers nothing, until the gateway closes the connection."""
    await reader.read(1)
    return False


async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """One event of a stream that never ends, until the gateway closes the connection."""
    writer.write(SSE_HEAD + chunk(b"data: 1\n\n"))
    await writer.drain()
    await reader.read(1)
    return False


class Backend:
    """A raw HTTP/1.1 backend: ``/healthz`` and the model list are a 200; ``/v1/<name>`` runs
    ``scripts[name]`` (``ok`` by default). Keeps every request head it was sent to a script."""

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {"ok": answer(JSON_ANSWER)}
        self.heads: list[bytes] = []
        self.bodies: list[bytes] = []
        self.closed = asyncio.Event()  # a connection closed by the gateway
        self.url = ""
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
                body = await reader.readexactly(int(length.group(1))) if length else b""
                target = head.split(b" ", 2)[1].decode()
                name = target.partition("?")[0].removeprefix("/v1/")
                if name not in self.scripts:
                    writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{"data":[]}')
                    continue
                self.heads.append(head)
                self.bodies.append(body)
                if not await self.scripts[name](reader, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed.set()
        finally:
            writer.close()


@pytest.fixture
async def raw_backend() -> AsyncIterator[Backend]:
    backend = Backend()
    await backend.start()
    yield backend
    await backend.stop()


class Client:
    """One raw client connection to a gateway."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def to(cls, gateway: testing.RunningGateway, *, receive_buffer: int | None = None) -> Client:
        host, port = gateway.url.removeprefix("http://").split(":")
        if receive_buffer is None:
            return cls(*await asyncio.open_connection(host, int(port)))
        sock = socket.socket()  # a small receive buffer: the gateway's side fills up soon
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
        return cls(*await asyncio.open_connection(sock=sock, limit=receive_buffer))

    def send(self, data: bytes) -> None:
        self.writer.write(data)

    async def response(self) -> tuple[bytes, bytes]:
        """One whole response (past any interim ``1xx``): its head and its body as framed on the wire."""
        head = await self.reader.readuntil(b"\r\n\r\n")
        while head.startswith(b"HTTP/1.1 1"):
            head = await self.reader.readuntil(b"\r\n\r\n")
        length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if length:
            return head, await self.reader.readexactly(int(length.group(1)))
        if re.search(rb"(?i)\r\ntransfer-encoding: *chunked", head):
            parts: list[bytes] = []
            while True:
                size_line = await self.reader.readuntil(b"\r\n")
                parts.append(size_line)
                size = int(size_line, 16)
                parts.append(await self.reader.readexactly(size + 2))
                if size == 0:
                    return head, b"".join(parts)
        return head, b""

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()


def post(path: str, body: bytes = b"{}", *, extra: bytes = b"") -> bytes:
    return (
        b"POST %s HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n%bContent-Length: %d\r\n\r\n%b"
        % (
            path.encode(),
            extra,
            len(body),
            body,
        )
    )


def lane_of(gateway: testing.RunningGateway) -> express.Lane:
    return gateway.app[app_.EXPRESS]


@contextlib.asynccontextmanager
async def warm_gateway(
    backend: Backend, *, lane: bool = True, **overrides: object
) -> AsyncIterator[testing.RunningGateway]:
    document = {"backendUrl": backend.url, "listen": "127.0.0.1:0", **testing.FAST_TIMINGS, **overrides}
    from noctaya.contract import gateway as gateway_contract

    app = app_.make_app(gateway_contract.build_config(document))
    runner, url = await testing.serve(app, handler_cancellation=True, shutdown_timeout=0.5, express_lane=lane)
    gateway = testing.RunningGateway(app=app, url=url, runner=runner)
    try:
        models = app[keys.COLD_ANSWERS].models
        await gateway.wait_for(lambda: app[keys.READINESS].ready and (models.url is None or models.reads > 0))
        yield gateway
    finally:
        await gateway.stop()


async def warmed(gateway: testing.RunningGateway, *, receive_buffer: int | None = None) -> Client:
    """A client connection whose first request (answered) left an idle backend connection pooled."""
    client = await Client.to(gateway, receive_buffer=receive_buffer)
    client.send(post("/v1/ok"))
    head, _ = await client.response()
    assert head.startswith(b"HTTP/1.1 200")
    pool = gateway.app[app_.UPSTREAM].pool
    assert pool is not None
    await gateway.wait_for(lambda: pool.idle > 0)
    return client


def normal(head: bytes) -> list[bytes]:
    """A head's lines with the Date's value out and names in lower case, sorted: what two paths
    writing the same answer must agree on (aiohttp's writer orders and cases some names its way)."""
    lines = head.rstrip(b"\r\n").split(b"\r\n")
    fields = []
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.lower() == b"date":
            value = b" <date>"
        fields.append(name.lower() + b":" + value)
    return [lines[0], *sorted(fields)]


SHAPES: dict[str, bytes] = {
    "whole": JSON_ANSWER,
    "sse": SSE_HEAD + chunk(b"data: 1\n\n") + chunk(b"data: 2\n\n") + b"0\r\n\r\n",
    "empty": b"HTTP/1.1 204 No Content\r\nX-A: b\r\n\r\n",
    "get": JSON_ANSWER,
    "error": b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
    "odd-reason": b"HTTP/1.1 200 Fine Thanks\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi",
    "no-reason": b"HTTP/1.1 200 \r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi",
    "untyped": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
    "untyped-chunked": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n",
    # a control character in a field value (llhttp's lenient parsing takes it): a 502 on both paths
    "control": b"HTTP/1.1 200 OK\r\nX-Bad: a\x7fb\r\nContent-Length: 2\r\n\r\nhi",
    "control-reason": b"HTTP/1.1 200 O\x01K\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nhi",
    "control-sse": SSE_HEAD.replace(b"\r\n\r\n", b"\r\nX-Bad: \x01\r\n\r\n")
    + chunk(b"data: 1\n\n")
    + b"0\r\n\r\n",
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_each_answer_reaches_the_client_as_the_usual_path_writes_it(
    raw_backend: Backend, shape: str
) -> None:
    raw_backend.scripts[shape] = answer(SHAPES[shape])
    seen: dict[bool, tuple[bytes, bytes]] = {}
    heads: dict[bool, bytes] = {}
    for lane in (True, False):
        async with warm_gateway(raw_backend, lane=lane) as gateway:
            client = await warmed(gateway)
            taken = lane_of(gateway).taken
            if shape == "get":  # no body: no Content-Length goes to the backend either
                client.send(b"GET /v1/get HTTP/1.1\r\nHost: gw\r\n\r\n")
            else:
                client.send(post(f"/v1/{shape}"))
            seen[lane] = await client.response()
            heads[lane] = raw_backend.heads[-1]
            assert lane_of(gateway).taken == taken + lane  # taken by the lane only when it is on
            await client.close()
    assert heads[True] == heads[False]
    (fast_head, fast_body), (usual_head, usual_body) = seen[True], seen[False]
    assert fast_body == usual_body
    if shape == "whole":  # aiohttp writes a known name its own way; the lane passes it as it came
        assert b"\r\nX-Request-Id: r1\r\n" in fast_head and b"\r\nX-Request-ID: r1\r\n" in usual_head
    assert normal(fast_head) == normal(usual_head)
    assert b"X-Hop" not in fast_head and b"engine" not in fast_head and b"yesterday" not in fast_head
    if shape == "control-reason":  # the standard reason instead (aiohttp's writer sent nothing)
        assert fast_head.startswith(b"HTTP/1.1 200 OK\r\n") and fast_body == b"hi"
    elif shape.startswith("control"):
        assert fast_head.startswith(b"HTTP/1.1 502 ") and b"control character" in fast_body


async def test_a_large_body_is_piped_with_its_length_and_one_read_until_close_is_chunked(
    raw_backend: Backend,
) -> None:
    big = bytes(range(256)) * 2048  # 512 KiB: not whole when its head is read

    async def sized(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n"
            % len(big)
        )
        await writer.drain()
        for start in range(0, len(big), 65536):
            writer.write(big[start : start + 65536])
            await writer.drain()
        return True

    async def until_close(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n")
        await writer.drain()
        writer.write(b"part one, ")
        await writer.drain()
        writer.write(b"part two")
        return False

    raw_backend.scripts.update(sized=sized, until=until_close)
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/sized"))
        head, body = await client.response()
        assert b"\r\nContent-Length: %d\r\n" % len(big) in head
        assert body == big
        await warmed_again(gateway, client)
        client.send(post("/v1/until"))
        head, body = await client.response()
        assert b"\r\nTransfer-Encoding: chunked\r\n" in head
        assert decode_chunked(body) == b"part one, part two"
        assert lane_of(gateway).taken == 3  # with the warming request between them
        await client.close()


async def warmed_again(gateway: testing.RunningGateway, client: Client) -> None:
    """An idle backend connection pooled again (one request makes one when none is left)."""
    client.send(post("/v1/ok"))
    await client.response()
    pool = gateway.app[app_.UPSTREAM].pool
    assert pool is not None
    await gateway.wait_for(lambda: pool.idle > 0)


def decode_chunked(body: bytes) -> bytes:
    out: list[bytes] = []
    position = 0
    while True:
        end = body.index(b"\r\n", position)
        size = int(body[position:end], 16)
        if size == 0:
            return b"".join(out)
        out.append(body[end + 2 : end + 2 + size])
        position = end + 2 + size + 2


async def test_the_backend_gets_the_head_the_usual_path_writes(raw_backend: Backend) -> None:
    request = post(
        "/v1/ok?a=1",
        b'{"x":1}',
        extra=b"Authorization: Bearer sk-secret\r\nConnection: keep-alive, X-Drop\r\nX-Drop: 1\r\n"
        b"X-Forwarded-For: 10.0.0.1\r\nX-Forwarded-Host: evil\r\nX-Keep: k\r\n",
    )
    heads: dict[bool, bytes] = {}
    for lane in (True, False):
        async with warm_gateway(raw_backend, lane=lane) as gateway:
            client = await warmed(gateway)
            client.send(request)
            await client.response()
            heads[lane] = raw_backend.heads[-1]
            assert raw_backend.bodies[-1] == b'{"x":1}'
            await client.close()
    assert heads[True] == heads[False]
    assert heads[True].startswith(b"POST /v1/ok?a=1 HTTP/1.1\r\n")
    for absent in (b"sk-secret", b"X-Drop", b"evil"):
        assert absent not in heads[True]
    assert b"\r\nX-Keep: k\r\n" in heads[True]
    assert b"\r\nX-Forwarded-For: 10.0.0.1, 127.0.0.1\r\n" in heads[True]


TARGETS = [
    "/v1/ok?a=1#frag",
    "/v1/ok?",
    "/v1//ok",
    "/v1/ok?a=%41&b=%zz&c=[1]|{}",
    "/v1/ok?a=?b/c",
    "/v1/o:k_-/",
]


@pytest.mark.parametrize("target", TARGETS)
async def test_every_target_reaches_the_backend_as_the_usual_path_sends_it(
    raw_backend: Backend, target: str
) -> None:
    sent: dict[bool, bytes] = {}
    for lane in (True, False):
        async with warm_gateway(raw_backend, lane=lane) as gateway:
            client = await warmed(gateway)
            client.send(post(target))
            head, _ = await client.response()
            assert head.startswith(b"HTTP/1.1 200")
            sent[lane] = raw_backend.heads[-1].split(b"\r\n")[0]
            await client.close()
    assert sent[True] == sent[False]


LEFT_TO_AIOHTTP = {
    "expect": post("/v1/ok", extra=b"Expect: 100-continue\r\n"),
    "http/1.0": b"POST /v1/ok HTTP/1.0\r\nHost: gw\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}",
    "close": post("/v1/ok", extra=b"Connection: close\r\n"),
    "percent": post("/v1/%6fk"),
    "dot": post("/v1/x/../ok"),
    "own path": b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n",
    "no host": b"POST /v1/ok HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
    "encoded body": post("/v1/ok", extra=b"Content-Encoding: identity\r\n"),
    "absolute form": b"POST http://gw/v1/ok HTTP/1.1\r\nHost: gw\r\nContent-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("case", sorted(LEFT_TO_AIOHTTP))
async def test_what_the_lane_does_not_take_goes_the_usual_way(raw_backend: Backend, case: str) -> None:
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(LEFT_TO_AIOHTTP[case])
        head, _ = await client.response()
        assert lane_of(gateway).taken == 0  # the warming request opened the pool's connection
        expected = {
            "dot": b"HTTP/1.1 400",
            "no host": b"HTTP/1.0 400",  # aiohttp's parser refuses it
            "own path": b"HTTP/1.1 200",
            "http/1.0": b"HTTP/1.0 200",
        }
        assert head.startswith(expected.get(case, b"HTTP/1.1 200")), head
        await client.close()


async def test_a_head_request_goes_the_usual_way(raw_backend: Backend) -> None:
    raw_backend.scripts["head"] = answer(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n")
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(b"HEAD /v1/head HTTP/1.1\r\nHost: gw\r\n\r\n")
        head = await client.reader.readuntil(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200") and b"Content-Length: 11" in head
        assert lane_of(gateway).taken == 0
        client.send(post("/v1/ok"))  # nothing of a body followed the HEAD's answer
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 200") and body == b'{"ok":true}'
        await client.close()


async def test_a_body_still_arriving_goes_the_usual_way(raw_backend: Backend) -> None:
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        whole = post("/v1/ok", b'{"x":"' + b"y" * 1000 + b'"}')
        client.send(whole[:-10])
        await asyncio.sleep(0)  # the head is parsed with part of the body
        await client.writer.drain()
        client.send(whole[-10:])
        head, _ = await client.response()
        assert head.startswith(b"HTTP/1.1 200")
        assert raw_backend.bodies[-1] == whole.split(b"\r\n\r\n", 1)[1]
        await client.close()


async def test_a_keyed_gateway_takes_only_a_key_known_from_an_unchanged_file(
    raw_backend: Backend, tmp_path: pathlib.Path
) -> None:
    keys_file = tmp_path / "keys"
    keys_file.write_text("sk-one\n")
    one, two = b"Authorization: Bearer sk-one\r\n", b"Authorization: Bearer sk-two\r\n"
    async with warm_gateway(raw_backend, apiKeyFile=str(keys_file)) as gateway:
        client = await Client.to(gateway)
        for key, status, taken in ((one, 200, 0), (one, 200, 1), (two, 401, 1), (b"", 401, 1)):
            client.send(post("/v1/ok", extra=key))
            head, _ = await client.response()
            assert head.startswith(b"HTTP/1.1 %d" % status)
            assert lane_of(gateway).taken == taken
        assert b"sk-one" not in raw_backend.heads[-1]  # the key is not passed on
        # the file changes: the next request is the usual path's, which reads it again
        keys_file.write_text("sk-two\n")
        os.utime(keys_file, ns=(time.time_ns(), time.time_ns() + 10**9))
        for key, status, taken in ((two, 200, 1), (two, 200, 2), (one, 401, 2)):
            client.send(post("/v1/ok", extra=key))
            head, _ = await client.response()
            assert head.startswith(b"HTTP/1.1 %d" % status)
            assert lane_of(gateway).taken == taken
        await client.close()


async def test_a_draining_gateway_leaves_every_request_to_the_usual_path(raw_backend: Backend) -> None:
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        gateway.app[keys.DRAIN].begin()
        client.send(post("/v1/ok"))
        head, _ = await client.response()
        assert head.startswith(b"HTTP/1.1 503")
        assert lane_of(gateway).taken == 0
        await client.close()


async def test_requests_sent_behind_a_taken_one_are_answered_in_order(raw_backend: Backend) -> None:
    release = asyncio.Event()
    slow = slow_then(release, b"slow")
    raw_backend.scripts.update(slow=slow, a=answer(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na"))
    raw_backend.scripts["b"] = answer(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nb")
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/slow"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)  # the slow one reached the backend
        client.send(post("/v1/a") + b"GET /healthz HTTP/1.1\r\nHost: gw\r\n\r\n" + post("/v1/b"))
        await asyncio.sleep(0.05)
        assert len(raw_backend.heads) == 2  # held, unparsed, while the taken one is answered
        release.set()
        bodies = [(await client.response())[1] for _ in range(4)]
        assert bodies[0] == b"slow" and bodies[1] == b"a" and b'"status"' in bodies[2] and bodies[3] == b"b"
        await client.close()
    assert [head.split(b" ")[1] for head in raw_backend.heads[1:]] == [b"/v1/slow", b"/v1/a", b"/v1/b"]


async def test_a_backend_that_fails_before_its_head_is_a_502_sent_once(raw_backend: Backend) -> None:
    async def hang_up(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        return False

    raw_backend.scripts["gone"] = hang_up
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(b"GET /v1/gone HTTP/1.1\r\nHost: gw\r\n\r\n")  # idempotent: still never sent again
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 502")
        assert json.loads(body)["error"]["code"] == "backend_unavailable"
        assert lane_of(gateway).taken == 1
        assert [h.split(b" ")[1] for h in raw_backend.heads].count(b"/v1/gone") == 1
        client.send(post("/v1/ok"))  # the connection is kept, and the next request served
        head, _ = await client.response()
        assert head.startswith(b"HTTP/1.1 200")
        await gateway.wait_idle()
        await client.close()


async def test_a_backend_that_sends_no_head_in_time_is_a_504_and_its_connection_closed(
    raw_backend: Backend,
) -> None:
    raw_backend.scripts["silent"] = silent
    async with warm_gateway(raw_backend, backendHeaderTimeout="300ms") as gateway:
        client = await warmed(gateway)
        raw_backend.closed.clear()
        client.send(post("/v1/silent"))
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 504")
        assert json.loads(body)["error"]["code"] == "backend_timeout"
        await asyncio.wait_for(raw_backend.closed.wait(), 5)
        await gateway.wait_idle()
        await client.close()


async def test_a_stream_the_backend_breaks_ends_with_the_error_event_and_another_body_cuts_the_client(
    raw_backend: Backend,
) -> None:
    async def broken_stream(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(SSE_HEAD + chunk(b"data: 1\n\n"))
        await writer.drain()
        return False

    async def broken_body(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part")
        await writer.drain()
        await asyncio.sleep(0.05)
        return False

    raw_backend.scripts.update(stream=broken_stream, body=broken_body)
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/stream"))
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 200")
        events = decode_chunked(body)
        assert events.startswith(b"data: 1\n\n")
        assert json.loads(events.split(b"data: ")[2])["error"]["code"] == "backend_disconnected"
        await warmed_again(gateway, client)
        client.send(post("/v1/body"))
        head = await client.reader.readuntil(b"\r\n\r\n")
        assert b"Content-Length: 100" in head
        rest = await client.reader.read()  # until the gateway cuts the connection
        assert rest == b"only part"
        assert (
            lane_of(gateway).taken == 2
        )  # the stream and the body (the request between them opened a connection)
        await gateway.wait_idle()
        await client.close()


async def test_a_client_that_leaves_closes_its_backend_connection_and_frees_its_slot(
    raw_backend: Backend,
) -> None:
    raw_backend.scripts["endless"] = endless
    async with warm_gateway(raw_backend, accessLog="on") as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/endless"))
        await client.reader.readuntil(b"data: 1\n\n\r\n")
        assert gateway.app[app_.UPSTREAM].relaying == 1
        raw_backend.closed.clear()
        await client.close()
        await asyncio.wait_for(raw_backend.closed.wait(), 5)
        await gateway.wait_idle()
        assert gateway.app[app_.UPSTREAM].relaying == 0
        sample = gateway.app[keys.METRICS].registry.get_sample_value(
            "noctaya_gateway_requests_total", {"route": "other", "code": "499"}
        )
        assert sample == 1


async def test_a_client_that_stops_reading_pauses_the_backend_and_is_cut_at_the_write_timeout(
    raw_backend: Backend,
) -> None:
    async def flood(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(SSE_HEAD)
        with contextlib.suppress(ConnectionError):
            while True:
                writer.write(chunk(b"data: " + b"x" * 16384 + b"\n\n"))
                await writer.drain()
        return False

    raw_backend.scripts["flood"] = flood
    async with warm_gateway(raw_backend, clientWriteTimeout="500ms") as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/flood"))
        pool = gateway.app[app_.UPSTREAM].pool
        assert pool is not None
        await gateway.wait_for(lambda: pool.paused == 1)  # the client reads nothing: the backend waits
        await gateway.wait_idle(within=10)  # then the write timeout cuts it, and its slot is free
        await gateway.wait_for(lambda: pool.paused == 0)
        client.writer.close()


async def test_the_drain_cuts_a_running_stream_with_the_draining_event(raw_backend: Backend) -> None:
    raw_backend.scripts["endless"] = endless
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/endless"))
        await client.reader.readuntil(b"data: 1\n\n\r\n")
        upstream = gateway.app[app_.UPSTREAM]
        assert await upstream.cut_streams(within=5) == 1
        rest = await client.reader.readuntil(b"0\r\n\r\n")
        assert json.loads(decode_chunked(rest).removeprefix(b"data: "))["error"]["code"] == "draining"
        await gateway.wait_idle()
        await client.close()


async def test_a_connection_idle_after_a_taken_request_is_closed_at_the_keepalive_timeout(
    raw_backend: Backend,
) -> None:
    async with warm_gateway(raw_backend, keepAliveTimeout="300ms") as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/ok"))
        await client.response()
        assert lane_of(gateway).taken == 1
        assert await asyncio.wait_for(client.reader.read(), 5) == b""  # closed by the gateway


async def test_a_taken_request_longer_than_the_keepalive_timeout_is_not_cut_as_idle(
    raw_backend: Backend,
) -> None:
    # the keep-alive timer the last answer's end armed fires while the next request is answered
    release = asyncio.Event()
    raw_backend.scripts["slow"] = slow_then(release, b"late")
    async with warm_gateway(raw_backend, keepAliveTimeout="200ms") as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/slow"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)
        assert lane_of(gateway).taken == 1
        await asyncio.sleep(0.6)  # three keep-alive timeouts while the backend thinks
        release.set()
        head, body = await asyncio.wait_for(client.response(), 5)
        assert head.startswith(b"HTTP/1.1 200") and body == b"late"
        client.send(post("/v1/ok"))  # and the connection is kept alive after it
        head, _ = await asyncio.wait_for(client.response(), 5)
        assert head.startswith(b"HTTP/1.1 200") and lane_of(gateway).taken == 2
        assert await asyncio.wait_for(client.reader.read(), 5) == b""  # then closed once idle


async def test_a_taken_request_is_logged_and_counted_as_the_usual_path_counts_it(
    raw_backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    async with warm_gateway(raw_backend, accessLog="on") as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/chat/completions"))
        raw_backend.scripts["chat/completions"] = answer(JSON_ANSWER)
        await client.response()
        await client.close()
        registry = gateway.app[keys.METRICS].registry
        assert (
            registry.get_sample_value(
                "noctaya_gateway_requests_total", {"route": "chat/completions", "code": "200"}
            )
            == 1
        )
        assert registry.get_sample_value("noctaya_gateway_admitted_total", {"path": "warm"}) == 2
    lines = [
        json.loads(record.getMessage())
        for record in caplog.records
        if record.name == "noctaya.gateway.access"
    ]
    chat = [line for line in lines if line["route"] == "chat/completions"]
    assert (
        len(chat) == 1 and chat[0]["status"] == 200 and chat[0]["path"] == "warm" and chat[0]["bytes"] == 11
    )


async def test_the_openai_sdk_streams_and_completes_through_the_lane(
    gateways: testing.GatewayStarter, sdk: SdkFactory
) -> None:
    gateway = await gateways.start(wait_ready=True)
    client = sdk(gateway)
    messages: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
    for _ in range(3):
        completion = await client.chat.completions.create(model="fake", messages=messages)
        assert completion.choices[0].message.content
        stream = await client.chat.completions.create(model="fake", messages=messages, stream=True)
        assert "".join([part.choices[0].delta.content or "" async for part in stream if part.choices])
    # each stream follows a completion that left an idle backend connection (a stream's own waits
    # out its probation before it is used again)
    assert lane_of(gateway).taken >= 3
    await gateway.wait_idle()
    assert gateway.app[app_.UPSTREAM].relaying == 0
    assert proxy.SSE_TYPE == "text/event-stream"


async def test_a_client_that_reads_slowly_gets_the_whole_stream_once_it_drains(raw_backend: Backend) -> None:
    # 16 MiB: more than the socket buffers between the gateway and a client that reads nothing hold
    events = [b"data: %d %s\n\n" % (n, b"x" * 16384) for n in range(1024)]

    async def long_stream(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(SSE_HEAD)
        for event in events:
            writer.write(chunk(event))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    raw_backend.scripts["long"] = long_stream
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway, receive_buffer=16384)
        client.send(post("/v1/long"))
        pool = gateway.app[app_.UPSTREAM].pool
        assert pool is not None
        await gateway.wait_for(lambda: pool.paused == 1)  # the client has read nothing yet
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 200")
        assert decode_chunked(body) == b"".join(events)
        assert lane_of(gateway).taken == 1
        await gateway.wait_idle()
        assert pool.paused == 0
        await client.close()


async def test_a_backend_that_switches_protocols_unasked_is_a_502(raw_backend: Backend) -> None:
    raw_backend.scripts["switch"] = answer(
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: upgrade\r\n\r\n"
    )
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/switch"))
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 502")
        assert b"switched protocols" in body
        assert lane_of(gateway).taken == 1
        await gateway.wait_idle()
        await client.close()


async def test_a_stopping_gateway_lets_a_taken_request_finish(raw_backend: Backend) -> None:
    release = asyncio.Event()
    slow = slow_then(release, b"slow")
    raw_backend.scripts["slow"] = slow
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/slow"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)
        stopping = asyncio.create_task(gateway.stop())
        await asyncio.sleep(0.05)
        assert not stopping.done()  # the shutdown waits for the request in progress
        release.set()
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 200") and body == b"slow"
        await stopping
        assert await client.reader.read() == b""  # and then the connection closes
        assert lane_of(gateway).taken == 1


async def test_many_requests_pipelined_behind_a_taken_one_pause_reading_and_are_all_answered(
    raw_backend: Backend,
) -> None:
    release = asyncio.Event()
    slow = slow_then(release, b"slow")
    raw_backend.scripts["slow"] = slow
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/slow"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)
        behind = [post("/v1/ok", b'{"n":%d,"pad":"%s"}' % (n, b"p" * 2000)) for n in range(60)]  # ~125 KiB
        client.send(b"".join(behind))
        await client.writer.drain()
        await asyncio.sleep(0.05)
        assert len(raw_backend.heads) == 2
        release.set()
        bodies = [(await client.response())[1] for _ in range(61)]
        assert bodies[0] == b"slow" and all(body == b'{"ok":true}' for body in bodies[1:])
        assert [json.loads(body)["n"] for body in raw_backend.bodies[2:]] == list(range(60))
        await client.close()


async def test_an_event_stream_with_a_length_the_backend_breaks_cuts_the_client(raw_backend: Backend) -> None:
    async def sized_stream(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 1000\r\n\r\ndata: 1\n\n"
        )
        await writer.drain()
        await asyncio.sleep(0.05)
        return False

    raw_backend.scripts["sized"] = sized_stream
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/sized"))
        head = await client.reader.readuntil(b"\r\n\r\n")
        assert b"Content-Length: 1000" in head
        assert await client.reader.read() == b"data: 1\n\n"  # no event framed into a sized body: cut
        assert lane_of(gateway).taken == 1
        await gateway.wait_idle()


async def test_requests_behind_an_answer_the_client_has_not_read_wait_for_it_to_drain(
    raw_backend: Backend,
) -> None:
    body = b"b" * 60000
    raw_backend.scripts["big"] = answer(
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%b" % (len(body), body)
    )
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway, receive_buffer=4096)
        connection = the_connection(gateway)
        sent = 0
        while not connection.writing_paused:  # one answer at a time, none read
            assert sent < 500, "the client's side never filled"
            seen = len(raw_backend.heads)
            client.send(b"GET /v1/big HTTP/1.1\r\nHost: gw\r\n\r\n")
            sent += 1
            # its answer written (the passage ended), so the loop's check sees whether it filled the
            # client's side: a request sent before that would wait behind it, never reaching the backend
            await gateway.wait_for(
                lambda: len(raw_backend.heads) > seen and not connection._request_in_progress  # noqa: B023
            )
        # the last answer has not drained: what the client sends now waits for it, unparsed (no
        # answers pile up unread, and the idle timer does not run while the client is behind)
        client.send(b"GET /v1/big HTTP/1.1\r\nHost: gw\r\n\r\n" * 2)
        await asyncio.sleep(0.05)
        assert len(raw_backend.heads) == sent + 1
        for _ in range(sent + 2):
            head, got = await client.response()
            assert head.startswith(b"HTTP/1.1 200") and got == body
        assert len(raw_backend.heads) == sent + 3
        await client.close()


def the_connection(gateway: testing.RunningGateway) -> connections.Protocol:
    """The gateway's one open client connection."""
    server = gateway.runner.server
    assert server is not None
    (connection,) = server.connections
    assert isinstance(connection, connections.Protocol)
    return connection


async def choked(gateway: testing.RunningGateway) -> Client:
    """A warmed client whose connection's transport fills after a few KiB (small buffers both ends)."""
    client = await warmed(gateway, receive_buffer=4096)
    connection = the_connection(gateway)
    assert connection.transport is not None
    connection.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    connection.transport.set_write_buffer_limits(high=2048)
    return client


async def test_a_request_split_around_the_end_of_an_undrained_answer_is_parsed_whole(
    raw_backend: Backend,
) -> None:
    release = asyncio.Event()
    raw_backend.scripts.update(
        slow=slow_then(release, b"x" * 30000), b=answer(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nB")
    )
    async with warm_gateway(raw_backend) as gateway:
        client = await choked(gateway)
        client.send(post("/v1/slow"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)
        client.send(post("/v1/b")[:30])  # held while the slow one is answered
        await asyncio.sleep(0.05)
        release.set()
        connection = the_connection(gateway)
        await gateway.wait_for(lambda: connection._passage is None)
        client.send(post("/v1/b")[30:])  # its answer has not drained: held behind the first part
        assert (await client.response())[1] == b"x" * 30000
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 200") and body == b"B"
        await client.close()


async def test_a_client_behind_on_reading_is_not_closed_as_idle(raw_backend: Backend) -> None:
    release = asyncio.Event()
    raw_backend.scripts.update(
        slow=slow_then(release, b"x" * 30000), b=answer(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nB")
    )
    async with warm_gateway(raw_backend, keepAliveTimeout="200ms", clientWriteTimeout="10s") as gateway:
        client = await choked(gateway)
        client.send(post("/v1/slow"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)
        client.send(post("/v1/b"))
        await asyncio.sleep(0.05)
        release.set()
        await asyncio.sleep(0.6)  # reads nothing for longer than the keep-alive timeout
        assert (await client.response())[1] == b"x" * 30000
        assert (await client.response())[1] == b"B"
        await client.close()


async def test_a_client_that_leaves_while_the_gateway_stops_does_not_hold_the_stop(
    raw_backend: Backend,
) -> None:
    raw_backend.scripts["silent"] = silent
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/silent"))
        await gateway.wait_for(lambda: len(raw_backend.heads) == 2)
        connection = the_connection(gateway)
        stopping = asyncio.create_task(gateway.stop())
        await gateway.wait_for(lambda: connection._handler_waiter is not None)  # it waits for the request
        await client.close()
        await asyncio.wait_for(stopping, 0.4)  # well within the shutdown timeout (0.5 s)


async def test_framing_broken_across_reads_fails_the_stream_and_passes_nothing_after_it(
    raw_backend: Backend,
) -> None:
    async def broken(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        writer.write(SSE_HEAD + chunk(b"data: 1\n\n") + b"5\r\nab")  # a small chunk, held until whole
        await writer.drain()
        await asyncio.sleep(0.05)
        writer.write(b"c\r\n123456789abc\r\n")  # five bytes and no line end: then a chunk-like tail
        await writer.drain()
        await asyncio.sleep(0.05)
        return False

    raw_backend.scripts["broken"] = broken
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        client.send(post("/v1/broken"))
        head, body = await client.response()
        assert head.startswith(b"HTTP/1.1 200")
        events = decode_chunked(body)
        assert b"123456789abc" not in events and b"ab" not in events.removeprefix(b"data: 1\n\n")[:8]
        assert json.loads(events.split(b"data: ")[2])["error"]["code"] == "backend_disconnected"
        await gateway.wait_idle()
        await client.close()


async def test_a_request_the_lane_cannot_admit_gives_the_idle_connection_back_untouched(
    raw_backend: Backend,
) -> None:
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)
        pool = gateway.app[app_.UPSTREAM].pool
        assert pool is not None and (pool.open, pool.idle) == (1, 1)
        gateway.app[keys.READINESS].mark_cold(reason="a test")  # no in-flight slot is free now
        client.send(post("/v1/ok"))
        head, body = await client.response()  # held as a cold request, then served once ready again
        assert head.startswith(b"HTTP/1.1 200") and body == b'{"ok":true}'
        assert lane_of(gateway).taken == 0
        registry = gateway.app[keys.METRICS].registry
        assert registry.get_sample_value("noctaya_gateway_admitted_total", {"path": "cold"}) == 1
        assert pool.open == 1  # the connection the lane looked at served it: none was opened
        await client.close()


async def test_a_request_sent_the_moment_a_relayed_answer_ends_is_taken(raw_backend: Backend) -> None:
    # the answer's end comes in a later read than its head, so the usual path writes it from the
    # backend's read callback and its handler ends one loop turn after: the next request, sent just
    # then, comes while aiohttp's loop is between two requests (parked, and offered to the lane
    # once the loop waits); each later one comes while a passage or the loop waits
    count = 4
    request = post("/v1/chunked")
    client = socket.socket()
    first_came = asyncio.Event()
    sent = 1

    async def chunked(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        nonlocal sent
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunk(b"first")
        )
        await first_came.wait()  # the gateway has passed the head on: the end is a read of its own
        first_came.clear()
        writer.write(chunk(b"last") + b"0\r\n\r\n")
        await asyncio.sleep(0)  # the gateway has read the end and written it; its handler ends next
        if sent < count:
            client.send(request)  # at once, as a client in a process of its own would
            sent += 1
        return True

    raw_backend.scripts["chunked"] = chunked
    async with warm_gateway(raw_backend) as gateway:
        loop = asyncio.get_running_loop()
        host, port = gateway.url.removeprefix("http://").split(":")
        client.setblocking(False)
        await loop.sock_connect(client, (host, int(port)))
        await loop.sock_sendall(client, request)
        received = b""
        for _ in range(count):
            while b"first" not in received:
                received += await loop.sock_recv(client, 65536)
            first_came.set()
            while b"\r\n0\r\n\r\n" not in received:
                received += await loop.sock_recv(client, 65536)
            answer_, _, received = received.partition(b"\r\n0\r\n\r\n")
            assert answer_.startswith(b"HTTP/1.1 200") and answer_.endswith(b"4\r\nlast")
        client.close()
        # the first had no idle backend connection to take; every later one is the lane's
        assert lane_of(gateway).taken == count - 1
        assert len(raw_backend.heads) == count


async def test_a_body_reader_the_lane_takes_holds_no_reading_paused() -> None:
    # aiohttp's behaviour the lane stands on (it never reads a taken request's body reader): a body
    # past the reader's high mark (twice the read buffer) pauses the reading and the parser before
    # the body ends, so it is not whole (the lane leaves it); one within the mark ends at once and
    # leaves the reading going

    class Counting(base_protocol.BaseProtocol):
        pauses = 0

        def pause_reading(self) -> None:
            self.pauses += 1
            super().pause_reading()

    loop = asyncio.get_running_loop()
    for size, whole in ((200 * 1024, False), (2 * 2**16, True)):
        protocol = Counting(loop)
        parser = http_parser.HttpRequestParser(protocol, loop, 2**16, max_line_size=8190, max_field_size=8190)
        protocol._parser = parser
        [(_, payload)], _, _ = parser.feed_data(post("/v1/ok", b"p" * size))
        assert payload.is_eof() is whole
        assert protocol.pauses == (0 if whole else 1)
        assert protocol._reading_paused is not whole


async def test_a_value_not_utf8_in_an_earlier_read_than_its_heads_end_is_refused(
    raw_backend: Backend,
) -> None:
    # the head's last read is ASCII alone, its value's bad byte came in the read before
    async with warm_gateway(raw_backend) as gateway:
        client = await warmed(gateway)  # ASCII so far
        connection = the_connection(gateway)
        first = b"POST /v1/ok HTTP/1.1\r\nHost: gw\r\nX-Text: caf\xe9"

        def fed() -> int:  # what the connection's parser was fed so far (kept for a replay)
            return len(getattr(connection._parser, "_history", None) or b"")

        before = fed()
        client.send(first)
        await gateway.wait_for(lambda: fed() == before + len(first))
        client.send(b" ok\r\nContent-Length: 2\r\n\r\n{}")
        head, body = await asyncio.wait_for(client.response(), 5)
        assert head.split(b" ")[1] == b"400" and json.loads(body)["error"]["code"] == "malformed_request"
        assert len(raw_backend.heads) == 1  # the warming request's alone
