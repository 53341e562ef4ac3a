"""The chunked relay's cost per chunk, against llhttp decoding the same reads, in one run.

    .venv/bin/python -m bench.framing [--reads N] [--size BYTES] [--compare-with TREE]

An event stream relayed from the backend pool comes as one chunk per read (one event, e.g. 150
bytes). The gateway passes such a body on as it came, its framing followed by
``noctaya.gateway.chunked.Framing``. Measured per chunk, in this process, all on the same chunks:

1. ``Framing.feed``, one whole chunk a read (the usual read of a relayed stream);
2. ``Framing.feed``, two whole chunks a read;
3. ``Framing.feed``, 6 and 64 whole chunks a read (a backend writing faster than the gateway reads:
   the reads are checked all at once; about 6 a read is what the gateway reads in ``bench.gateway``'s
   SSE phase, counted with ``perf stat -e syscalls:sys_enter_read``);
4. ``Framing.feed``, 64 chunks a read, each read ending one byte into the next chunk's size line
   (such reads are followed chunk by chunk: what every many-chunk read cost before);
5. the baseline: llhttp (aiohttp's response parser, as the pool runs it) decoding each read into
   its ``StreamReader``, the chunk read back and framed again, which is what a relay that decodes
   pays (the relay did this before chunked bodies passed as they came).

Ratios are to the baseline; the machine is shared and noisy, so the rows run interleaved, 5 rounds,
and the best round of each is printed. ``--compare-with TREE`` adds rows 1 to 4 for another
revision's ``Framing`` (its ``noctaya/gateway/chunked.py``, loaded beside this one) in the same
rounds, and prints each row's ratio to it.

``--instructions`` counts instead of timing: each ``Framing`` (this one, and the compared one when
given) is fed 20,000 reads of 1, 6 and 64 whole chunks in a process of its own under valgrind's
callgrind, and once 0 reads; the difference per chunk is what the feeding costs in instructions
executed, the same from run to run whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import itertools
import pathlib
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Protocol

from aiohttp import base_protocol, http_parser

from noctaya.gateway import chunked

ROUNDS = 5
COMPARED = " (compared)"


class Feeder(Protocol):
    def feed(self, data: bytes) -> bytes: ...


Make = Callable[[], Feeder]
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def event(size: int) -> bytes:
    """An SSE event of ``size`` bytes, framed as one chunk."""
    data = b"data: " + b"x" * max(0, size - 8) + b"\n\n"
    return b"%x\r\n%b\r\n" % (len(data), data)


def one_chunk_a_read(reads: list[bytes], make: Make = chunked.Framing) -> Callable[[], int]:
    def run() -> int:
        framing = make()
        passed = 0
        for read in reads:
            passed += len(framing.feed(read))
        return passed

    return run


def two_chunks_a_read(reads: list[bytes], make: Make = chunked.Framing) -> Callable[[], int]:
    pairs = [reads[i] + reads[i + 1] for i in range(0, len(reads) - 1, 2)]

    def run() -> int:
        framing = make()
        passed = 0
        for read in pairs:
            passed += len(framing.feed(read))
        return passed

    return run


def many_chunks_a_read(
    reads: list[bytes], *, per_read: int, shift: int, make: Make = chunked.Framing
) -> Callable[[], int]:
    """``per_read`` chunks a read, each read's end moved ``shift`` bytes into the next chunk."""
    body = b"".join(reads)
    size = len(reads[0]) * per_read
    cuts = [0, *range(size + shift, len(body), size), len(body)]
    pieces = [body[a:b] for a, b in itertools.pairwise(cuts)]

    def run() -> int:
        framing = make()
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


def compared_framing(tree: pathlib.Path) -> Make:
    """The ``Framing`` of another source tree's ``noctaya/gateway/chunked.py``, loaded beside ours."""
    path = tree / "noctaya" / "gateway" / "chunked.py"
    if not path.is_file():
        raise SystemExit(f"--compare-with: {tree} has no noctaya/gateway/chunked.py")
    spec = importlib.util.spec_from_file_location("compared_chunked", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    framing: Make = module.Framing
    return framing


def framing_rows(reads: list[bytes], make: Make, suffix: str = "") -> dict[str, Callable[[], int]]:
    """Rows 1 to 4 for ``make``'s framing, their names ending in ``suffix``."""
    return {
        f"raw relay, one whole chunk a read{suffix}": one_chunk_a_read(reads, make),
        f"raw relay, two chunks a read{suffix}": two_chunks_a_read(reads, make),
        f"raw relay, 6 whole chunks a read{suffix}": many_chunks_a_read(
            reads, per_read=6, shift=0, make=make
        ),
        f"raw relay, 64 whole chunks a read{suffix}": many_chunks_a_read(
            reads, per_read=64, shift=0, make=make
        ),
        f"raw relay, 64 chunks a read, chunk by chunk{suffix}": many_chunks_a_read(
            reads, per_read=64, shift=1, make=make
        ),
    }


def per_chunk(run: Callable[[], int], chunks: int) -> float:
    """Microseconds per chunk of one pass of ``run`` (every row passes the same ``chunks``)."""
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) / chunks * 1e6


