"""Bad input and faults: every one ends in a clear answer, a bounded wait, and no leaked slot.

Aspects: malformed JSON where ``stream`` must be read → 400 (one sent without a JSON type is forwarded
as it is); a path with a ``.`` or ``..`` segment (even percent-encoded, which would leave ``/v1/``) →
400; an absolute-form request target is forwarded as its path; bodies over the limit → 413, OpenAI-
shaped (declared, chunked as it streams or already whole, cold and warm); bodies sent slowly or never
finished → 408 within ``bodyTimeout``; header floods and huge header lines → 4xx and the server keeps
serving; a client disconnecting during its upload, while waiting for the backend and in the middle of a
stream (the backend sees it go too); a backend refusing connections (the request waits for it to come
back, then is served once); a backend resetting mid-stream (final SSE error event, or a cut body); 5xx
passed through (and turned into an SSE error event when SSE headers were already sent); invalid SSE
relayed untouched; a backend flapping between ready and not; no traceback ever reaches a client; queue
and in-flight return to 0.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from urllib.parse import urlsplit

import aiohttp
import openai
import pytest
from aiohttp import web

from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing

ServeApp = Callable[[web.Application], Awaitable[str]]
CHAT: dict[str, object] = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}


async def raw_exchange(url: str, request: bytes, *, hold: float = 0.0, within: float = 5.0) -> bytes:
    """Send raw bytes, optionally keep the socket open ``hold`` seconds, return what came back."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    try:
        writer.write(request)
        await writer.drain()
        if hold:
            await asyncio.sleep(hold)
        async with asyncio.timeout(within):
            return await reader.read(65536)
    finally:
        writer.close()


