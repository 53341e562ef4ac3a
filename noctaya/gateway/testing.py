"""Running a gateway (or any aiohttp app) in-process on a loopback port, for tests and tools.

Like ``aiohttp.test_utils`` and ``kopf.testing``: real sockets, the same runner settings as
``noctaya gateway`` (``handler_cancellation=True``), and helpers to wait on the gateway's state.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from aiohttp import web

from noctaya.contract import documents
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import activation, admission, coldanswers, demand, keys, liveconfig
from noctaya.gateway import app as app_

T = TypeVar("T")


async def serve(
    app: web.Application, *, host: str = "127.0.0.1", **runner_kwargs: Any
) -> tuple[web.AppRunner, str]:
    """Start ``app`` on ``host``, port 0; returns the runner (call ``cleanup()``) and the base URL."""
    # a gateway app runs behind its own connection layer, as in ``noctaya gateway``
    runner = (
        app_.make_runner(app, access_log=None, handle_signals=False, **runner_kwargs)
        if keys.CONNECTIONS in app
        else web.AppRunner(app, access_log=None, handle_signals=False, **runner_kwargs)
    )
    await runner.setup()
    site = web.TCPSite(runner, host, 0)
    await site.start()
    port = next(int(address[1]) for address in runner.addresses if isinstance(address, tuple))
    return runner, f"http://{host}:{port}"


async def serve_gateway(app: web.Application) -> RunningGateway:
    runner, url = await serve(app, handler_cancellation=True, shutdown_timeout=0.5)
    return RunningGateway(app=app, url=url, runner=runner)


@dataclasses.dataclass
class RunningGateway:
    app: web.Application
    url: str
    runner: web.AppRunner

    @property
    def admission(self) -> admission.Admission:
        return self.app[keys.ADMISSION]

    @property
    def demand(self) -> demand.Demand:
        return self.app[keys.DEMAND]

    @property
    def lease_state(self) -> activation.LeaseState:
        return self.app[keys.ACTIVATION].state

    async def wait_for(self, predicate: Callable[[], bool], *, within: float = 5.0) -> None:
        """Wait until ``predicate()`` holds (state changed by other tasks), at most ``within`` s."""
        async with asyncio.timeout(within):
            while not predicate():  # noqa: ASYNC110  (no single event covers every predicate)
                await asyncio.sleep(0.005)

    async def wait_idle(self, *, within: float = 5.0) -> None:
        """Queue and in-flight back to zero: no slot leaked."""
        await self.wait_for(
            lambda: self.admission.queued == 0 and self.admission.in_flight == 0, within=within
        )

    async def stop(self) -> None:
        await self.runner.cleanup()


class BackgroundLoop:
    """An event loop in a thread of its own, for servers that blocking clients (plain sockets, a
    property-test driver) talk to; ``run`` waits for a coroutine on it, ``close`` stops it."""

    def __init__(self, *, name: str = "noctaya-background-loop") -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        future: concurrent.futures.Future[T] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


#: Millisecond-scale timings so tests of cold starts, heartbeats and timeouts run fast.
FAST_TIMINGS: dict[str, Any] = {
    "probeInterval": "10ms",
    "warmProbeInterval": "200ms",
    "probeTimeout": "500ms",
    "heartbeatInterval": "50ms",
    "activationTimeout": "3s",
    "retryAfter": "2s",
    "retryGrace": "200ms",
    "drainTimeout": "2s",
    "connectTimeout": "500ms",
    "bodyTimeout": "1s",
}


def own_read(head: bytes) -> bool:
    """``head`` (a raw request head) is the gateway's own read of the model list, not a client's."""
    return f"\r\nUser-Agent: {coldanswers.USER_AGENT}\r\n".encode() in head


class GatewayStarter:
    """Starts gateways in front of ``backend_url`` and stops them all on exit (an async context)."""

    def __init__(self, *, backend_url: str, defaults: dict[str, Any] | None = None) -> None:
        self.backend_url = backend_url
        self.defaults = FAST_TIMINGS if defaults is None else defaults
        self._started: list[RunningGateway] = []

    async def start(self, *, wait_ready: bool = False, **overrides: Any) -> RunningGateway:
        """A gateway with config = defaults + ``overrides`` (file keys); optionally wait until warm."""
        document = {"backendUrl": self.backend_url, "listen": "127.0.0.1:0", **self.defaults, **overrides}
        return await self._serve(
            app_.make_app(gateway_contract.build_config(document)), wait_ready=wait_ready
        )

    async def start_from(
        self, source: liveconfig.ConfigSource, *, wait_ready: bool = False
    ) -> RunningGateway:
        """A gateway read from ``source``'s file, watching it; optionally wait until warm."""
        settings = source.build(documents.read_document(source.path))
        return await self._serve(app_.make_app(settings, source=source), wait_ready=wait_ready)

    async def _serve(self, app: web.Application, *, wait_ready: bool) -> RunningGateway:
        gateway = await serve_gateway(app)
        self._started.append(gateway)
        if wait_ready:  # and its read of the backend's model list done: a test's backend sees no more
            models = app[keys.COLD_ANSWERS].models
            await gateway.wait_for(
                lambda: app[keys.READINESS].ready and (models.url is None or models.reads > 0)
            )
        return gateway

    async def __aenter__(self) -> GatewayStarter:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        for gateway in reversed(self._started):
            await gateway.stop()
        self._started.clear()
