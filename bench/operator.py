"""Operator benchmark: reconcile time per LLMService, initial sync of many services, memory over time.

    .venv/bin/python -m bench.operator [--services 500] [--reconciles 5000]

The API server is the test emulator (``tests/operator/apiserver.py``, kmock-based) running in a child
process, so the memory figures are the operator's alone; the operator runs here, for real (kopf
watches, work queue, jsii synthesis on one thread, server-side apply), with leader election off.

Figures, with baselines measured in the same run:

1. **bare synth** — ``render_llmservice`` alone on the jsii thread (the floor of a cold reconcile);
2. **initial sync** — ``--services`` LLMServices (and one runtime) exist before the operator starts:
   time until every one is reconciled with a status written, and RSS (Python and the Node.js jsii
   kernel) before and after;
3. **reconcile time** — cold (the spec changed: synth + apply + status) and warm (a child object
   changed: everything cached, nothing to write), p50/p99 per LLMService, as ratios to bare synth;
4. **RSS growth** over ``--reconciles`` passes (10% with a spec change, 90% warm), after a warm-up.

The install runs the operator with ``PYTHONOPTIMIZE=1`` (jsii's run-time type checks off); run
``.venv/bin/python -O -m bench.operator`` for that configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import multiprocessing
import multiprocessing.connection
import os
import pathlib
import sys
import time
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
os.environ.setdefault("JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION", "1")

from bench import reporting  # noqa: E402

NS = "ai"


def _rss_mib(pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _node_pids() -> list[int]:
    pids = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = (entry / "stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and "node" in stat.split(")")[0]:
                    pids.append(int(entry.name))
    return pids


async def until(predicate: Callable[[], bool], interval: float) -> None:
    while True:
        if predicate():
            return
        await asyncio.sleep(interval)


def _serve(conn: multiprocessing.connection.Connection, services: int) -> None:
    """Child process: the emulated API server with a runtime and ``services`` LLMServices."""
    sys.path.insert(0, str(ROOT))

    async def main() -> None:
        import kmock

        from tests.operator.conftest import make_server
        from tests.operator.scenario import LLMSERVICES, RUNTIMES, runtime_body, service_body

        server = make_server()
        server.upsert(RUNTIMES, runtime_body())
        for i in range(services):
            server.upsert(LLMSERVICES, service_body(f"svc-{i:04d}"))
        async with server, kmock.Server(server):
            conn.send(str(server.url).rstrip("/"))
            loop = asyncio.get_running_loop()
            stop = asyncio.Event()
            loop.add_reader(conn.fileno(), stop.set)
            await stop.wait()

    asyncio.run(main())


def bare_synth(samples: int) -> list[float]:
    sys.path.insert(0, str(ROOT))
    from noctaya.api import inferenceruntime, llmservice
    from noctaya.constructs import settings, synthesis
    from tests.operator.scenario import runtime_body, service_body

    runtime = inferenceruntime.InferenceRuntime.model_validate(runtime_body())
    timings = []
    for i in range(samples + 3):
        body = service_body(f"bare-{i}")
        body["metadata"]["uid"] = f"uid-{i}"
        service = llmservice.LLMService.model_validate(body)
        start = time.perf_counter()
        synthesis.render_llmservice(
            service=service, runtime=runtime, settings=settings.RenderSettings(gateway_image="img")
        )
        if i >= 3:  # the first renders warm the jsii kernel
            timings.append(time.perf_counter() - start)
    return timings


async def run(services: int, reconciles: int) -> None:
    import kopf
    from kubernetes_asyncio import client as k8s_client

    from noctaya.constructs import synthesis
    from noctaya.operator import reconciliation, running, settings

    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_serve, args=(child, services), daemon=True)
    proc.start()
    url = parent.recv()

    # 1. bare synth on the thread the operator uses
    from noctaya.operator import rendering

    synth = await asyncio.get_running_loop().run_in_executor(rendering.jsii_thread(), bare_synth, 100)
    gc.collect()

    config = settings.OperatorSettings(
        namespaces=(NS,),
        gateway_image="ghcr.io/noctaya/noctaya:bench",
        identity="bench",
        leader_election=False,
        health_listen="",
        server=url,
        workers=4,
    )
    api = k8s_client.ApiClient(k8s_client.Configuration(host=url))
    op = running.Operator(
        config=config, api=api, render=synthesis.render_llmservice, login=kopf.ConnectionInfo(server=url)
    )
    rss_before, node_before = _rss_mib(), sum(_rss_mib(p) for p in _node_pids())
    stop = asyncio.Event()
    passes: list[reconciliation.PassRecord] = []
    op.on_pass(passes.append)
    task = asyncio.create_task(op.run(stop=stop))
    started = time.perf_counter()

    def synced() -> bool:
        inv, queue = op.inventory, op.queue
        if inv is None or queue is None or len(inv.services) < services:
            return False
        done = all(
            (body.get("status") or {}).get("observedGeneration") == body["metadata"].get("generation")
            for body in inv.services.values()
        )
        return done and queue.depth == 0 and queue.in_flight == 0

    await until(synced, 0.05)
    sync_seconds = time.perf_counter() - started
    rss_synced, node_synced = _rss_mib(), sum(_rss_mib(p) for p in _node_pids())
    assert op.reconciler is not None and op.queue is not None and op.inventory is not None
    reconciler, queue, inv = op.reconciler, op.queue, op.inventory
    sync_passes = len(passes)

    # 3. reconcile time: cold (spec change through the API) and warm (a child changed)
    keys = sorted(inv.services)
    client = op.client
    from noctaya.operator import apiclient

    async def change(key: tuple[str, str], value: int) -> None:
        await client.patch(
            apiclient.LLMSERVICE,
            namespace=key[0],
            name=key[1],
            patch={"spec": {"endpoint": {"maxQueue": value}}},
        )

    async def drain() -> None:
        await asyncio.sleep(0.05)
        await until(lambda: not (queue.depth or queue.in_flight), 0.01)

    async def generation_seen(key: tuple[str, str], generation: int) -> None:
        await until(lambda: int(inv.services[key]["metadata"].get("generation") or 0) >= generation, 0.005)

    cold: list[float] = []
    for i, key in enumerate(keys[:100]):
        gen = int(inv.services[key]["metadata"]["generation"]) + 1
        renders = op.renderer.renders
        changed_at = time.monotonic()
        await change(key, 200 + i)
        await generation_seen(key, gen)
        await drain()
        first = next(p for p in passes if p.key == key and p.started >= changed_at)
        assert op.renderer.renders == renders + 1  # the pass did synthesize
        cold.append(first.ended - first.started)
    warm: list[float] = []
    for key in keys[:300]:
        start = time.perf_counter()
        await reconciler(key)
        warm.append(time.perf_counter() - start)

    # 4. RSS growth over many passes: 10 % with a spec change, 90 % warm (child-change) passes
    async def churn(n: int, offset: int) -> None:
        for i in range(n):
            key = keys[i % len(keys)]
            if i % 10 == 0:
                await change(key, 1000 + offset + i)
            else:
                queue.add(key)
            if i % 50 == 49:
                await drain()
        await drain()

    await churn(500, 0)  # warm-up
    gc.collect()
    growth_start, node_growth_start = _rss_mib(), sum(_rss_mib(p) for p in _node_pids())
    passes_start = queue.processed
    churn_started = time.perf_counter()
    await churn(reconciles, 100_000)
    churn_seconds = time.perf_counter() - churn_started
    gc.collect()
    growth_end, node_growth_end = _rss_mib(), sum(_rss_mib(p) for p in _node_pids())
    churn_passes = queue.processed - passes_start

    cached_renders = len(op.renderer)
    stop.set()
    await task
    await api.close()
    parent.send("stop")
    proc.join(10)

    p50 = reporting.percentile
    bare50 = p50(synth, 50)
    print(
        reporting.table(
            "bare synth (baseline): render_llmservice on the jsii thread",
            ["samples", "p50 ms", "p99 ms"],
            [[len(synth), bare50 * 1e3, p50(synth, 99) * 1e3]],
        )
    )
    print()
    print(
        reporting.table(
            f"initial sync of {services} LLMServices (aim: < 60 s)",
            ["seconds", "passes", "per service ms", "py RSS MiB before/after", "node RSS MiB before/after"],
            [
                [
                    sync_seconds,
                    sync_passes,
                    sync_seconds / services * 1e3,
                    f"{rss_before:.0f} / {rss_synced:.0f}",
                    f"{node_before:.0f} / {node_synced:.0f}",
                ]
            ],
        )
    )
    print()
    print(
        reporting.table(
            "reconcile time per LLMService (aim: p50 < 50 ms)",
            ["kind", "samples", "p50 ms", "p99 ms", "p50 vs bare synth"],
            [
                [
                    "cold: spec changed (synth+apply+status)",
                    len(cold),
                    p50(cold, 50) * 1e3,
                    p50(cold, 99) * 1e3,
                    reporting.ratio(p50(cold, 50), bare50),
                ],
                [
                    "warm: child changed (cached, no writes)",
                    len(warm),
                    p50(warm, 50) * 1e3,
                    p50(warm, 99) * 1e3,
                    reporting.ratio(p50(warm, 50), bare50),
                ],
            ],
        )
    )
    print()
    print(
        reporting.table(
            f"RSS growth over {churn_passes} reconcile passes (aim: < 50 MiB per 5,000)",
            [
                "seconds",
                "py RSS MiB start",
                "py growth MiB",
                "node growth MiB",
                "renders (cache misses)",
                "cached renders",
            ],
            [
                [
                    churn_seconds,
                    growth_start,
                    growth_end - growth_start,
                    node_growth_end - node_growth_start,
                    op.renderer.renders,
                    cached_renders,
                ]
            ],
        )
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.operator")
    parser.add_argument("--services", type=int, default=500)
    parser.add_argument("--reconciles", type=int, default=5000)
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.WARNING)
    asyncio.run(run(args.services, args.reconciles))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
