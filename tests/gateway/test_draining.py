"""Drain, in-process: what SIGTERM sets in motion, minus the signal (see test_command for that).

Aspects: while draining ``/healthz`` is 503 and new ``/v1`` requests get 503 ``draining`` with
``Retry-After`` and ``Connection: close``; a stream that was open runs to its end; the drain completes
as soon as nothing is queued or in flight (notified, not after a fixed wait), also when the last
queued client leaves while the activation lease keeps demand unchanged; a drain that times out
answers still-queued requests with ``draining`` (503, or a final SSE event) and reports it; metrics
count the refusals.
"""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing

CHAT: dict[str, object] = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}


@pytest.fixture
def backend() -> fake_engine.FakeEngine:
    return fake_engine.FakeEngine(tokens=10, token_delay=0.05)


@pytest.mark.looptime  # "done when idle, not at the timeout" is measured on the loop clock, not the machine's
async def test_open_stream_finishes_while_new_requests_are_refused(
    engine: fake_engine.RunningEngine, http: aiohttp.ClientSession
) -> None:
    async with testing.GatewayStarter(backend_url=engine.url) as gateways:  # stopped on the fake clock
        await open_stream_finishes_while_new_requests_are_refused(gateways, http)


async def open_stream_finishes_while_new_requests_are_refused(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(wait_ready=True)
    drain = gateway.app[keys.DRAIN]
    async with http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as stream:
        first = await stream.content.readline()
        assert first.startswith(b"data: ")
        loop = asyncio.get_running_loop()
        started = loop.time()
        draining = asyncio.create_task(drain.wait_idle(within=5))
        await asyncio.sleep(0)
        async with http.get(gateway.url + "/healthz") as response:
            assert response.status == 503
        async with aiohttp.ClientSession() as other, other.get(gateway.url + "/v1/models") as response:
            assert response.status == 503
            assert response.headers["Retry-After"] == "1"
            assert response.headers["Connection"] == "close"
            assert (await response.json())["error"]["code"] == "draining"
        rest = await stream.content.read()
    assert rest.endswith(b"data: [DONE]\n\n")
    assert rest.count(b'"tok "') == 10  # nothing was cut (the first line held the role only)
    assert await draining is True
    assert loop.time() - started < 1.5  # done when idle, not at the timeout
    assert (
        gateway.app[keys.METRICS].registry.get_sample_value(
            "noctaya_gateway_rejections_total", {"reason": "draining"}
        )
        == 1
    )


async def test_drain_timeout_answers_queued_requests(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    engine.state.ready_override = False
    gateway = await gateways.start()
    plain = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json=CHAT))
    streamed = await http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True})
    await gateway.wait_for(lambda: gateway.admission.queued == 2)
    assert await gateway.app[keys.DRAIN].wait_idle(within=0.2) is False
    async with await plain as response:
        assert response.status == 503
        assert (await response.json())["error"]["code"] == "draining"
    async with streamed:
        assert streamed.status == 200
        text = await streamed.text()
    last = [line for line in text.splitlines() if line.startswith("data: ")][-1]
    assert json.loads(last.removeprefix("data: "))["error"]["code"] == "draining"
    await gateway.wait_idle()


@pytest.mark.looptime  # "woken when idle" is measured on the loop clock, not the machine's
async def test_drain_completes_when_the_last_queued_client_leaves_under_an_open_lease(
    engine: fake_engine.RunningEngine, http: aiohttp.ClientSession
) -> None:
    async with testing.GatewayStarter(backend_url=engine.url) as gateways:  # stopped on the fake clock
        await drain_completes_when_the_last_queued_client_leaves(engine, gateways, http)


async def drain_completes_when_the_last_queued_client_leaves(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    engine.state.ready_override = False
    gateway = await gateways.start(activationTimeout="1m")
    waiting = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json=CHAT))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    draining = asyncio.create_task(gateway.app[keys.DRAIN].wait_idle(within=5))
    await asyncio.sleep(0.05)
    assert not draining.done()
    loop = asyncio.get_running_loop()
    started = loop.time()
    waiting.cancel()  # queued 1 -> 0 with the lease open: demand stays 1, no demand notification
    await asyncio.gather(waiting, return_exceptions=True)
    assert await draining is True
    assert loop.time() - started < 0.01  # woken when idle, not at the drain timeout or lease expiry
    assert gateway.demand.demand() == 1 and gateway.demand.lease_open
