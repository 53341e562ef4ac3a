"""Mounted files, read safely: a Secret key, a ConfigMap file, a certificate.

Every file the data plane reads while it runs is a volume's file that may rotate, and may be anything
an operator (or an attacker with write access to the volume) put there:

- :func:`identity` is what tells a change: device, inode, size and mtime of what the path resolves
  to (Kubernetes swaps a mounted volume's files through a ``..data`` symlink, so a rotation is a new
  inode), stat'ed without opening the file;
- :func:`read_regular` opens the file non-blocking (a FIFO or a device in its place cannot block the
  open), reads it only if it is a regular file, and at most ``limit`` bytes (one more byte read tells
  an oversized file);
- :class:`Reader` runs one such blocking read in a thread with a bounded wait: one read at a time,
  shared by the callers that arrive meanwhile, each waiting at most ``timeout`` from the moment that
  read began; a read still running past it is not waited for again, and none other starts until it
  ends, so a hung volume holds one thread, never one per caller, and never the event loop.

Errors are :class:`FileProblem`, whose message is a phrase for a person that names no content.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Final, Generic, TypeVar

T = TypeVar("T")

READ_TIMEOUT: Final = 2.0
"""How long a caller waits for a file read by default (seconds)."""

Identity = tuple[int, int, int, int]
"""Device, inode, size and mtime (ns) of what a path resolves to."""


class FileProblem(Exception):
    """The file cannot be used; the message says why (``cannot read: …``, ``not a regular file``,
    ``larger than N bytes``), never what it holds."""


def _reason(exc: OSError) -> str:
    return f"cannot read: {exc.strerror or exc}"


def identity(path: str | Path) -> Identity:
    """The :data:`Identity` of what ``path`` resolves to (symlinks followed); :class:`FileProblem`
    when it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError as exc:
        raise FileProblem(_reason(exc)) from None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def read_regular(path: str | Path, *, limit: int) -> bytes:
    """The whole of the regular file ``path``, at most ``limit`` bytes (blocking: call it off the
    event loop where a slow volume matters); :class:`FileProblem` for a path that cannot be opened
    or read, is not a regular file, or holds more than ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise FileProblem(_reason(exc)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileProblem("not a regular file")
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0 and (chunk := os.read(fd, left)):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise FileProblem(_reason(exc)) from None
    finally:
        os.close(fd)
    if left <= 0:
        raise FileProblem(f"larger than {limit} bytes")
    return b"".join(chunks)


class Reader(Generic[T]):
    """``read`` (a blocking function: a file read and what is built from it) run in a thread, one at
    a time, with a bounded wait (see the module docstring)."""

    def __init__(self, read: Callable[[], T], *, timeout: float = READ_TIMEOUT) -> None:
        self.timeout = timeout
        self._read = read
        self._running: asyncio.Future[T] | None = None
        self._since = 0.0

    @property
    def busy(self) -> bool:
        """A read is running (maybe past its wait)."""
        return self._running is not None and not self._running.done()

    async def read(self) -> T:
        """The result of the running read, or of a new one; ``TimeoutError`` when it has not ended
        within ``timeout`` of its start (at once for a read already late), whatever ``read`` raises
        otherwise."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._running is None:
            self._running = loop.run_in_executor(None, self._read)
            self._running.add_done_callback(_retrieved)
            self._since = now
        running = self._running
        remaining = self._since + self.timeout - now
        try:
            if remaining <= 0 and not running.done():
                raise TimeoutError
            return await asyncio.wait_for(asyncio.shield(running), max(remaining, 0.0))
        finally:
            if running.done() and self._running is running:
                self._running = None


def _retrieved(future: asyncio.Future[T]) -> None:
    """A read that ended after every caller stopped waiting: its error is not left unretrieved."""
    if not future.cancelled():
        future.exception()
