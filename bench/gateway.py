"""Gateway data-plane benchmark: direct backend vs gateway vs nginx, side by side in one run.

    .venv/bin/python -m bench.gateway [--quick] [--client wrk|aiohttp]

Everything runs on 127.0.0.1: one fake engine process (the backend), one ``noctaya gateway`` process
in front of it, nginx (if installed) as a reverse proxy in front of the same engine with a temporary
config, and the load generator in its own process (``wrk`` when installed, else an aiohttp client).
Every load phase is bounded in time and in count.

Figures:

1. small non-streaming requests at 64 and 512 concurrent clients: req/s, p50/p99 latency, latency
   added over the direct path, and proxy CPU per request (so "req/s per core" is CPU-normalised);
2. SSE relay with 256 concurrent streams: chunks/s received by clients and proxy CPU per 1,000 chunks/s;
3. 10,000 cold keepalive requests held by a gateway whose backend is down: RSS and worst heartbeat lag,
   next to the goal (under 150 MiB, lag under 1 s);
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
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import typing
from collections.abc import Iterator
from typing import Any

import aiohttp

from bench import reporting

PYTHON = sys.executable
CHAT_BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
HEARTBEAT = 1.0
HELD_GOAL_MIB = 150.0  # issue 4: 10,000 cold requests held under 150 MiB RSS ...
HELD_GOAL_LAG_MS = 1000.0  # ... with every heartbeat under 1 s late
HELD_GOAL_COUNT = 10_000


# ---------------------------------------------------------------------------------------------- processes
def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (from /proc), in seconds."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Process:
    """A child process we started; stopped with SIGTERM (then SIGKILL) by its own pid."""

    def __init__(self, name: str, argv: list[str], *, log: pathlib.Path) -> None:
        self.name = name
        self.log = log
        self._file = log.open("wb")
        self.popen = subprocess.Popen(
            argv, stdout=self._file, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._file.close()


def wait_http(url: str, *, within: float = 20.0, ready_key: str | None = None) -> None:
    async def poll() -> None:
        async with asyncio.timeout(within), aiohttp.ClientSession() as session:
            while True:
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(url) as response:
                        if ready_key is None and response.status < 500:
                            return
                        if ready_key is not None and (await response.json()).get(ready_key):
                            return
                await asyncio.sleep(0.05)

    asyncio.run(poll())


NGINX_CONF = """
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
worker_rlimit_nofile 20000;
events {{ worker_connections 16000; }}
http {{
    access_log off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    upstream backend {{ server 127.0.0.1:{backend}; keepalive 1024; }}
    server {{
        listen 127.0.0.1:{port} backlog=4096;
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
    server {{
        listen 127.0.0.1:{reject_port} backlog=4096;
        location / {{
            default_type application/json;
            add_header Retry-After 10 always;
            return 429 '{{"error":{{"message":"queue full","type":"rate_limit_exceeded"}}}}';
        }}
    }}
}}
"""


def start_nginx(tmp: pathlib.Path, *, backend: int) -> tuple[Process, int, int] | None:
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if binary is None:
        print("nginx not found: the nginx column is skipped (install it with: apt-get install -y nginx)")
        return None
    port, reject_port = free_port(), free_port()
    conf = tmp / "nginx.conf"
    conf.write_text(NGINX_CONF.format(tmp=tmp, backend=backend, port=port, reject_port=reject_port))
    process = Process("nginx", [binary, "-c", str(conf), "-p", str(tmp)], log=tmp / "nginx.log")
    try:
        wait_http(f"http://127.0.0.1:{port}/health")
    except TimeoutError:
        print(f"nginx did not start (see {tmp / 'nginx-error.log'}): the nginx column is skipped")
        process.stop()
        return None
    return process, port, reject_port


def nginx_worker_pid(master: Process) -> int:
    """nginx serves from its worker; CPU is counted there (plus the master, which is idle)."""
    children = pathlib.Path(f"/proc/{master.pid}/task/{master.pid}/children")
    pids = [int(p) for p in children.read_text().split()] if children.exists() else []
    return pids[0] if pids else master.pid


# ---------------------------------------------------------------------------------------------- load: wrk
WRK_SCRIPT = """
wrk.method = "POST"
wrk.body = '{body}'
wrk.headers["Content-Type"] = "application/json"
"""

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def run_wrk(url: str, *, clients: int, seconds: float, tmp: pathlib.Path) -> dict[str, float]:
    script = tmp / "post.lua"
    script.write_text(WRK_SCRIPT.format(body=json.dumps(CHAT_BODY)))
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{clients}",
            f"-d{seconds:g}s",
            "--timeout",
            "10s",
            "--latency",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        check=True,
    ).stdout

    def latency(pct: str) -> float:
        match = re.search(rf"^\s+{pct}%\s+([\d.]+)(us|ms|s)\s*$", out, re.M)
        return float(match.group(1)) * _UNITS[match.group(2)] if match else float("nan")

    total = re.search(r"(\d+) requests in", out)
    rate = re.search(r"Requests/sec:\s+([\d.]+)", out)
    non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "requests": float(total.group(1)) if total else 0.0,
        "rps": float(rate.group(1)) if rate else 0.0,
        "p50": latency("50"),
        "p99": latency("99"),
        "non_2xx": float(non_2xx.group(1)) if non_2xx else 0.0,
        "errors": float(sum(int(g) for g in errors.groups())) if errors else 0.0,
    }


# ---------------------------------------------------------------------------------------------- load: aiohttp
def raise_fd_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def load_requests(job: dict[str, Any]) -> dict[str, Any]:
    """Closed loop: ``clients`` workers each sending requests back to back for ``seconds``."""
    url, clients, seconds = job["url"], job["clients"], job["seconds"]
    max_requests = job.get("max_requests", 2_000_000)
    body = json.dumps(CHAT_BODY).encode()
    headers = {"Content-Type": "application/json"}
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    loop = asyncio.get_running_loop()
    async with aiohttp.ClientSession(connector=connector) as session:
        deadline = loop.time() + seconds

        async def worker() -> None:
            while loop.time() < deadline and len(latencies) < max_requests:
                started = time.perf_counter()
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                latencies.append((time.perf_counter() - started) * 1000)
                statuses[response.status] = statuses.get(response.status, 0) + 1

        began = loop.time()
        await asyncio.gather(*(worker() for _ in range(clients)))
        elapsed = loop.time() - began
    return {
        "requests": len(latencies),
        "rps": len(latencies) / elapsed,
        "p50": reporting.percentile(latencies, 50),
        "p99": reporting.percentile(latencies, 99),
        "non_2xx": sum(v for k, v in statuses.items() if k >= 300),
        "errors": 0,
    }


async def load_paced(job: dict[str, Any]) -> dict[str, Any]:
    """Open loop: ``clients`` connections share a fixed total ``rate``; latency of each request."""
    url, clients, seconds, rate = job["url"], job["clients"], job["seconds"], job["rate"]
    body = json.dumps(CHAT_BODY).encode()
    headers = {"Content-Type": "application/json"}
    latencies: list[float] = []
    late = 0
    loop = asyncio.get_running_loop()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        # warm every connection first so connection setup is not measured
        await asyncio.gather(*(session.get(url.rsplit("/v1/", 1)[0] + "/v1/models") for _ in range(clients)))
        start = loop.time() + 0.1
        period = clients / rate

        async def worker(index: int) -> None:
            nonlocal late
            due = start + index / rate
            while due < start + seconds:
                delay = due - loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    late += 1
                began = time.perf_counter()
                async with session.post(url, data=body, headers=headers) as response:
                    await response.read()
                latencies.append((time.perf_counter() - began) * 1000)
                due += period

        await asyncio.gather(*(worker(i) for i in range(clients)))
    return {
        "requests": len(latencies),
        "p50": reporting.percentile(latencies, 50),
        "p99": reporting.percentile(latencies, 99),
        "late": late,
    }


class _SseCounter(asyncio.Protocol):
    """One keep-alive connection that sends a streaming request, counts ``data: `` events in the raw
    bytes (minimal HTTP handling, so the client is not the bottleneck), and sends the next request when
    the response ends (chunked terminator, or ``Content-Length`` bytes when a proxy sent the whole
    body at once)."""

    END = b"\r\n0\r\n\r\n"

    def __init__(self, *, request: bytes, deadline: float, stats: dict[str, int], done: asyncio.Future[None]):
        self.request = request
        self.deadline = deadline
        self.stats = stats
        self.done = done
        self.tail = b""
        self.head = b""  # response headers not yet complete
        self.remaining: int | None = None  # body bytes left when Content-Length was given
        self.transport: asyncio.Transport | None = None

    def __call__(self) -> _SseCounter:
        return self

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = typing.cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        self._next()

    def _next(self) -> None:
        self.tail, self.head, self.remaining = b"", b"", None
        if self.transport is None:
            return
        if asyncio.get_running_loop().time() < self.deadline:
            self.head = b"?"  # waiting for headers
            self.transport.write(self.request)
        else:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        if self.head:
            self.head = (self.head + data) if self.head != b"?" else data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            match = re.search(rb"(?im)^content-length:\s*(\d+)", self.head[:end])
            data = self.head[end + 4 :]
            self.head = b""
            if match:
                self.remaining = int(match.group(1))
        joined = self.tail + data
        self.stats["chunks"] += joined.count(b"data: ") - self.tail.count(b"data: ")
        self.tail = joined[-32:]
        if self.remaining is not None:
            self.remaining -= len(data)
            finished = self.remaining <= 0
        else:
            finished = joined.endswith(self.END)
        if finished:
            self.stats["completed"] += 1
            self._next()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def load_sse(job: dict[str, Any]) -> dict[str, Any]:
    """``streams`` connections, each streaming request after request, for ``seconds``."""
    url, streams, seconds = job["url"], job["streams"], job["seconds"]
    parts = url.split("/", 3)
    host, port = parts[2].split(":")
    body = json.dumps({**CHAT_BODY, "max_tokens": job["tokens"], "stream": True}).encode()
    request = (
        f"POST /{parts[3]} HTTP/1.1\r\nHost: {parts[2]}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    loop = asyncio.get_running_loop()
    stats = {"chunks": 0, "completed": 0}
    began = loop.time()
    deadline = began + seconds
    done: list[asyncio.Future[None]] = []
    transports = []
    for _ in range(streams):
        future: asyncio.Future[None] = loop.create_future()
        counter = _SseCounter(request=request, deadline=deadline, stats=stats, done=future)
        transport, _protocol = await loop.create_connection(counter, host, int(port))
        done.append(future)
        transports.append(transport)
    await asyncio.sleep(max(0.0, deadline - loop.time()))
    chunks, elapsed = stats["chunks"], loop.time() - began
    for transport in transports:
        transport.close()
    await asyncio.wait(done, timeout=5)
    return {"chunks": chunks, "chunks_per_s": chunks / elapsed, "streams_completed": stats["completed"]}


async def load_held(job: dict[str, Any]) -> dict[str, Any]:
    """Open ``count`` cold streaming requests, then watch their heartbeats for ``seconds``."""
    url, count, seconds, interval = job["url"], job["count"], job["seconds"], job["interval"]
    queue_url = job["queue_url"]
    body = json.dumps({**CHAT_BODY, "stream": True}).encode()
    headers = {"Content-Type": "application/json"}
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    opened = 0
    measuring = asyncio.Event()
    stop = asyncio.Event()
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(
        connector=connector, timeout=aiohttp.ClientTimeout(total=None)
    ) as session:

        async def holder() -> None:
            nonlocal opened
            async with session.post(url, data=body, headers=headers) as response:
                opened += 1
                last = None
                while not stop.is_set():
                    line = await response.content.readline()
                    if not line:
                        return
                    if line.startswith(b": keepalive") and measuring.is_set():
                        now = loop.time()
                        if last is not None:
                            lags.append(max(0.0, now - last - interval))
                        last = now

        tasks = []
        ramp_started = loop.time()
        for n in range(count):
            tasks.append(asyncio.create_task(holder()))
            if n % 200 == 199:
                await asyncio.sleep(0.02)  # ramp: do not overflow the listen backlog
        queued = 0
        async with asyncio.timeout(120):
            while queued < count:
                await asyncio.sleep(0.25)
                async with session.get(queue_url) as response:
                    queued = (await response.json())["queued"]
        ramp = loop.time() - ramp_started
        measuring.set()
        await asyncio.sleep(seconds)
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return {
        "held": queued,
        "opened": opened,
        "ramp_s": ramp,
        "worst_lag_ms": max(lags, default=float("nan")) * 1000,
        "p99_lag_ms": reporting.percentile(lags, 99) * 1000,
        "beats": len(lags),
    }


def worker_main(job: dict[str, Any]) -> None:
    raise_fd_limit()
    import uvloop

    kind = job["kind"]
    runner = {"requests": load_requests, "paced": load_paced, "sse": load_sse, "held": load_held}[kind]
    result = uvloop.run(runner(job))
    print(json.dumps(result), flush=True)


def run_worker(job: dict[str, Any], *, timeout: float) -> dict[str, Any]:
    """Run a load job in its own process (the load generator never shares a process with a server)."""
    out = subprocess.run(
        [PYTHON, "-m", "bench.gateway", "--worker", json.dumps(job)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"load worker failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


class HeldWorker:
    """A load process started in the background (holds a full queue while another phase runs)."""

    def __init__(self, job: dict[str, Any]) -> None:
        self.popen = subprocess.Popen(
            [PYTHON, "-m", "bench.gateway", "--worker", json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)


# ---------------------------------------------------------------------------------------------- phases
@contextlib.contextmanager
def measured(pid: int | None) -> Iterator[dict[str, float]]:
    """CPU seconds used by ``pid`` and wall seconds elapsed inside the block."""
    box: dict[str, float] = {}
    cpu0 = cpu_seconds(pid) if pid else 0.0
    wall0 = time.monotonic()
    yield box
    box["cpu"] = (cpu_seconds(pid) if pid else 0.0) - cpu0
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
                result = run_wrk(url, clients=clients, seconds=seconds, tmp=tmp)
            else:
                result = run_worker(
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
            result = run_worker(job, timeout=seconds + 60)
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
            result = run_worker(job, timeout=seconds + 60)
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


def start_gateway(tmp: pathlib.Path, name: str, *, backend: str, extra: list[str]) -> tuple[Process, str]:
    port = free_port()
    process = Process(
        name,
        [
            PYTHON,
            "-m",
            "noctaya",
            "gateway",
            "--backend-url",
            backend,
            "--listen",
            f"127.0.0.1:{port}",
            "--log-level",
            "WARNING",
            *extra,
        ],
        log=tmp / f"{name}.log",
    )
    url = f"http://127.0.0.1:{port}"
    wait_http(url + "/healthz")
    return process, url


def held_phase(tmp: pathlib.Path, *, count: int, seconds: float) -> None:
    dead_backend = f"http://127.0.0.1:{free_port()}"  # nothing listens there: the backend stays cold
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
        idle_rss = rss_mib(process.pid)
        job = {
            "kind": "held",
            "url": url + "/v1/chat/completions",
            "queue_url": url + "/noctaya/queue",
            "count": count,
            "seconds": seconds,
            "interval": HEARTBEAT,
        }
        holder = subprocess.Popen(
            [PYTHON, "-m", "bench.gateway", "--worker", json.dumps(job)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        peak_rss = idle_rss
        while holder.poll() is None:
            peak_rss = max(peak_rss, rss_mib(process.pid))
            time.sleep(0.2)
        stdout, stderr = holder.communicate()
        if holder.returncode != 0:
            raise RuntimeError(f"held worker failed: {stderr[-2000:]}")
        result = json.loads(stdout.strip().splitlines()[-1])
        print(
            reporting.table(
                f"{count:,} cold keepalive requests held ({HEARTBEAT:g}s heartbeat, watched {seconds:g}s)",
                [
                    "held",
                    "ramp s",
                    "gateway RSS idle MiB",
                    "gateway RSS peak MiB",
                    "per request KiB",
                    "worst heartbeat lag ms",
                    "p99 lag ms",
                    "heartbeats seen",
                ],
                [
                    [
                        int(result["held"]),
                        result["ramp_s"],
                        idle_rss,
                        peak_rss,
                        (peak_rss - idle_rss) * 1024 / max(1, result["held"]),
                        result["worst_lag_ms"],
                        result["p99_lag_ms"],
                        int(result["beats"]),
                    ]
                ],
            )
        )
        per_request_mib = (peak_rss - idle_rss) / max(1, result["held"])
        projected = idle_rss + per_request_mib * HELD_GOAL_COUNT
        budget_kib = (HELD_GOAL_MIB - idle_rss) * 1024 / HELD_GOAL_COUNT
        lag_ratio = reporting.ratio(result["worst_lag_ms"], HELD_GOAL_LAG_MS)
        print(
            f"   goal: {HELD_GOAL_COUNT:,} held under {HELD_GOAL_MIB:g} MiB with lag under "
            f"{HELD_GOAL_LAG_MS:g} ms; peak at {HELD_GOAL_COUNT:,} "
            f"{'measured' if result['held'] == HELD_GOAL_COUNT else 'projected'} {projected:.1f} MiB "
            f"({reporting.ratio(projected, HELD_GOAL_MIB)} of goal; budget at this idle RSS "
            f"{budget_kib:.1f} KiB/request), worst lag {lag_ratio} of goal"
        )
    finally:
        process.stop()


def reject_phase(tmp: pathlib.Path, *, seconds: float, client: str, nginx_reject: int | None) -> None:
    dead_backend = f"http://127.0.0.1:{free_port()}"
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
    holder = HeldWorker(
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
                    result = run_wrk(base + "/v1/chat/completions", clients=64, seconds=seconds, tmp=tmp)
                else:
                    result = run_worker(
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
        worker_main(json.loads(args.worker))
        return 0
    raise_fd_limit()
    seconds = 2.0 if args.quick else 5.0
    with tempfile.TemporaryDirectory(prefix="noctaya-bench-") as tmp_name:
        tmp = pathlib.Path(tmp_name)
        backend_port = free_port()
        engine = Process(
            "engine",
            [PYTHON, "-m", "noctaya.dev.fake_engine", "--port", str(backend_port), "--tokens", "256"],
            log=tmp / "engine.log",
        )
        processes = [engine]
        try:
            backend = f"http://127.0.0.1:{backend_port}"
            wait_http(backend + "/health")
            gateway, gateway_url = start_gateway(
                tmp, "gateway", backend=backend, extra=["--max-in-flight", "2000", "--max-queue", "1000"]
            )
            processes.append(gateway)
            wait_http(gateway_url + "/noctaya/queue", ready_key="backendReady")
            nginx = start_nginx(tmp, backend=backend_port)
            targets: dict[str, tuple[str, int | None]] = {
                "direct": (backend, None),
                "gateway": (gateway_url, gateway.pid),
            }
            nginx_reject = None
            if nginx is not None:
                nginx_process, nginx_port, nginx_reject = nginx
                processes.append(nginx_process)
                targets["nginx"] = (f"http://127.0.0.1:{nginx_port}", nginx_worker_pid(nginx_process))
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
            for process in reversed(processes):
                process.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
