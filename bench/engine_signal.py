"""The engine signal: how soon ``GetMetrics`` shows an engine-side queue, and what reading costs the gateway.

    .venv/bin/python -m bench.engine_signal [--samples N] [--replicas 1,8,32] [--seconds S]

1. Time to see a queue, in one run, two paths to the same ``GetMetrics`` (polled every 5 ms, as a
   KEDA polling without delay would):
   - gateway count (the baseline): ``k`` streams sent through an in-process gateway, from the send
     until ``GetMetrics`` reaches ``k`` (the demand listener path);
   - engine queue: a fake engine's waiting queue grows by ``k`` behind the gateway's back (requests
     it holds beyond its slots), from that moment until ``GetMetrics`` reflects it; the reader runs
     every ``interval`` (the rendered default, 2 s, and 500 ms), so the wait is mostly the phase of
     the next round plus one read.
2. CPU per replica read: a ``noctaya gateway`` process with the co-located scaler reading ``R``
   replicas every 500 ms, each answering a vLLM-sized exposition (histograms, ~60 KB), against the
   same process without an engine section (the baseline), for ``--seconds``; the difference in the
   process's CPU time, per replica read.

The machine is shared and noisy; read the ratios to the baselines of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import pathlib
import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import grpc
from aiohttp import web

from bench import processes, reporting
from noctaya.contract import gateway as gateway_contract
from noctaya.dev import fake_engine
from noctaya.gateway import app as gateway_app
from noctaya.scaler import hosting
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

REF = pb.ScaledObjectRef(name="bench", namespace="bench")
SERVICE = {"name": "bench", "namespace": "bench"}
QUEUE = 3
POLL = 0.005


def vllm_exposition() -> str:
    """A /metrics page the size and shape of a vLLM replica's: gauges and many histograms."""
    lines = [
        "# TYPE vllm:num_requests_running gauge",
        'vllm:num_requests_running{model_name="m"} 2',
        "# TYPE vllm:num_requests_waiting gauge",
        'vllm:num_requests_waiting{model_name="m"} 1',
        "# TYPE vllm:kv_cache_usage_perc gauge",
        'vllm:kv_cache_usage_perc{model_name="m"} 0.42',
    ]
    buckets = [0.001 * 2**i for i in range(24)] + [float("inf")]
    for h in range(16):
        name = f"vllm:histogram_{h}_seconds"
        lines.append(f"# HELP {name} A latency histogram of the engine.")
        lines.append(f"# TYPE {name} histogram")
        for le in buckets:
            bound = "+Inf" if le == float("inf") else repr(le)
            lines.append(f'{name}_bucket{{le="{bound}",model_name="m",engine="0"}} {h * 7}')
        lines += [
            f'{name}_sum{{model_name="m",engine="0"}} 12.5',
            f'{name}_count{{model_name="m",engine="0"}} 99',
        ]
    for c in range(40):
        lines.append(f"# TYPE python_counter_{c} counter")
        lines.append(f'python_counter_{c}_total{{generation="{c}"}} {c * 1000}')
    return "\n".join(lines) + "\n"


async def served(stub: pb_grpc.ExternalScalerStub) -> float:
    reply = await stub.GetMetrics(pb.GetMetricsRequest(scaledObjectRef=REF, metricName="queuedepth"))
    return float(reply.metricValues[0].metricValueFloat)