def status_of(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


async def test_malformed_json_when_stream_must_be_read_is_400(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    engine.state.ready_override = False
    gateway = await gateways.start()
    for body in (b"{not json", b'{"stream": tru', b"\xff\xfe"):
        async with http.post(
            gateway.url + "/v1/chat/completions", data=body, headers={"Content-Type": "application/json"}
        ) as response:
            assert response.status == 400
            assert (await response.json())["error"]["code"] == "invalid_json"
    await gateway.wait_idle()


async def test_an_undeclared_body_that_is_not_json_is_forwarded_from_the_cold_path(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    ready = False

    async def health(request: web.Request) -> web.Response:
        return web.Response(status=200 if ready else 503)

    async def upload(request: web.Request) -> web.Response:
        return web.json_response({"received": (await request.read()).decode()})

    backend = web.Application()
    backend.router.add_get("/health", health)
    backend.router.add_post("/v1/upload", upload)
    gateway = await gateways.start(backendUrl=await serve_app(backend))
    waiting = asyncio.create_task(
        http.post(gateway.url + "/v1/upload", data=b"not json", headers={"Content-Type": "text/plain"})
    )
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    ready = True
    async with await waiting as response:
        assert response.status == 200  # no content type of its own: not judged as JSON by the gateway
        assert await response.json() == {"received": "not json"}
    await gateway.wait_idle()


@pytest.mark.parametrize("warm", [True, False])
async def test_oversized_bodies_are_413(
    engine: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    warm: bool,
) -> None:
    engine.state.ready_override = warm
    gateway = await gateways.start(wait_ready=warm, maxBodyBytes=1000)
    async with http.post(gateway.url + "/v1/chat/completions", data=b"x" * 2000) as response:
        assert response.status == 413  # declared length
        assert (await response.json())["error"]["code"] == "request_too_large"

    async def chunked() -> AsyncIterator[bytes]:
        for _ in range(4):
            yield b"y" * 400
            await asyncio.sleep(0.01)

    async with http.post(gateway.url + "/v1/chat/completions", data=chunked()) as response:
        assert response.status == 413  # no length given: counted as it streams
    whole = b"z" * 2000  # no length given, but all of it arrives with the headers
    answer = await raw_exchange(
        gateway.url,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"%x\r\n" % len(whole)
        + whole
        + b"\r\n0\r\n\r\n",
    )
    assert status_of(answer) == 413
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == "request_too_large"
    await gateway.wait_idle()


@pytest.mark.parametrize("warm", [True, False])
@pytest.mark.looptime  # the body timeout is loop time: bounded at 300 ms exactly, whatever the load
async def test_slow_or_unfinished_body_is_bounded(engine: fake_engine.RunningEngine, warm: bool) -> None:
    async with testing.GatewayStarter(backend_url=engine.url) as gateways:  # stopped on the fake clock
        await slow_or_unfinished_body_is_bounded(engine, gateways, warm=warm)


async def slow_or_unfinished_body_is_bounded(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, *, warm: bool
) -> None:
    engine.state.ready_override = warm
    gateway = await gateways.start(wait_ready=warm, bodyTimeout="300ms")
    request = (
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b'Content-Length: 100\r\n\r\n{"stream": true'
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    answer = await raw_exchange(gateway.url, request, within=3.0)
    assert status_of(answer) == 408
    assert b"request_timeout" in answer
    assert loop.time() - started == pytest.approx(0.3, abs=0.02)
    await gateway.wait_idle()


async def test_paths_leaving_v1_through_dot_segments_are_400(gateways: testing.GatewayStarter) -> None:
    gateway = await gateways.start(wait_ready=True)
    for target in (
        b"/v1/../metrics",
        b"/v1/%2e%2e/metrics",
        b"/v1/models/..%2f..%2fmetrics",
        b"/v1/./models",
        b"/v1/models/.",
    ):
        answer = await raw_exchange(gateway.url, b"GET " + target + b" HTTP/1.1\r\nHost: x\r\n\r\n")
        assert status_of(answer) == 400, target
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == "invalid_path"
    answer = await raw_exchange(gateway.url, b"GET /v1/models/qwen2.5..x HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(answer) == 404  # dots inside a segment are a name: forwarded (the backend has no route)
    await gateway.wait_idle()


async def test_absolute_form_target_reaches_the_backend_path(gateways: testing.GatewayStarter) -> None:
    gateway = await gateways.start(wait_ready=True)
    answer = await raw_exchange(
        gateway.url, b"GET http://elsewhere.example/v1/models HTTP/1.1\r\nHost: elsewhere.example\r\n\r\n"
    )
    assert status_of(answer) == 200
    assert json.loads(answer.partition(b"\r\n\r\n")[2])["data"][0]["id"] == "fake-model"
    assert gateway.app[keys.READINESS].ready
    await gateway.wait_idle()


async def test_header_floods_are_refused_and_service_continues(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(wait_ready=True)
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(1000))
    answer = await raw_exchange(gateway.url, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
    assert 400 <= status_of(answer) < 500
    huge = b"X-Big: " + b"a" * 100_000 + b"\r\n"
    answer = await raw_exchange(gateway.url, b"GET /v1/models HTTP/1.1\r\nHost: x\r\n" + huge + b"\r\n")
    assert 400 <= status_of(answer) < 500
    assert b"Traceback" not in answer
    async with http.get(gateway.url + "/v1/models") as response:
        assert response.status == 200


async def test_client_leaving_during_upload_frees_the_slot(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter
) -> None:
    engine.state.ready_override = False
    gateway = await gateways.start(bodyTimeout="10s")
    parts = urlsplit(gateway.url)
    _, writer = await asyncio.open_connection(parts.hostname, parts.port)
    writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
    await writer.drain()
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    writer.close()
    await gateway.wait_idle(within=1.0)


@pytest.mark.parametrize("stream", [True, False])
async def test_client_leaving_while_backend_works_frees_in_flight_and_reaches_backend(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, stream: bool
) -> None:
    engine.state.token_delay = 0.2
    gateway = await gateways.start(wait_ready=True)
    session = aiohttp.ClientSession()
    response = None
    try:
        if stream:
            response = await session.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True})
            await response.content.readline()  # the first event has arrived: mid-stream now
        else:
            task = asyncio.create_task(session.post(gateway.url + "/v1/chat/completions", json=CHAT))
            await gateway.wait_for(lambda: engine.state.active == 1)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert gateway.admission.in_flight == 1
    finally:
        if response is not None:
            response.close()
        await session.close()
    await gateway.wait_idle(within=10.0)
    async with asyncio.timeout(10.0):
        while engine.state.active:  # noqa: ASYNC110  (the backend saw the disconnect too)
            await asyncio.sleep(0.01)


async def test_backend_refusing_then_returning_serves_the_request_once(
    http: aiohttp.ClientSession, reserve_port: Callable[[], int]
) -> None:
    first, second = fake_engine.FakeEngine(tokens=2), fake_engine.FakeEngine(tokens=3)
    # the port is held between the two engines (refused meanwhile), so nothing else can take it
    port = reserve_port()
    async with fake_engine.running(first, port=port) as running:
        url = running.url
        starter = testing.GatewayStarter(
            backend_url=url, defaults={**testing.FAST_TIMINGS, "warmProbeInterval": "10s"}
        )
        gateway = await starter.start(wait_ready=True)
    async with starter:  # the backend is gone now: connections are refused
        task = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json=CHAT))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)  # connect failed: cold, queued again
        assert not gateway.app[keys.READINESS].ready
        async with fake_engine.running(second, port=port):
            response = await asyncio.wait_for(task, 5)
            assert response.status == 200
            assert (await response.json())["choices"][0]["message"]["content"] == "tok tok tok"
        assert (first.served, second.served) == (0, 1)  # forwarded exactly once
        await gateway.wait_idle()


async def test_backend_reset_mid_stream(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    engine.state.failure = "crash-mid-stream"
    engine.state.crash_after = 2
    gateway = await gateways.start(wait_ready=True)
    async with http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
        assert response.status == 200
        text = await response.text()
    events = [line.removeprefix("data: ") for line in text.splitlines() if line.startswith("data: ")]
    assert sum('"tok "' in e for e in events) == 2
    assert json.loads(events[-1])["error"]["code"] == "backend_disconnected"
    async with http.post(gateway.url + "/v1/chat/completions", json=CHAT) as response:
        assert response.status == 502  # cut before any header: nothing was relayed, nothing replayed
        assert (await response.json())["error"]["type"] == "backend_error"
    await gateway.wait_idle()
    client = openai.AsyncOpenAI(base_url=gateway.url + "/v1", api_key="x", max_retries=0)
    async with client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], stream=True
        )
        with pytest.raises(openai.APIError):
            async for _ in stream:
                pass


