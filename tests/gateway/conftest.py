"""Fixtures the gateway tests share: a fake engine, gateways in front of it, and clients.

- ``backend``: the :class:`~noctaya.dev.fake_engine.FakeEngine` (5 tokens an answer); a test module
  defines its own ``backend`` fixture to answer differently;
- ``engine``: that engine served on loopback; ``gateways``: starts gateways in front of it (fast
  timings) and stops them after the test;
- ``http``: a plain aiohttp client session; ``sdk``: the real ``openai`` SDK pointed at a gateway;
- ``serve_app``: serves a purpose-built backend app on loopback and returns its base URL.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import openai
import pytest
from aiohttp import web

from noctaya.dev import fake_engine
from noctaya.gateway import testing

SdkFactory = Callable[..., openai.AsyncOpenAI]
"""``sdk(gateway, api_key="unused")`` -> a client with no SDK retries."""
ServeApp = Callable[[web.Application], Awaitable[str]]


@pytest.fixture
def backend() -> fake_engine.FakeEngine:
    return fake_engine.FakeEngine(tokens=5)


@pytest.fixture
async def engine(backend: fake_engine.FakeEngine) -> AsyncIterator[fake_engine.RunningEngine]:
    async with fake_engine.running(backend) as running:
        yield running


@pytest.fixture
async def gateways(engine: fake_engine.RunningEngine) -> AsyncIterator[testing.GatewayStarter]:
    async with testing.GatewayStarter(backend_url=engine.url) as starter:
        yield starter


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


@pytest.fixture
async def sdk() -> AsyncIterator[SdkFactory]:
    """The real ``openai`` SDK pointed at a gateway (no SDK retries); closed after the test."""
    clients: list[openai.AsyncOpenAI] = []

    def make(target: testing.RunningGateway, *, api_key: str = "unused") -> openai.AsyncOpenAI:
        client = openai.AsyncOpenAI(base_url=target.url + "/v1", api_key=api_key, max_retries=0, timeout=10.0)
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture
async def serve_app() -> AsyncIterator[ServeApp]:
    """Serve a purpose-built backend app on loopback; returns its base URL."""
    runners: list[web.AppRunner] = []

    async def serve(app: web.Application) -> str:
        runner, url = await testing.serve(app, shutdown_timeout=0.2)
        runners.append(runner)
        return url

    yield serve
    for runner in reversed(runners):
        await runner.cleanup()
