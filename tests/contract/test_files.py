"""Mounted files read safely (``noctaya.contract.files``).

Aspects: a regular file is read whole up to its limit and one byte more is refused; a FIFO nobody
writes to and a device are refused at once as not regular files, never waited on; a missing file
names the reason; the identity changes when a file is swapped; a read past its wait raises
``TimeoutError``, a caller arriving while it is still late is refused at once, no second read starts
meanwhile, and the next caller after it ends gets its result.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import threading

import pytest

from noctaya.contract import files


def test_a_regular_file_is_read_up_to_its_limit(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "key"
    path.write_bytes(b"x" * 100)
    assert files.read_regular(path, limit=100) == b"x" * 100
    with pytest.raises(files.FileProblem, match="larger than 99 bytes"):
        files.read_regular(path, limit=99)
    with pytest.raises(files.FileProblem, match="cannot read: No such file"):
        files.read_regular(tmp_path / "missing", limit=100)


@pytest.mark.timeout(10)  # a blocking open of the FIFO would hang here
def test_a_fifo_or_a_device_is_refused_at_once(tmp_path: pathlib.Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in (fifo, pathlib.Path("/dev/zero")):
        with pytest.raises(files.FileProblem, match="not a regular file"):
            files.read_regular(path, limit=100)


def test_a_swapped_file_has_another_identity(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("a: 1\n")
    before = files.identity(path)
    assert files.identity(path) == before
    staged = tmp_path / "staged"
    staged.write_text("a: 1\n")
    os.replace(staged, path)
    assert files.identity(path) != before
    with pytest.raises(files.FileProblem, match="cannot read"):
        files.identity(tmp_path / "missing")


async def test_a_late_read_is_waited_for_once_and_never_doubled() -> None:
    release = threading.Event()
    started = []

    def read() -> str:
        started.append(1)
        release.wait(30)
        return "keys"

    reader = files.Reader(read, timeout=0.05)
    try:
        with pytest.raises(TimeoutError):
            await reader.read()
        late = reader.read()
        with pytest.raises(TimeoutError):
            late.send(None)  # already late: refused on the first step, without waiting at all
        running = reader.busy
        assert running and len(started) == 1
    finally:
        release.set()
    while reader.busy:  # noqa: ASYNC110  (the thread ends on its own: no event on the loop)
        await asyncio.sleep(0.01)
    assert await reader.read() == "keys"  # the late read's result, no second read
    assert len(started) == 1
    assert await reader.read() == "keys" and len(started) == 2  # then a new read per call
