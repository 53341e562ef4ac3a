"""Gateway data-plane benchmark: direct backend vs gateway vs nginx, side by side in one run.

    .venv/bin/python -m bench.gateway [--quick] [--client wrk|aiohttp]

Everything runs on 127.0.0.1: one fake engine process (the backend), one ``noctaya gateway`` process
in front of it, nginx (if installed) as a reverse proxy in front of the same engine with a temporary
config, and the load generator in its own process (``wrk`` when installed, else an aiohttp client).
Every load phase is bounded in time and in count. The child processes (engine, gateway, nginx) come
from ``bench.processes``, the load generators from ``bench.load``; this module holds the phases.

Figures:

1. small non-streaming requests at 64 and 512 concurrent clients: req/s, p50/p99 latency, latency
   added over the direct path, and proxy CPU per request (so "req/s per core" is CPU-normalised);
2. SSE relay with 256 concurrent streams: chunks/s received by clients and proxy CPU per 1,000 chunks/s;
3. 10,000 cold keepalive requests held by a gateway whose backend is down: RSS and worst heartbeat lag,
   next to the goal (under 150 MiB, lag under 1 s) and to a bare aiohttp server holding the same load
   (``bench.held_floor``: what aiohttp and uvloop cost by themselves);
4. 429 responses/s from a gateway whose cold queue is full, next to nginx answering a static 429.

The machine is shared and noisy; read the gateway/nginx and gateway/direct ratios, not absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import aiohttp

from bench import load, processes, reporting

HEARTBEAT = 1.0
HELD_GOAL_MIB = 150.0  # the goal: 10,000 cold requests held under 150 MiB RSS ...
HELD_GOAL_LAG_MS = 1000.0  # ... with every heartbeat under 1 s late
HELD_GOAL_COUNT = 10_000


# ---------------------------------------------------------------------------------------------- phases
@contextlib.contextmanager
def measured(pid: int | None) -> Iterator[dict[str, float]]:
    """CPU seconds used by ``pid`` and wall seconds elapsed inside the block."""
    box: dict[str, float] = {}
    cpu0 = processes.cpu_seconds(pid) if pid else 0.0
    wall0 = time.monotonic()
    yield box
    box["cpu"] = (processes.cpu_seconds(pid) if pid else 0.0) - cpu0
    box["wall"] = time.monotonic() - wall0


def request_phase(
    targets: dict[str, tuple[str, int | None]],
    *,
    clients: int,
    seconds: float,
    client: str,
    tmp: pathlib.Path,
) -> None:
    rows = []
    results: dict[str, dict[str, float]] = {}
    for name, (base, pid) in targets.items():
        url = base + "/v1/chat/completions"
        with measured(pid) as usage:
            if client == "wrk":
                result = load.run_wrk(url, clients=clients, seconds=seconds, tmp=tmp)
            else:
                result = load.run_worker(
                    {"kind": "requests", "url": url, "clients": clients, "seconds": seconds},
                    timeout=seconds + 60,
                )
        results[name] = result
        cpu_per_req = usage["cpu"] / result["requests"] * 1000 if pid and result["requests"] else float("nan")
        rows.append(
            [
                name,
                result["rps"],
                result["p50"],
                result["p99"],
                result["p50"] - results["direct"]["p50"],
                result["p99"] - results["direct"]["p99"],
                cpu_per_req,
                1000 / cpu_per_req if cpu_per_req == cpu_per_req else float("nan"),
                int(result["non_2xx"] + result["errors"]),
            ]
        )
    print(
        reporting.table(
            f"small non-streaming requests, {clients} concurrent clients ({client}, {seconds:g}s each)",
            [
                "path",
                "req/s",
                "p50 ms",
                "p99 ms",
                "added p50 ms",
                "added p99 ms",
                "proxy CPU ms/req",
                "req/s per proxy core",
                "errors",
            ],
            rows,
        )
    )
    if "nginx" in results:
        d, g, n = results["direct"], results["gateway"], results["nginx"]
        print(
            f"   gateway/nginx: req/s {reporting.ratio(g['rps'], n['rps'])}, "
            f"added p50 {reporting.ratio(g['p50'] - d['p50'], n['p50'] - d['p50'])}, "
            f"added p99 {reporting.ratio(g['p99'] - d['p99'], n['p99'] - d['p99'])}"
        )
    print(f"   gateway/direct: req/s {reporting.ratio(results['gateway']['rps'], results['direct']['rps'])}")


def paced_phase(
    targets: dict[str, tuple[str, int | None]], *, clients: int, rate: float, seconds: float
) -> None:
    """Added latency below saturation: the same offered load on every path, so only the hop differs."""
    rows = []
    results: dict[str, dict[str, float]] = {}
    for name, (base, pid) in targets.items():
        job = {
            "kind": "paced",
            "url": base + "/v1/chat/completions",
            "clients": clients,
            "rate": rate,
            "seconds": seconds,
        }
        with measured(pid) as usage:
            result = load.run_worker(job, timeout=seconds + 60)
        results[name] = result
        direct = results["direct"]
        # CPU per request at a fixed offered load: steadier than latency on a shared machine
        cpu_per_req = usage["cpu"] / result["requests"] * 1000 if pid and result["requests"] else float("nan")
        rows.append(
            [
                name,
                int(result["requests"]),
                result["p50"],
                result["p99"],
                result["p50"] - direct["p50"],
                result["p99"] - direct["p99"],
                cpu_per_req,
                int(result["late"]),
            ]
        )
    print(
        reporting.table(
            f"added latency at a paced {rate:,.0f} req/s over {clients} connections "
            f"(aiohttp client, {seconds:g}s)",
            [
                "path",
                "requests",
                "p50 ms",
                "p99 ms",
                "added p50 ms",
                "added p99 ms",
                "proxy CPU ms/req",
                "sent late",
            ],
            rows,
        )
    )
    if "nginx" in results:
        d, g, n = results["direct"], results["gateway"], results["nginx"]
        print(
            f"   gateway/nginx added p50: {reporting.ratio(g['p50'] - d['p50'], n['p50'] - d['p50'])}, "
            f"added p99: {reporting.ratio(g['p99'] - d['p99'], n['p99'] - d['p99'])}"
        )


def sse_phase(
    targets: dict[str, tuple[str, int | None]], *, streams: int, seconds: float, tokens: int, backend_pid: int
) -> None:
    rows = []
    results = {}
    for name, (base, pid) in targets.items():
        job = {
            "kind": "sse",
            "url": base + "/v1/chat/completions",
            "streams": streams,
            "seconds": seconds,
            "tokens": tokens,
        }
        with measured(pid) as usage, measured(backend_pid) as backend:
            result = load.run_worker(job, timeout=seconds + 60)
        results[name] = result
        chunks = result["chunks"]
        # CPU per chunk does not depend on the wall time (worker start-up is not counted against it)
        per_k = usage["cpu"] / chunks * 1000 * 100 if pid and chunks else float("nan")
        rows.append(
            [
                name,
                result["chunks_per_s"],
                int(result["streams_completed"]),
                usage["cpu"] / seconds if pid else float("nan"),
                per_k,
                backend["cpu"] / seconds,
            ]
        )
    print(
        reporting.table(
            f"SSE relay, {streams} concurrent streams ({tokens} tokens each, {seconds:g}s)",
            [
                "path",
                "chunks/s",
                "streams done",
                "proxy CPU (cores)",
                "proxy core-% per 1k chunks/s",
                "backend CPU (cores)",
            ],
            rows,
        )
    )
    rate = {name: result["chunks_per_s"] for name, result in results.items()}
    if "nginx" in results:
        print(f"   gateway/nginx chunks/s: {reporting.ratio(rate['gateway'], rate['nginx'])}")
    print(f"   gateway/direct chunks/s: {reporting.ratio(rate['gateway'], rate['direct'])}")


CONNECTIONS = 20_000


def start_gateway(
    tmp: pathlib.Path, name: str, *, backend: str, extra: list[str]
) -> tuple[processes.Process, str]:
    port = processes.free_port()
    process = processes.Process(
        name,
        [
            processes.PYTHON,
            "-m",
            "noctaya",
            "gateway",
            "--backend-url",
            backend,
            "--listen",
            f"127.0.0.1:{port}",
            "--log-level",
            "WARNING",
            # every load generator is one peer (127.0.0.1) opening thousands of connections
            "--max-connections",
            str(CONNECTIONS),
            "--max-connections-per-peer",
            str(CONNECTIONS),
            *extra,
        ],
        log=tmp / f"{name}.log",
    )
    url = f"http://127.0.0.1:{port}"
    processes.wait_http(url + "/healthz")
    return process, url


def hold(url: str, pid: int, *, count: int, seconds: float) -> tuple[float, float, dict[str, float]]:
    """Hold ``count`` streaming requests on the server at ``url`` (pid ``pid``) for ``seconds``:
    its RSS before, its peak RSS while holding, and the load generator's figures."""
    idle_rss = processes.rss_mib(pid)
    job = {
        "kind": "held",
        "url": url + "/v1/chat/completions",
        "queue_url": url + "/noctaya/queue",
        "count": count,
        "seconds": seconds,
        "interval": HEARTBEAT,
    }
    holder = subprocess.Popen(
        [processes.PYTHON, "-m", "bench.load", json.dumps(job)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak_rss = idle_rss
    while holder.poll() is None:
        peak_rss = max(peak_rss, processes.rss_mib(pid))
        time.sleep(0.2)
    stdout, stderr = holder.communicate()
    if holder.returncode != 0:
        raise RuntimeError(f"held worker failed: {stderr[-2000:]}")
    return idle_rss, peak_rss, json.loads(stdout.strip().splitlines()[-1])


def held_phase(tmp: pathlib.Path, *, count: int, seconds: float) -> None:
    """The gateway holding ``count`` cold streams, beside a bare aiohttp server (``bench.held_floor``)
    holding the same load: the floor that aiohttp and uvloop set by themselves."""
    port = processes.free_port()
    floor = processes.Process(
        "held-floor",
        [processes.PYTHON, "-m", "bench.held_floor", "--port", str(port), "--interval", f"{HEARTBEAT:g}"],
        log=tmp / "held-floor.log",
    )
    try:
        floor_url = f"http://127.0.0.1:{port}"
        processes.wait_http(floor_url + "/healthz")
        figures = {"aiohttp floor": hold(floor_url, floor.pid, count=count, seconds=seconds)}
    finally:
        floor.stop()
    dead_backend = (
        f"http://127.0.0.1:{processes.free_port()}"  # nothing listens there: the backend stays cold
    )
    process, url = start_gateway(
        tmp,
        "gateway-cold",
        backend=dead_backend,
        extra=[
            "--max-queue",
            str(count),
            "--heartbeat-interval",
            f"{HEARTBEAT:g}s",
            "--activation-timeout",
            "30m",
        ],
    )
    try:
        figures["gateway"] = hold(url, process.pid, count=count, seconds=seconds)
    finally:
        process.stop()
    per_request: dict[str, float] = {}
    rows = []
    for name, (idle_rss, peak_rss, result) in figures.items():
        per_request[name] = (peak_rss - idle_rss) * 1024 / max(1, result["held"])
        rows.append(
            [
                name,
                int(result["held"]),
                result["ramp_s"],
                idle_rss,
                peak_rss,
                per_request[name],
                result["worst_lag_ms"],
                result["p99_lag_ms"],
                int(result["beats"]),
            ]
        )
    print(
        reporting.table(
            f"{count:,} cold keepalive requests held ({HEARTBEAT:g}s heartbeat, watched {seconds:g}s)",
            [
                "server",
                "held",
                "ramp s",
                "RSS idle MiB",
                "RSS peak MiB",
                "per request KiB",
                "worst heartbeat lag ms",
                "p99 lag ms",
                "heartbeats seen",
            ],
            rows,
        )
    )
    idle_rss, peak_rss, result = figures["gateway"]
    floor_idle, _, _ = figures["aiohttp floor"]
    print(
        f"   gateway/aiohttp floor: idle RSS {reporting.ratio(idle_rss, floor_idle)}, "
        f"per request {reporting.ratio(per_request['gateway'], per_request['aiohttp floor'])}"
    )
    projected = idle_rss + per_request["gateway"] * HELD_GOAL_COUNT / 1024
    budget_kib = (HELD_GOAL_MIB - idle_rss) * 1024 / HELD_GOAL_COUNT
    lag_ratio = reporting.ratio(result["worst_lag_ms"], HELD_GOAL_LAG_MS)
    print(
        f"   goal: {HELD_GOAL_COUNT:,} held under {HELD_GOAL_MIB:g} MiB with lag under "
        f"{HELD_GOAL_LAG_MS:g} ms; peak at {HELD_GOAL_COUNT:,} "
        f"{'measured' if result['held'] == HELD_GOAL_COUNT else 'projected'} {projected:.1f} MiB "
        f"({reporting.ratio(projected, HELD_GOAL_MIB)} of goal; budget at this idle RSS "
        f"{budget_kib:.1f} KiB/request), worst lag {lag_ratio} of goal"
    )


def reject_phase(tmp: pathlib.Path, *, seconds: float, client: str, nginx_reject: int | None) -> None:
    dead_backend = f"http://127.0.0.1:{processes.free_port()}"
    process, url = start_gateway(
        tmp,
        "gateway-full",
        backend=dead_backend,
        extra=[
            "--max-queue",
            "16",
            "--heartbeat-interval",
            "1s",
            "--activation-timeout",
            "30m",
        ],
    )
    holder = load.HeldWorker(
        {
            "kind": "held",
            "url": url + "/v1/chat/completions",
            "queue_url": url + "/noctaya/queue",
            "count": 16,
            "seconds": seconds * 3 + 30,
            "interval": 1.0,
        }
    )
    try:

        async def full() -> None:
            async with asyncio.timeout(30), aiohttp.ClientSession() as session:
                while True:
                    async with session.get(url + "/noctaya/queue") as response:
                        if (await response.json())["queued"] >= 16:
                            return
                    await asyncio.sleep(0.1)

        asyncio.run(full())
        rows = []
        targets: dict[str, tuple[str, int | None]] = {"gateway (queue full)": (url, process.pid)}
        if nginx_reject is not None:
            targets["nginx static 429"] = (f"http://127.0.0.1:{nginx_reject}", None)
        rates = {}
        for name, (base, pid) in targets.items():
            with measured(pid) as usage:
                if client == "wrk":
                    result = load.run_wrk(base + "/v1/chat/completions", clients=64, seconds=seconds, tmp=tmp)
                else:
                    result = load.run_worker(
                        {
                            "kind": "requests",
                            "url": base + "/v1/chat/completions",
                            "clients": 64,
                            "seconds": seconds,
                        },
                        timeout=seconds + 60,
                    )
            rates[name] = result["rps"]
            per_core = result["requests"] / usage["cpu"] if pid and usage["cpu"] else float("nan")
            rows.append([name, result["rps"], int(result["non_2xx"]), result["p50"], result["p99"], per_core])
        print(
            reporting.table(
                f"429 responses with a full queue (64 clients, {seconds:g}s)",
                ["path", "responses/s", "non-2xx", "p50 ms", "p99 ms", "per proxy core/s"],
                rows,
            )
        )
        if nginx_reject is not None:
            gateway_rate, nginx_rate = rates["gateway (queue full)"], rates["nginx static 429"]
            print(f"   gateway/nginx: {reporting.ratio(gateway_rate, nginx_rate)}")
    finally:
        holder.stop()
        process.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.gateway", description=__doc__.split("\n")[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="short phases (smoke run)")
    parser.add_argument(
        "--client", choices=["wrk", "aiohttp"], default="wrk" if shutil.which("wrk") else "aiohttp"
    )
    parser.add_argument("--held", type=int, default=10_000, help="cold requests to hold")
    parser.add_argument(
        "--phases",
        default="requests,sse,reject,held",
        help="comma-separated subset to run (requests = closed + paced)",
    )
    args = parser.parse_args(argv)
    if args.worker:
        load.worker_main(json.loads(args.worker))
        return 0
    load.raise_fd_limit()
    seconds = 2.0 if args.quick else 5.0
    with tempfile.TemporaryDirectory(prefix="noctaya-bench-") as tmp_name:
        tmp = pathlib.Path(tmp_name)
        backend_port = processes.free_port()
        engine = processes.Process(
            "engine",
            [
                processes.PYTHON,
                "-m",
                "noctaya.dev.fake_engine",
                "--port",
                str(backend_port),
                "--tokens",
                "256",
            ],
            log=tmp / "engine.log",
        )
        started = [engine]
        try:
            backend = f"http://127.0.0.1:{backend_port}"
            processes.wait_http(backend + "/health")
            gateway, gateway_url = start_gateway(
                tmp, "gateway", backend=backend, extra=["--max-in-flight", "2000", "--max-queue", "1000"]
            )
            started.append(gateway)
            processes.wait_http(gateway_url + "/noctaya/queue", ready_key="backendReady")
            nginx = processes.start_nginx(tmp, backend=backend_port)
            targets: dict[str, tuple[str, int | None]] = {
                "direct": (backend, None),
                "gateway": (gateway_url, gateway.pid),
            }
            nginx_reject = None
            if nginx is not None:
                nginx_process, nginx_port, nginx_reject = nginx
                started.append(nginx_process)
                targets["nginx"] = (
                    f"http://127.0.0.1:{nginx_port}",
                    processes.nginx_worker_pid(nginx_process),
                )
            print(
                f"engine pid {engine.pid}, gateway pid {gateway.pid}; load generator: {args.client}; "
                f"{os.cpu_count()} CPUs (shared)"
            )
            phases = set(args.phases.split(","))
            if phases & {"requests", "closed", "paced"}:  # "requests" is both kinds
                for clients in (64, 512):
                    if phases & {"requests", "closed"}:
                        request_phase(targets, clients=clients, seconds=seconds, client=args.client, tmp=tmp)
                    if phases & {"requests", "paced"}:
                        paced_phase(targets, clients=clients, rate=1000, seconds=seconds)
            if "sse" in phases:
                sse_phase(targets, streams=256, seconds=seconds, tokens=256, backend_pid=engine.pid)
            if "reject" in phases:
                reject_phase(tmp, seconds=seconds, client=args.client, nginx_reject=nginx_reject)
            if "held" in phases:
                held_phase(tmp, count=args.held if not args.quick else min(args.held, 2000), seconds=seconds)
        finally:
            for process in reversed(started):
                process.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