async def test_backend_5xx_passes_through_and_becomes_an_sse_error_when_headers_were_sent(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    engine.state.failure = "error-500"
    gateway = await gateways.start(wait_ready=True)
    async with http.post(gateway.url + "/v1/chat/completions", json=CHAT) as response:
        assert response.status == 500
        assert (await response.json())["error"]["code"] == "internal_error"
    engine.state.ready_override = False
    await gateway.wait_for(lambda: not gateway.app[keys.READINESS].ready, within=2)
    task = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    engine.state.ready_override = True
    async with await task as response:
        assert response.status == 200  # sent while queued
        text = await response.text()
    last = [line for line in text.splitlines() if line.startswith("data: ")][-1]
    assert json.loads(last.removeprefix("data: "))["error"]["code"] == "internal_error"
    await gateway.wait_idle()


async def test_invalid_sse_is_relayed_untouched(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    engine.state.failure = "invalid-sse"
    gateway = await gateways.start(wait_ready=True)
    async with http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
        assert response.status == 200
        text = await response.text()
    assert text.count("data: {not json") == 5 and text.endswith("data: [DONE]\n\n")
    await gateway.wait_idle()


async def test_backend_flapping_loses_no_request_and_leaks_no_slot(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter
) -> None:
    gateway = await gateways.start(wait_ready=True, warmProbeInterval="10ms")
    stop = asyncio.Event()

    async def flap() -> None:
        while not stop.is_set():
            engine.state.ready_override = not engine.state.ready_override
            await asyncio.sleep(0.015)

    flapper = asyncio.create_task(flap())
    statuses: list[int] = []
    try:
        async with aiohttp.ClientSession() as session:

            async def one(n: int) -> None:
                await asyncio.sleep(n * 0.005)
                async with session.post(
                    gateway.url + "/v1/chat/completions", json={**CHAT, "stream": n % 2 == 0}
                ) as response:
                    text = await response.text()
                    assert "Traceback" not in text
                    statuses.append(response.status)
                    if response.status == 200 and n % 2 == 0:
                        assert text.endswith("data: [DONE]\n\n")

            await asyncio.wait_for(asyncio.gather(*(one(n) for n in range(40))), 10)
    finally:
        stop.set()
        await flapper
    assert statuses == [200] * 40
    await gateway.wait_idle()
