"""Request encodings and the gateway's timeouts toward a hung backend and a client that stops reading.

Aspects: a gzip body is forwarded inflated and without its ``Content-Encoding`` (whole or streamed,
warm or cold); a body that does not follow its gzip encoding is an OpenAI-shaped 400
``invalid_content_encoding`` on both paths, with ``Connection: close`` (the connection ends there); a
gzip bomb is cut at ``maxBodyBytes`` of inflated data (413); a backend that sends no response headers
within ``backendHeaderTimeout`` is a 504 ``backend_timeout`` and frees the in-flight slot; a client
that reads nothing of a long response is cut after ``clientWriteTimeout`` and its slot freed;
``/noctaya/queue`` names no backend address.
"""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from noctaya.gateway import keys, testing

ServeApp = Callable[[web.Application], Awaitable[str]]


def recording_backend(seen: list[dict[str, Any]], *, ready: list[bool] | None = None) -> web.Application:
    async def echo(request: web.Request) -> web.Response:
        body = await request.read()
        seen.append({"encoding": request.headers.get("Content-Encoding"), "body": body})
        return web.json_response({"len": len(body)})

    async def health(request: web.Request) -> web.Response:
        return web.Response(status=200 if ready is None or ready[0] else 503)

    app = web.Application(client_max_size=64 << 20)
    app.router.add_post("/v1/chat/completions", echo)
    app.router.add_get("/health", health)
    return app


async def test_gzip_bodies_are_forwarded_inflated_without_their_encoding(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    seen: list[dict[str, Any]] = []
    ready = [True]
    gateway = await gateways.start(
        backendUrl=await serve_app(recording_backend(seen, ready=ready)), wait_ready=True
    )
    document = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi " * 2000}]}).encode()
    packed = gzip.compress(document)
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}

    async def chunks() -> Any:
        for i in range(0, len(packed), 100):
            yield packed[i : i + 100]
            await asyncio.sleep(0)

    async with http.post(gateway.url + "/v1/chat/completions", data=packed, headers=headers) as response:
        assert response.status == 200 and (await response.json())["len"] == len(document)
    async with http.post(gateway.url + "/v1/chat/completions", data=chunks(), headers=headers) as response:
        assert response.status == 200 and (await response.json())["len"] == len(document)
    ready[0] = False  # cold: the body is read while queued, then forwarded
    await gateway.wait_for(lambda: not gateway.app[keys.READINESS].ready)
    task = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", data=packed, headers=headers))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    ready[0] = True
    async with await task as response:
        assert response.status == 200 and (await response.json())["len"] == len(document)
    assert [(s["encoding"], s["body"]) for s in seen] == [(None, document)] * 3


@pytest.mark.parametrize("cold", [False, True])
async def test_a_body_that_breaks_its_encoding_is_a_400(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession, cold: bool
) -> None:
    seen: list[dict[str, Any]] = []
    gateway = await gateways.start(
        backendUrl=await serve_app(recording_backend(seen, ready=[not cold])), wait_ready=not cold
    )
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    async with http.post(
        gateway.url + "/v1/chat/completions", data=b"not gzip at all", headers=headers
    ) as response:
        assert response.status == 400
        assert response.content_type == "application/json"
        error = (await response.json())["error"]
        assert error["code"] == "invalid_content_encoding" and error["type"] == "invalid_request_error"
        # the connection closes after it (its parser failed), and the answer says so: the client's
        # next request goes on a new connection, not on one that is going away
        assert response.headers["Connection"] == "close"
    async with http.get(gateway.url + "/metrics") as response:
        assert response.status == 200
    assert seen == []
    await gateway.wait_idle()


async def test_a_gzip_bomb_is_cut_at_max_body_bytes(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    seen: list[dict[str, Any]] = []
    gateway = await gateways.start(
        backendUrl=await serve_app(recording_backend(seen)), wait_ready=True, maxBodyBytes=1 << 20
    )
    bomb = gzip.compress(b"\0" * (64 << 20))  # 64 KiB that inflate to 64 MiB
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    async with http.post(gateway.url + "/v1/chat/completions", data=bomb, headers=headers) as response:
        assert response.status == 413
        assert (await response.json())["error"]["code"] == "request_too_large"
    assert all(len(s["body"]) <= 1 << 20 for s in seen)
    await gateway.wait_idle()


async def test_a_backend_that_never_answers_is_a_504_and_frees_its_slot(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    hung, release = asyncio.Event(), asyncio.Event()

    async def never(request: web.Request) -> web.Response:
        hung.set()
        await release.wait()  # far past the gateway's patience
        return web.Response(text="late")

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    backend = web.Application()
    backend.router.add_post("/v1/chat/completions", never)
    backend.router.add_get("/health", health)
    gateway = await gateways.start(
        backendUrl=await serve_app(backend), wait_ready=True, backendHeaderTimeout="300ms"
    )
    async with http.post(gateway.url + "/v1/chat/completions", json={"model": "m"}) as response:
        assert response.status == 504
        assert (await response.json())["error"]["code"] == "backend_timeout"
    assert hung.is_set() and gateway.admission.in_flight == 0
    release.set()


async def test_a_client_that_stops_reading_is_cut_and_frees_its_slot(
    serve_app: ServeApp, gateways: testing.GatewayStarter
) -> None:
    async def flood(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/octet-stream"})
        await response.prepare(request)
        chunk = b"x" * 65536
        while True:
            await response.write(chunk)

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    backend = web.Application()
    backend.router.add_get("/v1/files/big", flood)
    backend.router.add_get("/health", health)
    gateway = await gateways.start(
        backendUrl=await serve_app(backend), wait_ready=True, clientWriteTimeout="500ms"
    )
    host, port = gateway.url.removeprefix("http://").split(":")
    _reader, writer = await asyncio.open_connection(host, int(port), limit=1024)
    writer.write(b"GET /v1/files/big HTTP/1.1\r\nHost: x\r\n\r\n")
    await gateway.wait_for(lambda: gateway.admission.in_flight == 1)
    # the client reads nothing: its socket buffers fill, the gateway's writes pause, then it cuts
    await gateway.wait_for(lambda: gateway.admission.in_flight == 0, within=10.0)
    writer.close()


async def test_the_queue_endpoint_names_no_backend_address(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(backendUrl="http://10.255.255.1:1", connectTimeout="100ms")
    async with asyncio.timeout(5):
        while gateway.app[keys.READINESS].last_problem is None:  # noqa: ASYNC110 - the probe's own loop
            await asyncio.sleep(0.02)
    async with http.get(gateway.url + "/noctaya/queue") as response:
        text = await response.text()
    assert "10.255.255.1" not in text and json.loads(text)["backendError"]
