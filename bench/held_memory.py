"""Where the memory of held cold requests goes: a tracemalloc diff around holding N requests.

    .venv/bin/python -m bench.held_memory [--held 2000] [--frames 12] [--top 25]

The gateway runs in this process (same runner settings as ``noctaya gateway``, on uvloop) in front of
a backend that is down, so every request stays queued; the load runs in its own process (the ``held``
job of ``bench.load``: streaming requests that wait for heartbeats). Two snapshots are taken,
idle and with ``--held`` requests queued; the difference is printed grouped by allocation traceback
(the gateway's own frames first, so a line names the code that made the objects) and by file, with
the RSS growth next to the traced bytes. Figures are per held request. Tracing slows the process and
adds its own bookkeeping to RSS: for the headline RSS figure use ``bench.gateway --phases held``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import pathlib
import sys
import tracemalloc

import uvloop

from bench import gateway as gateway_bench
from bench import load, processes, reporting
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import app as app_
from noctaya.gateway import testing


def _site(traceback: tracemalloc.Traceback, *, depth: int = 3) -> str:
    """The innermost ``depth`` frames of an allocation, shortened (innermost first)."""
    names = []
    for frame in list(reversed(traceback))[:depth]:  # iteration runs oldest call first
        short = frame.filename
        for anchor in ("site-packages", "python3.11", "main"):
            short = short.rsplit(os.sep + anchor + os.sep, 1)[-1]
        names.append(f"{short}:{frame.lineno}")
    return " < ".join(names)


async def measure(*, held: int, top: int) -> None:
    config = gateway_contract.build_config(
        {
            "backendUrl": f"http://127.0.0.1:{processes.reserved_port()}",  # nothing listens: cold
            "maxQueue": held,
            "maxConnections": held + 64,  # one peer (the load process) holds them all
            "maxConnectionsPerPeer": held + 64,
            "heartbeatInterval": f"{gateway_bench.HEARTBEAT:g}s",
            "activationTimeout": "30m",
            "scaler": None,
        }
    )
    app = app_.make_app(config)
    running = await testing.serve_gateway(app)
    try:
        gc.collect()
        gc.freeze()  # as ``noctaya gateway`` does after start
        await asyncio.sleep(0.5)
        rss0 = processes.rss_mib(os.getpid())
        before = tracemalloc.take_snapshot()
        job = {
            "kind": "held",
            "url": running.url + "/v1/chat/completions",
            "queue_url": running.url + "/noctaya/queue",
            "count": held,
            "seconds": 3.0,
            "interval": gateway_bench.HEARTBEAT,
        }
        worker = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.load",
            json.dumps(job),
            stdout=asyncio.subprocess.DEVNULL,
        )
        try:
            await running.wait_for(lambda: running.admission.queued >= held, within=120)
            await asyncio.sleep(1.5)  # a heartbeat round or so, so per-beat objects are included
            gc.collect()
            rss1 = processes.rss_mib(os.getpid())
            after = tracemalloc.take_snapshot()
        finally:
            await worker.wait()
    finally:
        await running.runner.cleanup()
    noise = (tracemalloc.Filter(False, tracemalloc.__file__),)
    diff = after.filter_traces(noise).compare_to(before.filter_traces(noise), "traceback")
    sites: dict[str, list[int]] = {}
    for stat in diff:
        entry = sites.setdefault(_site(stat.traceback), [0, 0])
        entry[0] += stat.size_diff
        entry[1] += stat.count_diff
    total = sum(size for size, _ in sites.values())
    rows = [
        [site[:110], size / held, count / held]
        for site, (size, count) in sorted(sites.items(), key=lambda item: -item[1][0])[:top]
    ]
    print(
        reporting.table(
            f"traced growth per held request, by allocation site ({held:,} held)",
            ["site (innermost first)", "bytes/request", "blocks/request"],
            rows,
        )
    )
    by_file: dict[str, int] = {}
    for stat in after.filter_traces(noise).compare_to(before.filter_traces(noise), "filename"):
        name = pathlib.Path(stat.traceback[0].filename)
        key = f"{name.parent.name}/{name.name}"
        by_file[key] = by_file.get(key, 0) + stat.size_diff
    print(
        reporting.table(
            "traced growth per held request, by file",
            ["file", "bytes/request"],
            [[name, size / held] for name, size in sorted(by_file.items(), key=lambda i: -i[1])[:12]],
        )
    )
    print(
        f"   traced: {total / held / 1024:.2f} KiB/request; "
        f"RSS: {(rss1 - rss0) * 1024 / held:.2f} KiB/request (tracing overhead included)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.held_memory", description=__doc__.split("\n")[0])
    parser.add_argument("--held", type=int, default=2000, help="cold requests to hold")
    parser.add_argument("--frames", type=int, default=12, help="traceback depth recorded")
    parser.add_argument("--top", type=int, default=25, help="allocation sites listed")
    args = parser.parse_args(argv)
    load.raise_fd_limit()
    tracemalloc.start(args.frames)
    uvloop.run(measure(held=args.held, top=args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
