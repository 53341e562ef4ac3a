"""Fixtures the gateway tests share: a fake engine, gateways in front of it, and clients.

- ``backend``: the :class:`~noctaya.dev.fake_engine.FakeEngine` (5 tokens an answer); a test module
  defines its own ``backend`` fixture to answer differently;
- ``engine``: that engine served on loopback; ``gateways``: starts gateways in front of it (fast
  timings) and stops them after the test;
- ``http``: a plain aiohttp client session; ``sdk``: the real ``openai`` SDK pointed at a gateway;
- ``serve_app``: serves a purpose-built backend app on loopback and returns its base URL;
- :func:`behind_a_service` (imported by the modules that use it): a warm gateway in front of
  ``noctaya dev``'s Service with one fake engine behind it; :func:`pool_for`: a backend connection
  pool to a URL and a GET head for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import aiohttp
import openai
import pytest
from aiohttp import web

from noctaya.dev import fake_engine, service
from noctaya.gateway import backend as backend_pool
from noctaya.gateway import testing
from noctaya.serving import connections

# as ``noctaya gateway`` does at start: the connection bound is derived from the open-file limit, and
# a soft limit of 1024 (a common default) would lower it, with a warning, in every gateway started here
connections.raise_descriptor_limit()

SdkFactory = Callable[..., openai.AsyncOpenAI]
"""``sdk(gateway, api_key="unused")`` -> a client with no SDK retries."""
ServeApp = Callable[[web.Application], Awaitable[str]]


@contextlib.asynccontextmanager
async def behind_a_service(
    **overrides: object,
) -> AsyncIterator[tuple[service.Service, testing.RunningGateway, int]]:
    """A warm gateway in front of ``noctaya dev``'s Service with one fake engine behind it (the
    Service, the gateway, the engine's port); its warm probe is slow on purpose, so it still calls
    the backend ready once the endpoint is gone."""
    async with fake_engine.running(fake_engine.FakeEngine(tokens=2)) as engine:
        svc = service.Service()
        await svc.start()
        port = int(engine.url.rsplit(":", 1)[1])
        svc.add(name="e", port=port)
        try:
            # the warm probe is slow on purpose: the gateway calls the backend ready long after it left
            async with testing.GatewayStarter(backend_url=svc.url) as starter:
                gateway = await starter.start(wait_ready=True, warmProbeInterval="30s", **overrides)
                yield svc, gateway, port
        finally:
            await svc.stop()


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


def pool_for(url: str, *, limit: int) -> tuple[backend_pool.Pool, bytes]:
    """A pool to the backend at ``url`` (keep-alive 30 s) and the head of a ``GET /v1/models`` for it."""
    address = backend_pool.address_of(url)
    assert address is not None
    pool = backend_pool.Pool(address=address, limit=limit, connect_timeout=5.0, keepalive=30.0)
    head = backend_pool.request_head(
        method="GET", target="/v1/models", authority=address.authority, headers=(), body=None
    )
    assert head is not None
    return pool, head
