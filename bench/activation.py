"""Activation signal benchmark: request arrival -> ``StreamIsActive`` ``true`` received, p50/p99.

    .venv/bin/python -m bench.activation [--samples N] [--in-process-only]

Everything runs on 127.0.0.1 with the backend down, so every request is a cold admission. Each
sample: the client (this process) holds a ``StreamIsActive`` stream as KEDA does, pauses a random
time (so arrivals fall at random phases of the baseline's ticker), notes the time, sends one chat
request to a gateway and waits for ``true`` on the stream; the gateway's activation lease then
expires (``activationTimeout`` 500 ms, longer than a tick), the request ends with 504, the stream
reads ``false`` and the next sample starts from demand 0.

Modes, measured in the same run:

1. in-process gateway, event-driven scaler (the co-located design, without process boundaries);
2. the same gateway and the same requests, read through a scaler that re-evaluates demand on a
   200 ms ticker (the design of the best-known peer, KEDA's HTTP add-on) — the baseline;
3. ``noctaya gateway`` as its own process with the co-located scaler (what a single-replica
   LLMService runs);
4. three ``noctaya gateway`` processes reporting to one ``noctaya scaler`` process (aggregate mode);
   requests rotate over the three gateways.

The machine is shared and noisy; read the ratios to the ticker baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import pathlib
import random
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import grpc
from aiohttp import web

from bench import processes as bench_processes
from bench import reporting
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import app as gateway_app
from noctaya.gateway import keys
from noctaya.scaler import hosting
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

REF = pb.ScaledObjectRef(name="bench", namespace="bench")
SERVICE = {"name": "bench", "namespace": "bench"}
TICK = 0.2
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def gateway_document(*, port: int, **extra: Any) -> dict[str, Any]:
    return {
        "listen": f"127.0.0.1:{port}",
        "backendUrl": f"http://127.0.0.1:{bench_processes.reserved_port()}",  # nothing listens: cold
        "service": SERVICE,
        "activationTimeout": "500ms",
        "retryGrace": "0s",
        **extra,
    }


# ------------------------------------------------------------------ the 200 ms ticker baseline
class TickerServicer:
    """StreamIsActive re-evaluated on a fixed ticker, sending the current state on every tick."""

    def __init__(self, *, demand: Callable[[], int]) -> None:
        self._demand = demand

    async def IsActive(self, request: Any, context: Any) -> Any:
        return pb.IsActiveResponse(result=self._demand() > 0)

    async def StreamIsActive(self, request: Any, context: Any) -> None:
        while True:
            await context.write(pb.IsActiveResponse(result=self._demand() > 0))
            await asyncio.sleep(TICK)

    async def GetMetricSpec(self, request: Any, context: Any) -> Any:
        return pb.GetMetricSpecResponse(
            metricSpecs=[pb.MetricSpec(metricName="queueDepth", targetSizeFloat=10)]
        )

    async def GetMetrics(self, request: Any, context: Any) -> Any:
        value = float(self._demand())
        return pb.GetMetricsResponse(
            metricValues=[pb.MetricValue(metricName="queueDepth", metricValueFloat=value)]
        )


class Ticker:
    """The baseline's gRPC server as a cleanup context of the gateway app; it binds port 0 as the
    app starts and reads it back (``port``)."""

    def __init__(self) -> None:
        self.port = 0

    async def context(self, app: web.Application) -> AsyncIterator[None]:
        server = grpc.aio.server()
        pb_grpc.add_ExternalScalerServicer_to_server(TickerServicer(demand=app[keys.DEMAND].demand), server)
        self.port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        yield
        await server.stop(0.1)


# ------------------------------------------------------------------ measuring
class Watcher:
    """One KEDA-like stream; records when each `true` arrives after an inactive state."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.active = False
        self.rose = asyncio.Event()
        self.fell = asyncio.Event()
        self.rose_at = 0.0
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Watcher:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(10):
            await self.fell.wait()  # the current state (idle) arrives when the stream opens
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as channel:
                    async for message in pb_grpc.ExternalScalerStub(channel).StreamIsActive(REF):
                        now = time.perf_counter()
                        if message.result and not self.active:
                            self.rose_at = now
                            self.rose.set()
                        elif not message.result:
                            self.fell.set()
                        self.active = bool(message.result)
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.1)


async def sample(session: aiohttp.ClientSession, url: str, watchers: list[Watcher]) -> list[float]:
    for watcher in watchers:
        async with asyncio.timeout(10):
            while watcher.active:
                watcher.fell.clear()
                await watcher.fell.wait()
        watcher.rose.clear()
    await asyncio.sleep(random.uniform(0, TICK))  # arrive at a random phase of the baseline's ticker
    start = time.perf_counter()
    request = asyncio.create_task(session.post(url, json=BODY))
    try:
        async with asyncio.timeout(10):
            for watcher in watchers:
                await watcher.rose.wait()
    finally:
        response = await request
        response.release()
    return [(w.rose_at - start) * 1000 for w in watchers]


async def measure(urls: list[str], watchers: list[Watcher], samples: int) -> list[list[float]]:
    results: list[list[float]] = [[] for _ in watchers]
    async with aiohttp.ClientSession() as session:
        for i in range(samples):
            for column, value in zip(
                results, await sample(session, urls[i % len(urls)], watchers), strict=True
            ):
                column.append(value)
            await asyncio.sleep(0.05)
    return results