COUNTED_READS = 20_000
COUNTED_CHUNKS = (1, 6, 64)


def feed(make: Make, *, per_read: int, reads: int, size: int) -> None:
    """Feed ``reads`` reads of ``per_read`` whole chunks to one framing (the counted work)."""
    data = event(size) * per_read
    framing = make()
    for _ in range(reads):
        framing.feed(data)


def instructions(*, per_read: int, reads: int, size: int, tree: pathlib.Path | None) -> int:
    """Instructions callgrind counts in a process feeding ``reads`` reads (see :func:`feed`)."""
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "bench.framing",
        "--feed",
        str(per_read),
        "--reads",
        str(reads),
        "--size",
        str(size),
    ]
    if tree is not None:
        command += ["--compare-with", str(tree)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    counted = re.search(r"Collected : (\d+)", done.stderr)
    if counted is None:
        raise SystemExit(f"callgrind printed no count:\n{done.stderr[-2000:]}")
    return int(counted.group(1))


def count_instructions(*, size: int, compared: pathlib.Path | None) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions: valgrind is not installed (apt-get install valgrind)")
    trees: dict[str, pathlib.Path | None] = {"this revision": None}
    if compared is not None:
        compared_framing(compared)  # a tree without the module fails here, before any count
        trees["compared"] = compared
    idle = {name: instructions(per_read=1, reads=0, size=size, tree=tree) for name, tree in trees.items()}
    per_chunk_counts: dict[tuple[str, int], float] = {}
    for per_read in COUNTED_CHUNKS:
        for name, tree in trees.items():
            busy = instructions(per_read=per_read, reads=COUNTED_READS, size=size, tree=tree)
            per_chunk_counts[(name, per_read)] = (busy - idle[name]) / (COUNTED_READS * per_read)
    print(
        f"instructions per chunk (callgrind), {COUNTED_READS:,} reads of whole {len(event(size))}-byte chunks"
    )
    print(
        f"{'chunks a read':>13} "
        + " ".join(f"{name:>14}" for name in trees)
        + ("  this / compared" if compared else "")
    )
    for per_read in COUNTED_CHUNKS:
        counts = [per_chunk_counts[(name, per_read)] for name in trees]
        line = f"{per_read:13} " + " ".join(f"{count:14,.0f}" for count in counts)
        if compared is not None:
            line += f"  {counts[0] / counts[1]:15.2f}x"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--reads", type=int, default=200_000, help="reads per pass (1 to 10,000,000)")
    parser.add_argument("--size", type=int, default=150, help="bytes of an event (16 to 65,536)")
    parser.add_argument(
        "--compare-with",
        type=pathlib.Path,
        help="another revision's source tree: its Framing runs beside this one's, in the same rounds",
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per chunk under valgrind's callgrind instead of timing",
    )
    parser.add_argument("--feed", type=int, metavar="CHUNKS", help=argparse.SUPPRESS)  # a counted process
    args = parser.parse_args()
    if args.feed is not None:
        make = chunked.Framing if args.compare_with is None else compared_framing(args.compare_with)
        feed(make, per_read=args.feed, reads=args.reads, size=args.size)
        return
    if args.instructions:
        if not 16 <= args.size <= 65_536:
            parser.error("--size: from 16 to 65,536")
        count_instructions(size=args.size, compared=args.compare_with)
        return
    if not 1 <= args.reads <= 10_000_000:
        parser.error("--reads: from 1 to 10,000,000")
    if not 16 <= args.size <= 65_536:
        parser.error("--size: from 16 to 65,536")
    reads = [event(args.size)] * (args.reads + args.reads % 2)
    loop = asyncio.new_event_loop()
    try:
        rows = framing_rows(reads, chunked.Framing)
        if args.compare_with is not None:
            rows |= framing_rows(reads, compared_framing(args.compare_with), COMPARED)
        rows["llhttp decode and frame again (baseline)"] = decoded(reads, loop)
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
    compared = args.compare_with is not None
    print(
        f"{'path':55} {'us per chunk':>12} {'/ baseline':>10}" + (f" {'/ compared':>10}" if compared else "")
    )
    for name, micros in best.items():
        line = f"{name:55} {micros:12.3f} {micros / baseline:9.2f}x"
        if compared and name + COMPARED in best:
            line += f" {micros / best[name + COMPARED]:9.2f}x"
        print(line)


if __name__ == "__main__":
    main()
