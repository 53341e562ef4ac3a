"""The warm path: the gateway as a transparent OpenAI-compatible proxy, driven by the real SDK.

Aspects: chat and text completions with and without streaming; embeddings and models; any other ``/v1``
path is forwarded (the backend's 404 passes through); SSE chunks pass one by one as the backend sends
them; hop-by-hop headers are dropped and ``X-Forwarded-*`` set (every ``X-Forwarded-For`` line kept, the
peer appended); query strings and methods pass; healthz; unknown paths of the gateway's own
(``/noctaya/``) give an OpenAI-shaped 404; no slot leaks; a stream its client abandons is let go
(nothing of it is kept for the drain to cut); a backend connection that carried an event
stream is never used again (some engines close it silently after the stream), while others are pooled.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import openai
import pytest
from aiohttp import web
from multidict import CIMultiDict

from noctaya.dev import fake_engine
from noctaya.gateway import app as app_
from noctaya.gateway import testing

SdkFactory = Callable[[testing.RunningGateway], openai.AsyncOpenAI]
ServeApp = Callable[[web.Application], Awaitable[str]]


@pytest.fixture
async def gateway(gateways: testing.GatewayStarter) -> testing.RunningGateway:
    return await gateways.start(wait_ready=True)


async def test_chat_completion_non_streaming(
    engine: fake_engine.RunningEngine, gateway: testing.RunningGateway, sdk: SdkFactory
) -> None:
    client = sdk(gateway)
    result = await client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "hi"}]
    )
    assert result.choices[0].message.content == "tok tok tok tok tok"
    assert result.usage is not None and result.usage.completion_tokens == 5
    await gateway.wait_idle()


async def test_chat_completion_streaming(
    engine: fake_engine.RunningEngine, gateway: testing.RunningGateway, sdk: SdkFactory
) -> None:
    client = sdk(gateway)
    stream = await client.chat.completions.create(
        model="fake-model",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, usage = [], None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
        if chunk.usage is not None:
            usage = chunk.usage
    assert "".join(pieces) == "tok " * 5
    assert usage is not None and usage.completion_tokens == 5
    await gateway.wait_idle()


async def test_text_completion_both_ways(
    engine: fake_engine.RunningEngine, gateway: testing.RunningGateway, sdk: SdkFactory
) -> None:
    client = sdk(gateway)
    result = await client.completions.create(model="fake-model", prompt="say", max_tokens=3)
    assert result.choices[0].text == "tok tok tok"
    stream = await client.completions.create(model="fake-model", prompt="say", max_tokens=2, stream=True)
    assert "".join([c.choices[0].text async for c in stream]) == "tok tok "


async def test_embeddings_and_models(
    engine: fake_engine.RunningEngine, gateway: testing.RunningGateway, sdk: SdkFactory
) -> None:
    client = sdk(gateway)
    embeddings = await client.embeddings.create(model="fake-model", input=["a", "bb"])
    assert [len(e.embedding) for e in embeddings.data] == [8, 8]
    models = await client.models.list()
    assert [m.id for m in models.data] == ["fake-model"]


async def test_other_v1_paths_are_forwarded_with_query(
    engine: fake_engine.RunningEngine, gateway: testing.RunningGateway, http: aiohttp.ClientSession
) -> None:
    async with http.get(gateway.url + "/v1/no/such/thing?x=1") as response:
        assert response.status == 404  # the backend's answer, passed through
    async with http.get(gateway.url + "/v1/models?limit=1") as response:
        assert response.status == 200
        assert (await response.json())["data"][0]["id"] == "fake-model"


@pytest.mark.looptime  # the engine's token delay is loop time: a stalled reader cannot merge tokens
async def test_sse_chunks_are_relayed_as_they_come(
    engine: fake_engine.RunningEngine, http: aiohttp.ClientSession
) -> None:
    engine.state.token_delay = 0.1
    engine.state.tokens = 3
    loop = asyncio.get_running_loop()
    arrivals = []
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    async with testing.GatewayStarter(backend_url=engine.url) as gateways:  # stopped on the fake clock
        gateway = await gateways.start(wait_ready=True)
        async with http.post(gateway.url + "/v1/chat/completions", json=body) as response:
            assert response.headers["Content-Type"].startswith("text/event-stream")
            async for line in response.content:
                if line.startswith(b"data: {") and b'"tok ' in line:
                    arrivals.append(loop.time())
    assert len(arrivals) == 3
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert gaps == pytest.approx([0.1, 0.1], abs=1e-3)  # not batched: each token arrived on its own


async def test_hop_by_hop_headers_dropped_and_forwarded_headers_set(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    seen: dict[str, str] = {}

    async def echo(request: web.Request) -> web.Response:
        seen.update(request.headers)
        body = await request.read()
        return web.json_response(
            {"len": len(body), "method": request.method, "qs": request.query_string},
            headers={"Keep-Alive": "timeout=5", "X-Backend": "1"},
        )

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    backend = web.Application()
    backend.router.add_route("*", "/v1/echo", echo)
    backend.router.add_get("/health", health)
    gateway = await gateways.start(backendUrl=await serve_app(backend), wait_ready=True)
    headers = {
        "Connection": "keep-alive, X-Secret-Hop",
        "X-Secret-Hop": "drop-me",
        "TE": "trailers",
        "Proxy-Authorization": "Basic abc",
        "X-Custom": "keep-me",
        "X-Forwarded-For": "10.1.2.3",
        "X-Forwarded-Host": "evil.example",
        "X-Forwarded-Proto": "https",
    }
    async with http.put(gateway.url + "/v1/echo?a=b", data=b"x" * 1000, headers=headers) as response:
        assert response.status == 200
        assert await response.json() == {"len": 1000, "method": "PUT", "qs": "a=b"}
        assert response.headers["X-Backend"] == "1"
        assert "Keep-Alive" not in response.headers
    assert seen["X-Custom"] == "keep-me"
    for hop in ("X-Secret-Hop", "TE", "Proxy-Authorization"):
        assert hop not in seen
    assert seen["X-Forwarded-For"] == "10.1.2.3, 127.0.0.1"
    assert seen["X-Forwarded-Proto"] == "http"  # what the gateway saw, not what the client claimed
    assert seen["X-Forwarded-Host"] == gateway.url.removeprefix("http://")


async def test_every_x_forwarded_for_line_is_kept_and_the_peer_appended(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    seen: list[str] = []

    async def echo(request: web.Request) -> web.Response:
        seen.extend(request.headers.getall("X-Forwarded-For", ()))
        return web.Response(text="ok")

    backend = web.Application()
    backend.router.add_get("/v1/echo", echo)
    backend.router.add_get("/health", echo)
    gateway = await gateways.start(backendUrl=await serve_app(backend), wait_ready=True)
    seen.clear()
    headers = CIMultiDict([("X-Forwarded-For", "10.1.2.3"), ("X-Forwarded-For", "10.4.5.6, 10.7.8.9")])
    async with http.get(gateway.url + "/v1/echo", headers=headers) as response:
        assert response.status == 200
    assert seen == ["10.1.2.3, 10.4.5.6, 10.7.8.9, 127.0.0.1"]


@pytest.mark.looptime  # the client's pauses are loop time: the pieces cannot merge on a slow machine
async def test_streamed_request_body_is_forwarded(serve_app: ServeApp) -> None:
    """A body the client is still sending is streamed to the backend, not held back."""
    received: list[int] = []

    async def sink(request: web.Request) -> web.Response:
        total = 0
        async for chunk in request.content.iter_any():
            total += len(chunk)
            received.append(total)
        return web.json_response({"len": total})

    async def health(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    backend = web.Application()
    backend.router.add_post("/v1/upload", sink)
    backend.router.add_get("/health", health)
    backend_url = await serve_app(backend)

    async def body() -> AsyncIterator[bytes]:
        for _ in range(5):
            yield b"y" * 10_000
            await asyncio.sleep(0.02)

    async with testing.GatewayStarter(backend_url=backend_url) as gateways:  # stopped on the fake clock
        gateway = await gateways.start(wait_ready=True)
        async with (
            aiohttp.ClientSession() as session,
            session.post(gateway.url + "/v1/upload", data=body()) as response,
        ):
            assert response.status == 200
            assert await response.json() == {"len": 50_000}
    assert len(received) >= 5 and received[-1] == 50_000  # arrived in (at least) the 5 pieces sent


async def test_healthz_and_unknown_paths(
    gateway: testing.RunningGateway, http: aiohttp.ClientSession
) -> None:
    async with http.get(gateway.url + "/healthz") as response:
        assert response.status == 200
    async with http.get(gateway.url + "/noctaya/nope") as response:
        assert response.status == 404
        error = (await response.json())["error"]
        assert error["code"] == "not_found" and error["type"] == "invalid_request_error"


async def test_queue_endpoint_reports_state(
    gateway: testing.RunningGateway, http: aiohttp.ClientSession
) -> None:
    async with http.get(gateway.url + "/noctaya/queue") as response:
        state = json.loads(await response.text())
    assert state["queued"] == 0 and state["inFlight"] == 0 and state["backendReady"] is True
    assert state["lease"]["state"] == "closed" and state["demand"] == 0


async def test_an_event_streams_backend_connection_is_not_pooled(
    serve_app: ServeApp, http: aiohttp.ClientSession
) -> None:
    """The backend sees which connection each request came on: after a stream, whether the request
    said ``stream`` or not, whether the stream was over before its headers were read or not, the next
    request comes on another one; plain answers share one."""
    seen: list[tuple[str, int]] = []
    first_read = asyncio.Event()  # the client has the first event: the stream is seen as one

    def connection(request: web.Request) -> int:
        assert request.transport is not None
        peer: tuple[str, int] = request.transport.get_extra_info("peername")
        return peer[1]  # the gateway's port: one per connection

    async def health(request: web.Request) -> web.Response:
        return web.Response()

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        seen.append((body["kind"], connection(request)))
        if body["kind"] == "plain":
            return web.json_response({"ok": True})
        if body["kind"].startswith("whole"):  # the stream in one write with its headers
            return web.Response(body=b"data: {}\n\ndata: [DONE]\n\n", content_type="text/event-stream")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"data: {}\n\n")
        await first_read.wait()
        first_read.clear()
        await response.write(b"data: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_post("/v1/chat/completions", chat)
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(wait_ready=True)
        url = gateway.url + "/v1/chat/completions"
        kinds: list[tuple[str, dict[str, object]]] = [
            ("plain", {}),
            ("plain", {}),
            ("asked", {"stream": True}),  # the body says stream
            ("plain", {}),
            ("unasked", {}),  # an event stream the body did not announce: its connection is dropped
            ("plain", {}),
            # a stream that is over when its headers are read: gone before anything else sees it
            ("whole-unasked", {}),
            ("plain", {}),
            ("whole-asked", {"stream": True}),
            ("plain", {}),
            # a body too long to be read before it is sent, asking for a stream that comes whole
            ("whole-long", {"stream": True, "padding": "x" * (512 * 1024)}),
            ("plain", {}),
        ]
        for kind, extra in kinds:
            async with http.post(url, json={"kind": kind, **extra}) as response:
                assert response.status == 200
                if kind.startswith("whole"):
                    assert await response.read() == b"data: {}\n\ndata: [DONE]\n\n"
                elif kind != "plain":
                    assert await response.content.readuntil(b"\n\n") == b"data: {}\n\n"
                    first_read.set()
                await response.read()
    numbers = [number for _, number in seen]
    assert numbers[0] == numbers[1], seen  # plain answers: one pooled connection
    for index, (kind, number) in enumerate(seen):
        if kind != "plain":  # no request comes after a stream on that stream's connection
            assert number not in numbers[index + 1 :], seen


@pytest.mark.parametrize("backend", [fake_engine.FakeEngine(tokens=200, token_delay=0.01)])
async def test_abandoned_streams_leave_nothing_registered(
    gateway: testing.RunningGateway, http: aiohttp.ClientSession
) -> None:
    """Each client reads the first event and leaves (its handler is cancelled mid-relay): once they are
    gone no stream is registered as relayed, so none is kept alive until a drain would cut it."""
    upstream = gateway.app[app_.UPSTREAM]
    for _ in range(20):
        response = await http.post(
            gateway.url + "/v1/chat/completions",
            json={"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "stream": True},
        )
        assert (await response.content.readline()).startswith(b"data: ")
        assert upstream.relaying == 1
        response.close()
        await gateway.wait_for(lambda: upstream.relaying == 0)
    await gateway.wait_idle()
    assert await upstream.cut_streams(within=0) == 0


@pytest.mark.parametrize("backend", [fake_engine.FakeEngine(tokens=200, token_delay=0.01)])
async def test_an_abandoned_held_stream_leaves_nothing_registered(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    """The same for a stream that was held through a cold start (its SSE headers went out while it
    waited): its client leaves after the first relayed event."""
    engine.state.ready_override = False
    gateway = await gateways.start()
    upstream = gateway.app[app_.UPSTREAM]
    response = await http.post(
        gateway.url + "/v1/chat/completions",
        json={"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "stream": True},
    )
    assert await response.content.readline() == b": keepalive\n"  # held: the headers are out
    engine.state.ready_override = True
    while not (await asyncio.wait_for(response.content.readline(), 10.0)).startswith(b"data: "):
        pass
    assert upstream.relaying == 1
    response.close()
    await gateway.wait_for(lambda: upstream.relaying == 0)
    await gateway.wait_idle()
    assert await upstream.cut_streams(within=0) == 0