# ------------------------------------------------------------------ modes
async def in_process(samples: int) -> tuple[list[float], list[float]]:
    event_port = bench_processes.reserved_port()  # the co-located scaler binds it (SO_REUSEADDR)
    config = gateway_contract.build_config(
        gateway_document(port=0, scaler={"listen": f"127.0.0.1:{event_port}"})
    )
    ticker = Ticker()
    app = gateway_app.make_app(
        config, sidecars=hosting.gateway_sidecars(config), extra_contexts=[ticker.context]
    )
    runner = web.AppRunner(app, handle_signals=False, access_log=None, handler_cancellation=True)
    await runner.setup()
    listener = socket.create_server(("127.0.0.1", 0))  # bound here, handed to the server
    port = int(listener.getsockname()[1])
    await web.SockSite(runner, listener).start()
    try:
        async with Watcher(event_port) as event, Watcher(ticker.port) as tick:
            url = f"http://127.0.0.1:{port}/v1/chat/completions"
            event_ms, tick_ms = await measure([url], [event, tick], samples)
    finally:
        await runner.cleanup()
    return event_ms, tick_ms


@contextlib.contextmanager
def processes(commands: list[list[str]], logs: pathlib.Path) -> Any:
    procs = []
    try:
        for i, argv in enumerate(commands):
            log = (logs / f"proc{i}.log").open("wb")
            procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT))
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


async def wait_http(url: str) -> None:
    async with aiohttp.ClientSession() as session, asyncio.timeout(30):
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(url) as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.05)


def noctaya(*args: str) -> list[str]:
    return [sys.executable, "-m", "noctaya", *args, "--log-level", "WARNING"]


async def colocated_process(samples: int, tmp: pathlib.Path) -> list[float]:
    port, grpc_port = bench_processes.reserved_port(), bench_processes.reserved_port()
    path = tmp / "gateway.json"
    path.write_text(json.dumps(gateway_document(port=port, scaler={"listen": f"127.0.0.1:{grpc_port}"})))
    with processes([noctaya("gateway", "--config", str(path))], tmp):
        await wait_http(f"http://127.0.0.1:{port}/healthz")
        async with Watcher(grpc_port) as watcher:
            (ms,) = await measure([f"http://127.0.0.1:{port}/v1/chat/completions"], [watcher], samples)
    return ms


async def aggregated_processes(samples: int, tmp: pathlib.Path, gateways: int = 3) -> list[float]:
    token = tmp / "token"
    token.write_text(secrets.token_urlsafe(32))
    grpc_port, report_port = bench_processes.reserved_port(), bench_processes.reserved_port()
    scaler = tmp / "scaler.json"
    scaler.write_text(
        json.dumps(
            {
                "service": SERVICE,
                "grpcListen": f"127.0.0.1:{grpc_port}",
                "reportListen": f"127.0.0.1:{report_port}",
                "tokenFile": str(token),
            }
        )
    )
    commands = [noctaya("scaler", "--config", str(scaler))]
    ports = [bench_processes.reserved_port() for _ in range(gateways)]
    for i, port in enumerate(ports):
        path = tmp / f"gateway{i}.json"
        report = {"url": f"http://127.0.0.1:{report_port}", "tokenFile": str(token), "interval": "2s"}
        path.write_text(json.dumps(gateway_document(port=port, report=report)))
        commands.append(noctaya("gateway", "--config", str(path)))
    with processes(commands, tmp):
        for port in [report_port, *ports]:
            await wait_http(f"http://127.0.0.1:{port}/healthz")
        async with Watcher(grpc_port) as watcher:
            urls = [f"http://127.0.0.1:{port}/v1/chat/completions" for port in ports]
            (ms,) = await measure(urls, [watcher], samples)
    return ms


async def main_async(samples: int, *, process_modes: bool) -> None:
    event_ms, tick_ms = await in_process(samples)
    measured = [
        ("200 ms ticker (baseline, in-process)", tick_ms),
        ("event-driven, in-process gateway", event_ms),
    ]
    if process_modes:
        with tempfile.TemporaryDirectory(prefix="noctaya-bench-") as tmp:
            measured.append(
                ("co-located, gateway process", await colocated_process(samples, pathlib.Path(tmp)))
            )
            measured.append(
                (
                    "aggregate, 3 gateway processes + scaler",
                    await aggregated_processes(samples, pathlib.Path(tmp)),
                )
            )
    base50, base99 = reporting.percentile(tick_ms, 50), reporting.percentile(tick_ms, 99)
    rows = []
    for name, values in measured:
        p50, p90, p99 = (reporting.percentile(values, q) for q in (50, 90, 99))
        rows.append(
            [name, len(values), p50, p90, p99, reporting.ratio(p50, base50), reporting.ratio(p99, base99)]
        )
    print(
        reporting.table(
            "request arrival -> StreamIsActive true received (ms)",
            ["mode", "samples", "p50 ms", "p90 ms", "p99 ms", "p50 vs ticker", "p99 vs ticker"],
            rows,
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.activation", description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=100, help="cold requests per mode (100)")
    parser.add_argument("--in-process-only", action="store_true", help="skip the process modes (3, 4)")
    args = parser.parse_args()
    import uvloop

    uvloop.run(main_async(max(1, args.samples), process_modes=not args.in_process_only))


if __name__ == "__main__":
    main()
