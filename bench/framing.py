"""The chunked relay's cost per chunk, against llhttp decoding the same reads, in one run.

    .venv/bin/python -m bench.framing [--reads N] [--size BYTES]

An event stream relayed from the backend pool comes as one chunk per read (one event, e.g. 150
bytes). The gateway passes such a body on as it came, its framing followed by
``noctaya.gateway.chunked.Framing``. Measured per chunk, in this process, all on the same chunks:

1. ``Framing.feed``, one whole chunk a read (the usual read of a relayed stream);
2. ``Framing.feed``, two whole chunks a read;
3. ``Framing.feed``, 64 whole chunks a read (a backend writing faster than the gateway reads: the
   reads are checked all at once);
4. ``Framing.feed``, 64 chunks a read, each read ending one byte into the next chunk's size line
   (such reads are followed chunk by chunk: what every many-chunk read cost before);
5. the baseline: llhttp (aiohttp's response parser, as the pool runs it) decoding each read into
   its ``StreamReader``, the chunk read back and framed again, which is what a relay that decodes
   pays (the relay did this before chunked bodies passed as they came).

Ratios are to the baseline; the machine is shared and noisy, so the rows run interleaved, 5 rounds,
and the best round of each is printed.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import time
from collections.abc import Callable

from aiohttp import base_protocol, http_parser

from noctaya.gateway import chunked

ROUNDS = 5
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def event(size: int) -> bytes:
    """An SSE event of ``size`` bytes, framed as one chunk."""
    data = b"data: " + b"x" * max(0, size - 8) + b"\n\n"
    return b"%x\r\n%b\r\n" % (len(data), data)


def one_chunk_a_read(reads: list[bytes]) -> Callable[[], int]:
    def run() -> int:
        framing = chunked.Framing()
        passed = 0
        for read in reads:
            passed += len(framing.feed(read))
        return passed

    return run


def two_chunks_a_read(reads: list[bytes]) -> Callable[[], int]:
    pairs = [reads[i] + reads[i + 1] for i in range(0, len(reads) - 1, 2)]

    def run() -> int:
        framing = chunked.Framing()
        passed = 0
        for read in pairs:
            passed += len(framing.feed(read))
        return passed

    return run


def many_chunks_a_read(reads: list[bytes], *, per_read: int, shift: int) -> Callable[[], int]:
    """``per_read`` chunks a read, each read's end moved ``shift`` bytes into the next chunk."""
    body = b"".join(reads)
    size = len(reads[0]) * per_read
    cuts = [0, *range(size + shift, len(body), size), len(body)]
    pieces = [body[a:b] for a, b in itertools.pairwise(cuts)]

    def run() -> int:
        framing = chunked.Framing()
        passed = 0
        for read in pieces:
            passed += len(framing.feed(read))
        return passed

    return run


def decoded(reads: list[bytes], loop: asyncio.AbstractEventLoop) -> Callable[[], int]:
    def run() -> int:
        parser = http_parser.HttpResponseParser(
            base_protocol.BaseProtocol(loop), loop, 2**16, response_with_body=True, auto_decompress=False
        )
        ((_, payload),), _, _ = parser.feed_data(HEAD)
        passed = 0
        for read in reads:
            parser.feed_data(read)
            data = payload.read_nowait()
            passed += len(b"%x\r\n%b\r\n" % (len(data), data))
        return passed

    return run


def per_chunk(run: Callable[[], int], chunks: int) -> float:
    """Microseconds per chunk of one pass of ``run`` (every row passes the same ``chunks``)."""
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) / chunks * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--reads", type=int, default=200_000, help="reads per pass (1 to 10,000,000)")
    parser.add_argument("--size", type=int, default=150, help="bytes of an event (16 to 65,536)")
    args = parser.parse_args()
    if not 1 <= args.reads <= 10_000_000:
        parser.error("--reads: from 1 to 10,000,000")
    if not 16 <= args.size <= 65_536:
        parser.error("--size: from 16 to 65,536")
    reads = [event(args.size)] * (args.reads + args.reads % 2)
    loop = asyncio.new_event_loop()
    try:
        rows: dict[str, Callable[[], int]] = {
            "raw relay, one whole chunk a read": one_chunk_a_read(reads),
            "raw relay, two chunks a read": two_chunks_a_read(reads),
            "raw relay, 64 whole chunks a read": many_chunks_a_read(reads, per_read=64, shift=0),
            "raw relay, 64 chunks a read, chunk by chunk": many_chunks_a_read(reads, per_read=64, shift=1),
            "llhttp decode and frame again (baseline)": decoded(reads, loop),
        }
        sizes = {name: run() for name, run in rows.items()}  # a warm-up, and a check of what passes
        if len(set(sizes.values())) != 1:
            raise SystemExit(f"the rows passed different byte counts: {sizes}")
        best = {name: float("inf") for name in rows}
        for _ in range(ROUNDS):
            for name, run in rows.items():
                best[name] = min(best[name], per_chunk(run, len(reads)))
    finally:
        loop.close()
    baseline = best["llhttp decode and frame again (baseline)"]
    print(f"{len(reads):,} reads of one {len(reads[0])}-byte chunk; best of {ROUNDS} interleaved rounds")
    print(f"{'path':44} {'us per chunk':>12} {'/ baseline':>10}")
    for name, micros in best.items():
        print(f"{name:44} {micros:12.3f} {micros / baseline:9.2f}x")


if __name__ == "__main__":
    main()
