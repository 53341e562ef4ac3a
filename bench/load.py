"""Load generators of the gateway benchmark; each job runs in a process of its own.

    .venv/bin/python -m bench.load '{"kind": "requests", "url": ..., "clients": 64, "seconds": 5}'

prints one JSON line with the job's figures. Kinds: ``requests`` (closed loop), ``paced`` (a fixed
offered rate), ``sse`` (concurrent streams, events counted in the raw bytes) and ``held`` (cold
streaming requests held open, heartbeat lag measured). ``run_wrk`` drives ``wrk`` instead when it is
installed. The load generator never shares a process with a server it measures.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import pathlib
import re
import resource
import signal
import subprocess
import sys
import time
import typing
from typing import Any

import aiohttp

from bench import processes, reporting

CHAT_BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


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


def held_count(document: object, *, key: str | None) -> int:
    """Requests a server says it holds, from its queue endpoint's JSON: the gateway's
    ``/noctaya/queue`` (``{"queued": n, ...}``, ``key`` None) or KEDA's interceptor's ``/queue``
    (``{"<namespace>/<route>": {"Concurrency": n, "RequestCount": m}}``, ``key`` the route; a route
    not listed yet holds 0)."""
    if not isinstance(document, dict):
        raise ValueError(f"queue: expected a JSON object, got {type(document).__name__}")
    if key is None:
        value = document.get("queued")
        field = "queued"
    else:
        entry = document.get(key, {"Concurrency": 0})
        if not isinstance(entry, dict):
            raise ValueError(f"queue: route {key!r} is not an object")
        value = entry.get("Concurrency")
        field = f"{key}.Concurrency"
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"queue: {field} is not a non-negative integer: {value!r}")
    return value


async def load_held(job: dict[str, Any]) -> dict[str, Any]:
    """Open ``count`` cold streaming requests, then watch their heartbeats for ``seconds``
    (``host``: the Host header to send; ``queue_key``: see :func:`held_count`)."""
    url, count, seconds, interval = job["url"], job["count"], job["seconds"], job["interval"]
    queue_url, queue_key = job["queue_url"], job.get("queue_key")
    body = json.dumps({**CHAT_BODY, "stream": True}).encode()
    headers = {"Content-Type": "application/json"}
    if job.get("host"):
        headers["Host"] = job["host"]
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
                    queued = held_count(await response.json(), key=queue_key)
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
        [processes.PYTHON, "-m", "bench.load", json.dumps(job)],
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
            [processes.PYTHON, "-m", "bench.load", json.dumps(job)],
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


if __name__ == "__main__":
    worker_main(json.loads(sys.argv[1]))
