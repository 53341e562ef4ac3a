"""``bench.framing``'s rows pass the same bytes (the bench refuses to print otherwise)."""

from __future__ import annotations

import asyncio

from bench import framing


def test_every_row_passes_the_same_bytes_framed_alike() -> None:
    reads = [framing.event(150)] * 130  # the 64-chunk rows: two whole reads and a short last one
    loop = asyncio.new_event_loop()
    try:
        passed = {
            framing.one_chunk_a_read(reads)(),
            framing.two_chunks_a_read(reads)(),
            framing.many_chunks_a_read(reads, per_read=64, shift=0)(),
            framing.many_chunks_a_read(reads, per_read=64, shift=1)(),
            framing.decoded(reads, loop)(),
        }
    finally:
        loop.close()
    assert passed == {sum(map(len, reads))}
    assert framing.event(150).startswith(b"96\r\ndata: ")
