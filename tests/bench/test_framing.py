"""``bench.framing``'s rows pass the same bytes (the bench refuses to print otherwise)."""

from __future__ import annotations

import asyncio
import pathlib
import shutil

import pytest

from bench import framing
from noctaya.gateway import chunked


def test_every_row_passes_the_same_bytes_framed_alike() -> None:
    reads = [framing.event(150)] * 130  # the 64-chunk rows: two whole reads and a short last one
    loop = asyncio.new_event_loop()
    try:
        passed = {
            framing.one_chunk_a_read(reads)(),
            framing.two_chunks_a_read(reads)(),
            framing.many_chunks_a_read(reads, per_read=6, shift=0)(),
            framing.many_chunks_a_read(reads, per_read=64, shift=0)(),
            framing.many_chunks_a_read(reads, per_read=64, shift=1)(),
            framing.decoded(reads, loop)(),
        }
    finally:
        loop.close()
    assert passed == {sum(map(len, reads))}
    assert framing.event(150).startswith(b"96\r\ndata: ")


def test_another_trees_framing_runs_beside_this_ones(tmp_path: pathlib.Path) -> None:
    gateway = tmp_path / "noctaya" / "gateway"
    gateway.mkdir(parents=True)
    shutil.copy(chunked.__file__, gateway / "chunked.py")
    make = framing.compared_framing(tmp_path)
    assert make is not chunked.Framing  # loaded beside ours, not imported again
    reads = [framing.event(150)] * 130
    ours = framing.framing_rows(reads, chunked.Framing)
    theirs = framing.framing_rows(reads, make, framing.COMPARED)
    assert list(theirs) == [name + framing.COMPARED for name in ours]
    assert {run() for run in [*ours.values(), *theirs.values()]} == {sum(map(len, reads))}
    with pytest.raises(SystemExit, match=r"has no noctaya/gateway/chunked\.py"):
        framing.compared_framing(tmp_path / "nothing")


def test_a_counted_process_feeds_whole_chunks_and_counting_needs_valgrind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    fed: list[bytes] = []

    class Recording(chunked.Framing):
        def feed(self, data: bytes) -> bytes:
            fed.append(data)
            return super().feed(data)

    framing.feed(Recording, per_read=6, reads=3, size=150)
    assert fed == [framing.event(150) * 6] * 3
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(SystemExit, match="valgrind is not installed"):
        framing.count_instructions(size=150, compared=tmp_path)
