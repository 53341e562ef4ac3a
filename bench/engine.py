"""Latency the gateway adds in front of a real engine: llama.cpp's server, direct vs via the gateway.

    .venv/bin/python -m bench.engine [--samples N] [--tokens N]

One ``llama-server`` (built by ``scripts/llama-server.sh``, serving the tiny generated model of
``tests.engines.model``) and one ``noctaya gateway`` process in front of it (warm, no scaler). Each
sample streams one chat completion of ``--tokens`` tokens (``ignore_eos``), alternating direct and
via the gateway so both see the same machine load; the same aiohttp client reads both (a new
connection per stream on both paths). Per sample:
TTFT (request sent -> first content chunk) and the median gap between content chunks. Printed: p50
and p90 of each, and the gateway's figures as ratios to the direct ones (the baseline, same run).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import pathlib
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import aiohttp

from bench import processes, reporting
from tests.engines import conftest as engines
from tests.engines import model


async def wait_ok(session: aiohttp.ClientSession, url: str, *, within: float) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            async with session.get(url) as response:
                if response.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{url} did not answer 200 within {within}s")
        await asyncio.sleep(0.05)


async def one_stream(session: aiohttp.ClientSession, base: str, *, tokens: int) -> tuple[float, float]:
    """(TTFT, median inter-chunk gap) of one streamed chat completion, in seconds."""
    body = {
        "model": model.MODEL_NAME,
        "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": tokens,
        "stream": True,
        "ignore_eos": True,
    }
    started = time.perf_counter()
    arrivals: list[float] = []
    async with session.post(base + "/v1/chat/completions", json=body) as response:
        response.raise_for_status()
        async for line in response.content:
            if not line.startswith(b"data: ") or line.strip() == b"data: [DONE]":
                continue
            chunk = json.loads(line[6:])
            if chunk.get("choices") and chunk["choices"][0].get("delta", {}).get("content"):
                arrivals.append(time.perf_counter())
    if len(arrivals) < 2:
        raise RuntimeError(f"only {len(arrivals)} content chunks from {base}")
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    return arrivals[0] - started, statistics.median(gaps)


def start_gateway(backend: str, workdir: pathlib.Path) -> tuple[subprocess.Popen[bytes], str]:
    log = workdir / "gateway.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "noctaya",
                "gateway",
                "--backend-url",
                backend,
                "--listen",
                "127.0.0.1:0",
                "--no-scaler",
                "--log-level",
                "INFO",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"gateway listening on (http://[\d.]+:\d+)", log.read_text())
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("the gateway did not start:\n" + log.read_text()[-2000:])


async def run(*, samples: int, tokens: int) -> str:
    binary = engines.find_llama_server()
    with tempfile.TemporaryDirectory(prefix="noctaya-bench-engine-") as tmp:
        workdir = pathlib.Path(tmp)
        gguf = model.write_model(workdir / "tiny.gguf")
        port = processes.reserved_port()  # held for the run; llama.cpp's server binds it (SO_REUSEADDR)
        command = engines.server_command(binary=binary, model_path=gguf, port=str(port))
        with (workdir / "llama.log").open("wb") as out:
            engine = subprocess.Popen(  # noqa: ASYNC220  (started once, before any measurement)
                command, shell=True, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        direct = f"http://127.0.0.1:{port}"
        gateway: subprocess.Popen[bytes] | None = None
        try:
            # a new connection per stream on both paths: llama.cpp's server closes a keep-alive
            # connection after a stream, and the client must not race it
            async with aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=120), connector=aiohttp.TCPConnector(force_close=True)
            ) as session:
                await wait_ok(session, direct + "/health", within=60)
                gateway, via = start_gateway(direct, workdir)
                await wait_ok(session, via + "/healthz", within=30)
                await one_stream(session, via, tokens=tokens)  # warm: readiness known, pools filled
                await one_stream(session, direct, tokens=tokens)
                results: dict[str, list[tuple[float, float]]] = {"direct": [], "gateway": []}
                for _ in range(samples):
                    results["direct"].append(await one_stream(session, direct, tokens=tokens))
                    results["gateway"].append(await one_stream(session, via, tokens=tokens))
        finally:
            if gateway is not None:
                gateway.send_signal(signal.SIGTERM)
                gateway.wait(timeout=30)
            os.killpg(engine.pid, signal.SIGTERM)
            engine.wait(timeout=30)
    rows = []
    base = {
        what: (
            reporting.percentile([s[0] for s in results["direct"]], q),
            reporting.percentile([s[1] for s in results["direct"]], q),
        )
        for what, q in (("p50", 50), ("p90", 90))
    }
    for name in ("direct", "gateway"):
        for what, q in (("p50", 50), ("p90", 90)):
            ttft = reporting.percentile([s[0] for s in results[name]], q)
            gap = reporting.percentile([s[1] for s in results[name]], q)
            rows.append(
                (
                    name,
                    what,
                    ttft * 1000,
                    reporting.ratio(ttft, base[what][0]),
                    gap * 1000,
                    reporting.ratio(gap, base[what][1]),
                )
            )
    return reporting.table(
        f"llama.cpp server, {samples} streams of {tokens} tokens each way (ratios: gateway / direct)",
        ("path", "pct", "TTFT ms", "TTFT ratio", "inter-chunk ms", "inter-chunk ratio"),
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=48)
    args = parser.parse_args()
    print(asyncio.run(run(samples=args.samples, tokens=args.tokens)))


if __name__ == "__main__":
    main()
