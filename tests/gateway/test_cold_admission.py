"""Cold admission: what happens to requests that arrive while the backend is not ready.

Aspects: keepalive mode sends SSE headers at once and ``: keepalive`` comments every heartbeat, then
the real stream (checked raw and through the ``openai`` SDK); non-streaming requests wait and are
served; ``max_queue + 1`` gets 429 with ``Retry-After``; reject mode answers 503 + ``Retry-After`` at
once but still opens the activation lease; queued requests reach the backend in arrival order; a
client that leaves while queued frees its slot at once (streaming or not); the activation lease keeps
demand at 1 with nothing queued and closes after the retry grace; an activation timeout with 100
queued clients ends every one of them (504 or a final SSE error event) and a later request opens a
new lease; a request queued behind a full in-flight bound after Ready ends at its own activation
deadline; queue and in-flight always return to 0.
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable

import aiohttp
import openai
import pytest
from aiohttp import web
from openai.types.chat import ChatCompletionMessageParam

from noctaya.dev import fake_engine
from noctaya.gateway import activation, keys, testing

CHAT: dict[str, object] = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


SdkFactory = Callable[[testing.RunningGateway], openai.AsyncOpenAI]
ServeApp = Callable[[web.Application], Awaitable[str]]


def queued_is(gateway: testing.RunningGateway, count: int) -> bool:
    return gateway.admission.queued == count


@pytest.fixture
def cold(engine: fake_engine.RunningEngine) -> fake_engine.RunningEngine:
    engine.state.ready_override = False
    return engine


async def test_keepalive_stream_gets_headers_and_heartbeats_then_tokens(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start()
    async with http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
        assert response.status == 200  # headers at once, while the backend is still cold
        assert response.headers["Content-Type"].startswith("text/event-stream")
        heartbeats = 0
        while heartbeats < 3:
            line = await asyncio.wait_for(response.content.readline(), 1.0)
            heartbeats += line.startswith(b": keepalive")
        assert gateway.admission.queued == 1 and gateway.demand.demand() == 1
        cold.state.ready_override = True
        rest = (await asyncio.wait_for(response.content.read(), 10.0)).decode()
    events = [line for line in rest.splitlines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]"
    assert sum('"tok "' in e for e in events) == 5
    await gateway.wait_idle()
    metrics = gateway.app[keys.METRICS]
    assert metrics.registry.get_sample_value("noctaya_gateway_admitted_total", {"path": "cold"}) == 1
    assert (
        metrics.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "succeeded"})
        == 1
    )


async def test_cold_start_through_the_sdk_streaming_and_not(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, sdk: SdkFactory
) -> None:
    gateway = await gateways.start()
    client = sdk(gateway)

    async def streamed() -> str:
        stream = await client.chat.completions.create(model="fake-model", messages=MESSAGES, stream=True)
        return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])

    async def plain() -> str:
        result = await client.chat.completions.create(model="fake-model", messages=MESSAGES)
        return result.choices[0].message.content or ""

    tasks = [asyncio.create_task(streamed()), asyncio.create_task(plain())]
    await gateway.wait_for(lambda: gateway.admission.queued == 2)
    await asyncio.sleep(0.15)  # a few heartbeats go by
    assert not any(t.done() for t in tasks)
    cold.state.ready_override = True
    assert await asyncio.gather(*tasks) == ["tok " * 5, "tok tok tok tok tok"]
    await gateway.wait_idle()


async def test_queue_full_gives_429_with_retry_after(
    cold: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    sdk: SdkFactory,
) -> None:
    gateway = await gateways.start(maxQueue=3)
    waiting = [
        asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json=CHAT)) for _ in range(3)
    ]
    await gateway.wait_for(lambda: gateway.admission.queued == 3)
    async with http.post(gateway.url + "/v1/chat/completions", json=CHAT) as response:
        assert response.status == 429
        assert response.headers["Retry-After"] == "2"
        assert (await response.json())["error"]["code"] == "queue_full"
    with pytest.raises(openai.RateLimitError) as caught:
        await sdk(gateway).chat.completions.create(model="fake-model", messages=MESSAGES)
    assert caught.value.response.headers["retry-after"] == "2"
    assert gateway.admission.queued == 3  # the bound held
    cold.state.ready_override = True
    for response in await asyncio.gather(*waiting):
        assert response.status == 200
        response.release()
    await gateway.wait_idle()
    assert (
        gateway.app[keys.METRICS].registry.get_sample_value(
            "noctaya_gateway_rejections_total", {"reason": "queue_full"}
        )
        == 2
    )


async def test_reject_mode_answers_503_at_once_and_still_activates(
    cold: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    sdk: SdkFactory,
) -> None:
    gateway = await gateways.start(coldStartMode="reject")
    async with http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
        assert response.status == 503
        assert response.headers["Retry-After"] == "2"
        assert (await response.json())["error"]["code"] == "model_starting"
    with pytest.raises(openai.APIStatusError) as caught:
        await sdk(gateway).chat.completions.create(model="fake-model", messages=MESSAGES)
    assert caught.value.status_code == 503
    assert gateway.lease_state is activation.LeaseState.ACTIVATING
    assert gateway.admission.queued == 0 and gateway.demand.demand() == 1  # the lease alone
    cold.state.ready_override = True
    await gateway.wait_for(lambda: gateway.lease_state is activation.LeaseState.GRACE)
    assert gateway.demand.demand() == 1  # retry grace: the client's retry will find it warm
    result = await sdk(gateway).chat.completions.create(model="fake-model", messages=MESSAGES)
    assert result.choices[0].message.content
    await gateway.wait_for(lambda: gateway.lease_state is activation.LeaseState.CLOSED)
    assert gateway.demand.demand() == 0


async def test_queued_requests_are_forwarded_in_arrival_order(
    serve_app: ServeApp, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    ready = False
    order: list[int] = []

    async def health(request: web.Request) -> web.Response:
        return web.Response(status=200 if ready else 503)

    async def record(request: web.Request) -> web.Response:
        order.append((await request.json())["n"])
        await asyncio.sleep(0.01)
        return web.json_response({})

    backend = web.Application()
    backend.router.add_get("/health", health)
    backend.router.add_post("/v1/chat/completions", record)
    gateway = await gateways.start(backendUrl=await serve_app(backend), maxInFlight=1, wait_ready=False)
    tasks = []
    for n in range(8):
        tasks.append(asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json={"n": n})))
        await gateway.wait_for(functools.partial(queued_is, gateway, n + 1))
    ready = True
    for response in await asyncio.gather(*tasks):
        assert response.status == 200
        response.release()
    assert order == list(range(8))
    await gateway.wait_idle()


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.looptime  # "at once" is loop time: no timer (heartbeat, deadline) had to fire
async def test_client_leaving_while_queued_frees_its_slot_at_once(
    cold: fake_engine.RunningEngine, stream: bool
) -> None:
    async with testing.GatewayStarter(backend_url=cold.url) as gateways:  # stopped on the fake clock too
        gateway = await gateways.start(heartbeatInterval="10s")  # no heartbeat write would notice
        await client_leaves_while_queued(gateway, stream=stream)


async def client_leaves_while_queued(gateway: testing.RunningGateway, *, stream: bool) -> None:
    session = aiohttp.ClientSession()
    task = asyncio.create_task(
        session.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": stream})
    )
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    loop = asyncio.get_running_loop()
    left_at = loop.time()
    task.cancel()
    await session.close()
    await gateway.wait_for(lambda: gateway.admission.queued == 0, within=1.0)
    assert loop.time() - left_at < 0.5
    assert gateway.demand.demand() == 1  # the lease remains, independent of the client
    (outcome,) = await asyncio.gather(task, return_exceptions=True)
    if stream:  # the headers had arrived: the client had a response and dropped it
        assert isinstance(outcome, aiohttp.ClientResponse) and outcome.status == 200
    else:
        assert isinstance(outcome, asyncio.CancelledError)


async def test_lease_keeps_demand_then_closes_after_grace(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(coldStartMode="reject", retryGrace="100ms")
    seen: list[int] = []
    unsubscribe = gateway.demand.subscribe(seen.append)
    async with http.get(gateway.url + "/v1/models") as response:
        assert response.status == 503
    cold.state.ready_override = True
    await gateway.wait_for(lambda: gateway.lease_state is activation.LeaseState.CLOSED)
    unsubscribe()
    assert seen == [1, 0]  # opened by the cold request, dropped after Ready + grace


@pytest.mark.looptime  # the 400 ms deadline is loop time: queueing 100 clients takes none of it
async def test_activation_timeout_ends_100_queued_clients(
    cold: fake_engine.RunningEngine,
) -> None:
    async with testing.GatewayStarter(backend_url=cold.url) as gateways:  # stopped on the fake clock too
        await ends_100_queued_clients(cold, gateways)


async def ends_100_queued_clients(cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter) -> None:
    cold.state.failure = "never-ready"
    gateway = await gateways.start(maxQueue=100, activationTimeout="400ms")
    url = gateway.url + "/v1/chat/completions"
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(n: int) -> tuple[int, str]:
            async with session.post(url, json={**CHAT, "stream": n % 2 == 0}) as response:
                return response.status, await response.text()

        tasks = [asyncio.create_task(one(n)) for n in range(100)]
        await gateway.wait_for(lambda: gateway.admission.queued == 100)
        async with session.post(url, json=CHAT) as response:
            assert response.status == 429  # the bound holds at 100
        results = await asyncio.wait_for(asyncio.gather(*tasks), 5)
    for n, (status, text) in enumerate(results):
        if n % 2 == 0:  # streaming: headers were sent; the end is a final SSE error event
            assert status == 200
            last = [line for line in text.splitlines() if line.startswith("data: ")][-1]
            error = json.loads(last.removeprefix("data: "))["error"]
        else:
            assert status == 504
            error = json.loads(text)["error"]
        assert error["type"] == "activation_timeout" and error["code"] == "activation_timeout"
    await gateway.wait_idle()
    metrics = gateway.app[keys.METRICS]
    assert gateway.lease_state is activation.LeaseState.CLOSED and gateway.demand.demand() == 0
    assert (
        metrics.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "expired"})
        == 1
    )
    assert (
        metrics.registry.get_sample_value(
            "noctaya_gateway_rejections_total", {"reason": "activation_timeout"}
        )
        == 100
    )
    # a later cold request opens a new lease
    async with aiohttp.ClientSession() as session:
        task = asyncio.create_task(session.post(url, json=CHAT))
        await gateway.wait_for(lambda: gateway.lease_state is activation.LeaseState.ACTIVATING)
        assert (
            metrics.registry.get_sample_value("noctaya_gateway_activation_events_total", {"event": "started"})
            == 2
        )
        response = await task
        assert response.status == 504
        response.release()


async def test_activation_timeout_through_the_sdk(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, sdk: SdkFactory
) -> None:
    gateway = await gateways.start(activationTimeout="200ms")
    with pytest.raises(openai.APIStatusError) as caught:
        await sdk(gateway).chat.completions.create(model="fake-model", messages=MESSAGES)
    assert caught.value.status_code == 504
    assert caught.value.code == "activation_timeout"
    stream = await sdk(gateway).chat.completions.create(model="fake-model", messages=MESSAGES, stream=True)
    with pytest.raises(openai.APIError) as streamed:
        async for _ in stream:
            pass
    assert "activation timeout" in str(streamed.value)
    await gateway.wait_idle()


@pytest.mark.looptime  # the deadlines and the engine's token delays are loop time, not the machine's pace
async def test_a_request_queued_behind_a_full_in_flight_bound_ends_at_its_own_deadline(
    cold: fake_engine.RunningEngine,
) -> None:
    async with testing.GatewayStarter(backend_url=cold.url) as gateways:  # stopped on the fake clock too
        await queued_behind_full_in_flight(cold, gateways)


async def queued_behind_full_in_flight(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter
) -> None:
    """The lease closes once the backend is Ready; a request still queued behind ``maxInFlight``
    then ends ``activationTimeout`` after its own arrival (the admission's wait bound)."""
    cold.state.token_delay = 0.2  # the first request keeps the one in-flight slot for ~1 s
    gateway = await gateways.start(maxInFlight=1, activationTimeout="400ms", retryGrace="50ms")
    url = gateway.url + "/v1/chat/completions"
    async with aiohttp.ClientSession() as session:

        async def one(stream: bool) -> tuple[int, str]:
            async with session.post(url, json={**CHAT, "stream": stream}) as response:
                return response.status, await response.text()

        first = asyncio.create_task(one(False))
        await gateway.wait_for(lambda: queued_is(gateway, 1))
        second = asyncio.create_task(one(True))
        await gateway.wait_for(lambda: queued_is(gateway, 2))
        cold.state.ready_override = True
        status, text = await asyncio.wait_for(second, 2.0)
        assert status == 200  # streaming: the end is a final SSE error event
        last = [line for line in text.splitlines() if line.startswith("data: ")][-1]
        assert json.loads(last.removeprefix("data: "))["error"]["code"] == "activation_timeout"
        assert (await asyncio.wait_for(first, 3.0))[0] == 200
    await gateway.wait_idle()
    assert (
        gateway.app[keys.METRICS].registry.get_sample_value(
            "noctaya_gateway_activation_events_total", {"event": "expired"}
        )
        == 0
    )  # the lease did not expire