async def until_value(stub: pb_grpc.ExternalScalerStub, *, at_least: float, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while await served(stub) < at_least:
        if time.monotonic() > deadline:
            raise RuntimeError(f"GetMetrics did not reach {at_least} within {within}s")
        await asyncio.sleep(POLL)


async def until_below(stub: pb_grpc.ExternalScalerStub, *, value: float, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while await served(stub) >= value:
        if time.monotonic() > deadline:
            raise RuntimeError(f"GetMetrics did not drop below {value} within {within}s")
        await asyncio.sleep(POLL)


@contextlib.asynccontextmanager
async def gateway(document: dict[str, Any]) -> AsyncIterator[pb_grpc.ExternalScalerStub]:
    config = gateway_contract.build_config(document)
    app = gateway_app.make_app(config, sidecars=hosting.gateway_sidecars(config))
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=0.2)
    await runner.setup()
    host, port = config.listen_address
    await web.TCPSite(runner, host, port).start()
    assert config.scaler is not None
    try:
        async with grpc.aio.insecure_channel(config.scaler.listen) as channel:
            yield pb_grpc.ExternalScalerStub(channel)
    finally:
        await runner.cleanup()


def document(*, backend: str, engine: dict[str, Any] | None) -> dict[str, Any]:
    scaler: dict[str, Any] = {"listen": f"127.0.0.1:{processes.reserved_port()}", "target": 1}
    if engine is not None:
        scaler["engine"] = engine
    return {
        "listen": f"127.0.0.1:{processes.reserved_port()}",
        "backendUrl": backend,
        "service": SERVICE,
        "scaler": scaler,
    }


async def _hold(session: aiohttp.ClientSession, url: str) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    async with session.post(f"{url}/v1/chat/completions", json=body) as response:
        async for _ in response.content.iter_any():
            pass


async def engine_path(*, samples: int, interval: str, tmp: pathlib.Path) -> list[float]:
    """A fake engine's waiting queue grows -> GetMetrics reflects it."""
    engine = fake_engine.FakeEngine(slots=1)
    seen: list[float] = []
    async with fake_engine.running(engine) as replica:
        endpoints = tmp / f"endpoints-{interval}"
        endpoints.write_text(replica.url.removeprefix("http://") + "\n")
        section = {
            "endpointsFile": str(endpoints),
            "queueMetrics": ["vllm:num_requests_waiting"],
            "queueTarget": 1,
            "interval": interval,
            "timeout": "500ms",
        }
        async with gateway(document(backend=replica.url, engine=section)) as stub:
            for _ in range(samples):
                await asyncio.sleep(random.uniform(0.0, 1.0))
                engine.active = 1 + QUEUE  # the queue forms in the engine
                started = time.perf_counter()
                await until_value(stub, at_least=QUEUE)
                seen.append((time.perf_counter() - started) * 1000)
                engine.active = 0
                await until_below(stub, value=1)
    return seen


# ------------------------------------------------------------------------------------------ CPU
async def cpu_per_replica(*, replicas: int, seconds: float, tmp: pathlib.Path) -> tuple[float, float, int]:
    """(gateway CPU seconds with the engine section, without it, rounds) over ``seconds``."""
    body = vllm_exposition()

    async def metrics(_request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="text/plain")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    sites = [web.TCPSite(runner, "127.0.0.1", 0) for _ in range(replicas)]
    for site in sites:
        await site.start()
    ports = sorted({a[1] for a in runner.addresses if isinstance(a, tuple)})
    endpoints = tmp / f"cpu-endpoints-{replicas}"
    endpoints.write_text("".join(f"127.0.0.1:{p}\n" for p in ports))
    section = {
        "endpointsFile": str(endpoints),
        "queueMetrics": ["vllm:num_requests_waiting"],
        "queueTarget": 1,
        "kvCacheMetrics": ["vllm:kv_cache_usage_perc"],
        "kvCacheTarget": 0.8,
        "interval": "500ms",
        "timeout": "1s",
    }
    try:
        results = []
        for engine in (section, None):
            doc = document(backend=f"http://127.0.0.1:{processes.reserved_port()}", engine=engine)
            path = tmp / f"gateway-{replicas}-{engine is not None}.json"
            path.write_text(json.dumps(doc))
            child = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "noctaya", "gateway", "--config", str(path), "--log-level", "ERROR"
            )
            try:
                await asyncio.to_thread(processes.wait_http, f"http://{doc['listen']}/healthz", within=90.0)
                await asyncio.sleep(1.0)  # past the start
                before = processes.cpu_seconds(child.pid)
                await asyncio.sleep(seconds)
                results.append(processes.cpu_seconds(child.pid) - before)
            finally:
                with contextlib.suppress(ProcessLookupError):
                    child.terminate()
                await asyncio.wait_for(child.wait(), timeout=30)
        rounds = int(seconds / 0.5)
        return results[0], results[1], rounds
    finally:
        await runner.cleanup()


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="noctaya-bench-engine-") as directory:
        tmp = pathlib.Path(directory)
        rows = []
        baseline = await gateway_path(samples=args.samples)
        b50 = reporting.percentile(baseline, 50)
        rows.append(["gateway count (baseline)", b50, reporting.percentile(baseline, 90), "1.00x"])
        for interval in ("2s", "500ms"):
            seen = await engine_path(samples=args.samples, interval=interval, tmp=tmp)
            p50 = reporting.percentile(seen, 50)
            rows.append(
                [
                    f"engine queue, interval {interval}",
                    p50,
                    reporting.percentile(seen, 90),
                    reporting.ratio(p50, b50),
                ]
            )
        print(
            reporting.table(
                f"queue formed -> GetMetrics shows it ({args.samples} samples, queue {QUEUE})",
                ["path", "p50 ms", "p90 ms", "p50 vs gateway count"],
                rows,
            )
        )
        cpu_rows = []
        for replicas in args.replicas:
            with_engine, without, rounds = await cpu_per_replica(
                replicas=replicas, seconds=args.seconds, tmp=tmp
            )
            reads = rounds * replicas
            per_read_ms = (with_engine - without) / reads * 1000 if reads else float("nan")
            cpu_rows.append(
                [
                    replicas,
                    with_engine / args.seconds * 100,
                    without / args.seconds * 100,
                    per_read_ms,
                    reporting.ratio(with_engine, without),
                ]
            )
        print(
            reporting.table(
                f"gateway CPU reading every replica each 500 ms ({args.seconds:g} s, vLLM-sized page "
                f"{len(vllm_exposition()) // 1024} KiB)",
                ["replicas", "CPU % with", "CPU % without (baseline)", "CPU ms per replica read", "ratio"],
                cpu_rows,
            )
        )


async def gateway_path(*, samples: int) -> list[float]:
    """Streams sent through the gateway -> GetMetrics counts them."""
    engine = fake_engine.FakeEngine(tokens=100_000, token_delay=0.05)
    seen: list[float] = []
    async with fake_engine.running(engine) as replica:
        doc = document(backend=replica.url, engine=None)
        async with gateway(doc) as stub, aiohttp.ClientSession() as session:
            url = f"http://{doc['listen']}"
            for _ in range(samples):
                await asyncio.sleep(random.uniform(0.0, 0.5))
                started = time.perf_counter()
                tasks = [asyncio.create_task(_hold(session, url)) for _ in range(QUEUE)]
                await until_value(stub, at_least=QUEUE)
                seen.append((time.perf_counter() - started) * 1000)
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                await until_below(stub, value=1)
    return seen


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.engine_signal", description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument(
        "--replicas", type=lambda s: [int(x) for x in s.split(",")], default=[1, 8, 32], help="e.g. 1,8,32"
    )
    parser.add_argument("--seconds", type=float, default=10.0, help="CPU measuring window per run")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # cancelled held streams are the point, not news
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
