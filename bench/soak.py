"""Soak: mixed warm, cold, streaming, WebSocket and hostile traffic against ``noctaya dev`` for a while.

    .venv/bin/python -m bench.soak [--duration 30m] [--concurrency 8] [--sample-every 1m]

``noctaya dev`` runs as a child process (the gateway and the fake engine, a short cooldown so the
backend scales to zero between bursts and cold starts recur). Clients, in this process: warm and
streaming completions, streams abandoned after their first event, WebSocket echo sessions (some
left open until the idle timeout, some abandoned), bursts after idle pauses (cold starts), and
hostile traffic (malformed requests, connections flooding NUL bytes after a parse error, heads that
never end from rotating loopback addresses, header values that are not UTF-8, paths with encoded
control characters, ``OPTIONS *`` and ``CONNECT``, oversized and mis-encoded bodies, 16 MiB JSON
arrays on the cold path). The warm-up runs one round of every traffic kind (hostile ones included),
a cold start, then mixed traffic for a while, and waits until every connection of it has closed: the
baseline is taken after that, so buffers and code paths that are allocated once are in it. The
gateway's RSS, open file descriptors, asyncio tasks and connections are printed every
``--sample-every`` against that baseline, then at the end (after the last connections closed), with
the least-squares RSS slope over the run and over its second half, client-side outcomes by traffic
kind (client errors too) and the gateway's rejections by reason. The check that matters: RSS growth
from the start to the end under 5 MiB, fds and tasks back to their start level (printed as
PASS/FAIL; the exit status is 1 on FAIL).

``--trace-allocations DIR`` starts ``tracemalloc`` in the gateway at the baseline (by a signal, see
``bench.allocations``) and prints, at the end, the allocation sites whose blocks made after the
baseline are still alive, largest first: a leak shows there by the line that allocates it. The RSS
figures of such a run include tracemalloc's own memory.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import collections.abc
import contextlib
import gzip
import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile
import time

import aiohttp

from bench import allocations, processes
from noctaya.contract import fields

HOSTILE = [
    b"GARBAGE\r\n\r\n",
    b"GET /v1/x%0ay%0d%1b%07 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    b"CONNECT host:443 HTTP/1.1\r\nHost: host:443\r\n\r\n",
    b"GET /v1/models HTTP/1.1\r\nHost: x\r\nX-A: caf\xe9 \xff\r\nConnection: close\r\n\r\n",
    b"GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n",
    b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: x\r\n\r\n",
]
HOSTILE_KINDS = (
    "malformed", "slow-head", "bad-gzip", "gzip-bomb", "big-array", "garbage", "rotating-holds",
)  # fmt: skip
CHAT = {"model": "fake", "messages": [{"role": "user", "content": "hello"}]}


def fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


async def scrape(session: aiohttp.ClientSession, url: str) -> dict[str, float]:
    async with session.get(url + "/metrics") as response:
        text = await response.text()
    values: dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            values[name] = float(value)
    return values


async def figures(session: aiohttp.ClientSession, url: str, pid: int) -> dict[str, float]:
    metrics = await scrape(session, url)
    return {
        "rss_mib": processes.rss_mib(pid),
        "fds": fds(pid),
        "tasks": metrics.get("noctaya_gateway_event_loop_tasks", float("nan")),
        "connections": metrics.get("noctaya_gateway_connections", float("nan")),
    }


class Traffic:
    def __init__(self, url: str, host: str, port: int, outcomes: collections.Counter[str]) -> None:
        self.url, self.host, self.port, self.outcomes = url, host, port, outcomes

    def count(self, kind: str, what: object) -> None:
        self.outcomes[f"{kind}:{what}"] += 1

    async def warm(self, session: aiohttp.ClientSession) -> None:
        async with session.post(self.url + "/v1/chat/completions", json=CHAT) as response:
            await response.read()
            self.count("complete", response.status)

    async def stream(self, session: aiohttp.ClientSession) -> None:
        async with session.post(self.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
            await response.read()
            self.count("stream", response.status)

    async def aborted(self, session: aiohttp.ClientSession) -> None:
        async with session.post(self.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
            await response.content.readline()
            self.count("aborted", response.status)
            response.close()

    async def websocket(self, session: aiohttp.ClientSession, rng: random.Random) -> None:
        async with session.ws_connect(self.url.replace("http", "ws", 1) + "/v1/realtime") as socket:
            for index in range(rng.randrange(1, 20)):
                await socket.send_str(f"hello {index}")
                message = await socket.receive(timeout=30)
                if message.type is not aiohttp.WSMsgType.TEXT:
                    self.count("websocket", message.type.name)
                    return
            if rng.random() < 0.2:  # left open and silent for a while, then abandoned
                await asyncio.sleep(rng.uniform(1, 5))
            self.count("websocket", "echoed")

    async def garbage(self) -> None:
        """NUL bytes in 256 KiB chunks until the gateway closes the connection (at most 4 MiB)."""
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            with contextlib.suppress(ConnectionError):
                for _ in range(16):
                    writer.write(b"\0" * (256 << 10))
                    await writer.drain()
            with contextlib.suppress(ConnectionError, TimeoutError):
                async with asyncio.timeout(5):
                    await reader.read()
            self.count("garbage", "closed")
        finally:
            writer.close()

    async def rotating_holds(self, rng: random.Random) -> None:
        """Heads that never end from several loopback addresses, held until the header timeout."""
        writers = []
        try:
            for index in range(rng.randrange(4, 24)):
                _, writer = await asyncio.open_connection(
                    self.host, self.port, local_addr=(f"127.0.0.{2 + index % 8}", 0)
                )
                writer.write(b"GET /v1/models HTTP/1.1\r\nHost: x\r\n")
                writers.append(writer)
            await asyncio.sleep(rng.uniform(1, 4))
            self.count("rotating-holds", "held")
        finally:
            for writer in writers:
                writer.close()

    async def raw(self, data: bytes, *, wait: float = 5.0) -> bytes:
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            writer.write(data)
            with contextlib.suppress(TimeoutError, ConnectionError):
                async with asyncio.timeout(wait):
                    return await reader.read(4096)
            return b""
        finally:
            writer.close()

    async def hostile(
        self, session: aiohttp.ClientSession, rng: random.Random, *, kind: int | None = None
    ) -> None:
        kind = rng.randrange(len(HOSTILE_KINDS)) if kind is None else kind
        if kind == 5:
            await self.garbage()
        elif kind == 6:
            await self.rotating_holds(rng)
        elif kind == 0:
            reply = await self.raw(rng.choice(HOSTILE))
            self.count("malformed", reply.split(b" ", 2)[1].decode() if reply.count(b" ") >= 2 else "closed")
        elif kind == 1:  # a head that never ends: the header timeout closes it
            reply = await self.raw(b"GET /healthz HTTP/1.1\r\nHost: x\r\n", wait=15)
            self.count("slow-head", "closed" if not reply else "answered")
        elif kind == 2:
            headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
            async with session.post(self.url + "/v1/chat/completions", data=b"nope", headers=headers) as r:
                self.count("bad-gzip", r.status)
        elif kind == 3:
            bomb = gzip.compress(b"\0" * (64 << 20))
            headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
            async with session.post(self.url + "/v1/chat/completions", data=bomb, headers=headers) as r:
                self.count("gzip-bomb", r.status)
        else:
            body = b"[" + b"{}," * (4 << 20) + b"{}]"
            headers = {"Content-Type": "application/json"}
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    async with session.post(
                        self.url + "/v1/chat/completions", data=body, headers=headers
                    ) as r:
                        self.count("big-array", r.status)
                        return
            self.count("big-array", "held-then-left")


async def run(args: argparse.Namespace, url: str, port: int, gateway_pid: int) -> int:
    outcomes: collections.Counter[str] = collections.Counter()
    traffic = Traffic(url, "127.0.0.1", port, outcomes)
    rng = random.Random(7)
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        loop = asyncio.get_running_loop()

        async def worker(until: float) -> None:
            while loop.time() < until:
                pick = rng.random()
                label = "idle"
                try:
                    if pick < 0.3:
                        label = "complete"
                        await traffic.warm(session)
                    elif pick < 0.5:
                        label = "stream"
                        await traffic.stream(session)
                    elif pick < 0.62:
                        label = "aborted"
                        await traffic.aborted(session)
                    elif pick < 0.72:
                        label = "websocket"
                        await traffic.websocket(session, rng)
                    elif pick < 0.9:
                        kind = rng.randrange(len(HOSTILE_KINDS))
                        label = HOSTILE_KINDS[kind]
                        await traffic.hostile(session, rng, kind=kind)
                    else:  # go idle, so the backend scales to zero and the next request is cold
                        await asyncio.sleep(rng.uniform(3, 6))
                except (aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
                    outcomes[f"{label}:client-error:{type(exc).__name__}"] += 1

        async def guarded(label: str, step: collections.abc.Awaitable[None]) -> None:
            try:
                await step
            except (aiohttp.ClientError, TimeoutError, ConnectionError) as exc:
                outcomes[f"{label}:client-error:{type(exc).__name__}"] += 1

        warmed = loop.time()
        # one round of every traffic kind, hostile ones included, so every code path and buffer
        # size has run once before the baseline; then a cold start; then mixed traffic for a while
        await asyncio.gather(
            guarded("complete", traffic.warm(session)),
            guarded("stream", traffic.stream(session)),
            guarded("aborted", traffic.aborted(session)),
            guarded("websocket", traffic.websocket(session, rng)),
            *(
                guarded(name, traffic.hostile(session, rng, kind=kind))
                for kind, name in enumerate(HOSTILE_KINDS)
            ),
        )
        await asyncio.sleep(6)  # idle past the cooldown: the next request is a cold start
        await guarded("complete", traffic.warm(session))
        mixed = min(20.0, args.duration / 4)
        await asyncio.gather(*(worker(loop.time() + mixed) for _ in range(args.concurrency)))
        await asyncio.sleep(12)  # every slow head closed, every lease and stream over
        warmup = loop.time() - warmed
        start = await figures(session, url, gateway_pid)
        snapshots = 0
        if args.trace_allocations:
            os.kill(gateway_pid, signal.SIGUSR1)  # tracing starts here: the warm-up is not traced
            snapshots += 1
        started = time.monotonic()
        keys = ("rss_mib", "fds", "tasks", "connections")
        print(f"{'elapsed':>8}" + "".join(f"{key:>18}" for key in keys), flush=True)

        def row(label: str, now: dict[str, float]) -> None:
            cells = "".join(f"{now[k]:>9.1f} ({now[k] - start[k]:>+6.1f})" for k in keys)
            print(f"{label:>8}{cells}", flush=True)

        row("start", start)
        series = [(0.0, start["rss_mib"])]

        async def sample(until: float) -> None:
            while loop.time() + args.sample_every <= until:
                await asyncio.sleep(args.sample_every)
                with contextlib.suppress(aiohttp.ClientError, TimeoutError, ConnectionError):
                    now = await figures(session, url, gateway_pid)
                    series.append((time.monotonic() - started, now["rss_mib"]))
                    row(f"{series[-1][0]:.0f}s", now)

        until = loop.time() + args.duration
        await asyncio.gather(sample(until), *(worker(until) for _ in range(args.concurrency)))
        await asyncio.sleep(12)  # every slow head closed, every lease and stream over
        end = await figures(session, url, gateway_pid)
        series.append((time.monotonic() - started, end["rss_mib"]))
        row("end", end)
        if args.trace_allocations:
            os.kill(gateway_pid, signal.SIGUSR1)
            snapshots += 1
        final = await scrape(session, url)
        rejections = {
            k.split('reason="')[1].rstrip('"}'): v
            for k, v in final.items()
            if k.startswith("noctaya_gateway_rejections_total{") and v
        }
        cold_starts = final.get('noctaya_gateway_activation_events_total{event="started"}', 0.0)
    elapsed = time.monotonic() - started
    print(f"soak: {elapsed:.0f}s of mixed traffic after {warmup:.0f}s warm-up, {args.concurrency} clients")
    print(f"{'':14}{'start':>14}{'end':>10}{'change':>10}")
    for key in keys:
        print(f"{key:14}{start[key]:>14.1f}{end[key]:>10.1f}{end[key] - start[key]:>+10.1f}")
    print("client outcomes:", ", ".join(f"{k}={v}" for k, v in sorted(outcomes.items())))
    print(
        "gateway rejections:",
        ", ".join(f"{k}={v:.0f}" for k, v in sorted(rejections.items())),
    )
    print(f"cold starts (activation leases opened): {cold_starts:.0f}")
    half = [point for point in series if point[0] >= series[-1][0] / 2]
    print(
        f"RSS slope: {slope(series) * 3600:+.1f} MiB/hour over the run, "
        f"{slope(half) * 3600:+.1f} MiB/hour over its second half"
    )
    if args.trace_allocations:
        directory = pathlib.Path(args.trace_allocations)
        last = allocations.snapshot_path(directory, pid=gateway_pid, index=snapshots - 1)
        for _ in range(600):  # the gateway writes the snapshot in its signal handler
            if last.exists():
                break
            await asyncio.sleep(0.1)
        first = allocations.snapshot_path(directory, pid=gateway_pid, index=0)
        print("gateway allocations alive at the end that were made after the start (tracemalloc):")
        print("\n".join(allocations.growth(first, last, top=args.top)))
    ok = (
        end["rss_mib"] - start["rss_mib"] < 5
        and end["fds"] <= start["fds"] + 2
        and end["tasks"] <= start["tasks"] + 2
    )
    print("PASS" if ok else "FAIL", "(RSS growth < 5 MiB, fds and tasks back to their start level)")
    return 0 if ok else 1


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MiB) points, in MiB per second (0 for fewer than two)."""
    if len(points) < 2:
        return 0.0
    mean_t = sum(t for t, _ in points) / len(points)
    mean_v = sum(v for _, v in points) / len(points)
    spread = sum((t - mean_t) ** 2 for t, _ in points)
    return sum((t - mean_t) * (v - mean_v) for t, v in points) / spread if spread else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(prog="bench.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=fields.parse_seconds, default=60.0, help="after warm-up (1m)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument(
        "--sample-every", type=fields.parse_seconds, default=60.0, help="figures printed this often (1m)"
    )
    parser.add_argument(
        "--trace-allocations",
        metavar="DIR",
        help="trace the gateway's allocations from the start (tracemalloc; RSS then includes its cost) "
        "and print the tracebacks that grew; snapshots are written to DIR",
    )
    parser.add_argument(
        "--top", type=int, default=25, help="allocation sites listed with --trace-allocations"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="noctaya-soak-") as name:
        tmp = pathlib.Path(name)
        env = dict(os.environ)
        if args.trace_allocations:
            directory = pathlib.Path(args.trace_allocations).resolve()
            directory.mkdir(parents=True, exist_ok=True)
            args.trace_allocations = str(directory)
            site = allocations.sitecustomize_dir(tmp)
            root = pathlib.Path(__file__).resolve().parent.parent
            env[allocations.ENV] = str(directory)
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(site), str(root), env.get("PYTHONPATH", "")])
            )
        port = processes.reserved_port()
        url = f"http://127.0.0.1:{port}"
        state_file = tmp / "state.json"
        dev = subprocess.Popen(
            [
                processes.PYTHON, "-m", "noctaya", "dev", "--listen", f"127.0.0.1:{port}", "--plain",
                "--cooldown", "3s", "--polling-interval", "1s", "--state-file", str(state_file),
                "--run-dir", str(tmp / "run"), "--max", "2",
            ],
            stdout=(tmp / "dev.log").open("wb"), stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        try:
            processes.wait_http(url + "/healthz", within=60)
            gateway_pid = 0
            for _ in range(200):  # the state file follows within a status period
                with contextlib.suppress(OSError, ValueError, KeyError, IndexError, TypeError):
                    gateway_pid = int(json.loads(state_file.read_text())["gateways"][0]["pid"])
                if gateway_pid:
                    break
                time.sleep(0.05)
            return asyncio.run(run(args, url, port, gateway_pid))
        finally:
            dev.send_signal(signal.SIGTERM)
            try:
                dev.wait(60)
            except subprocess.TimeoutExpired:
                dev.kill()
                dev.wait()


if __name__ == "__main__":
    sys.exit(main())
