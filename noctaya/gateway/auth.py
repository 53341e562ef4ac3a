"""Client API keys: ``Authorization: Bearer <key>`` against a key file that follows rotation.

The file is the mounted Secret key. Every proxied request stats it (microseconds, on the loop; a
stat never waits for a writer) and the keys are reread only when the file's identity (inode, size,
mtime) changed, so rotation takes effect on the next request without a restart. The reread runs off
the event loop, in one thread at a time, within :data:`READ_TIMEOUT`: a file on a hung volume delays
no other client, and requests arriving meanwhile are checked against the keys read last (none at
first: deny). Only a regular file is read (opened non-blocking, then checked), so a FIFO or a device
in its place cannot freeze anything. The read is bounded (:data:`MAX_KEY_FILE_BYTES`); an
unreadable, empty or oversized file accepts no key at all.

Each non-empty line is one accepted key, so an old and a new key can overlap during rotation. A key
longer than a request header can carry (``max_key_bytes``, from the server's header bound) could
never match: it is left out, and said so in the log. Keys are compared with
:func:`hmac.compare_digest` against every accepted key, so timing reveals nothing, and every key read
is given to the log redactor.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import os
import stat

from noctaya.serving import redaction

logger = logging.getLogger(__name__)

MAX_KEY_FILE_BYTES = 64 * 1024
READ_TIMEOUT = 2.0

Identity = tuple[int, int, int]


class KeyFileProblem(Exception):
    """The key file cannot be used; the message says why (never a key)."""


def read_keys(path: str) -> list[bytes]:
    """The keys in ``path`` (blocking: run off the loop); raises :class:`KeyFileProblem`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise KeyFileProblem(f"unreadable ({exc.strerror or exc})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise KeyFileProblem("not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise KeyFileProblem(f"unreadable ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(raw) > MAX_KEY_FILE_BYTES:
        raise KeyFileProblem(f"larger than {MAX_KEY_FILE_BYTES} bytes")
    return [line.strip() for line in raw.splitlines() if line.strip()]


class KeyFile:
    """Checks bearer tokens against the keys in ``path``; ``path=None`` disables authentication."""

    def __init__(self, *, path: str | None, max_key_bytes: int, read_timeout: float = READ_TIMEOUT) -> None:
        self.path = path
        self.max_key_bytes = max_key_bytes
        self.read_timeout = read_timeout
        self._identity: Identity | None = None
        self._keys: list[bytes] = []
        self._reading: asyncio.Task[list[bytes]] | None = None
        self._reading_since = 0.0
        self._last_problem: str | None = None  # logged once per change, not once per request

    def _problem(self, problem: str | None) -> None:
        if problem != self._last_problem:
            if problem is not None:
                logger.warning(
                    "API key file %s: %s; denying every request until it is fixed", self.path, problem
                )
            else:
                logger.info("API key file %s is usable again", self.path)
            self._last_problem = problem

    @property
    def enabled(self) -> bool:
        return self.path is not None

    async def keys(self) -> list[bytes]:
        """The currently accepted keys; empty when the file cannot be used (deny)."""
        path = self.path
        if path is None:
            return []
        try:
            st = os.stat(path)
        except OSError as exc:
            self._identity, self._keys = None, []
            self._problem(f"unreadable ({exc.strerror or exc})")
            return []
        identity = (st.st_ino, st.st_size, st.st_mtime_ns)
        if identity == self._identity:
            return self._keys
        now = asyncio.get_running_loop().time()
        if self._reading is None:  # one read at a time, shared by every request that needs it
            self._reading = asyncio.create_task(asyncio.to_thread(read_keys, path))
            self._reading_since = now
        reading = self._reading
        # a read that is already late is not waited for again: the request is checked at once
        remaining = self._reading_since + self.read_timeout - now
        try:
            if remaining <= 0 and not reading.done():
                raise TimeoutError
            keys = await asyncio.wait_for(asyncio.shield(reading), max(remaining, 0.0))
        except TimeoutError:
            self._problem(f"not read within {self.read_timeout:g}s")
            return self._keys if self._identity is not None else []
        except KeyFileProblem as exc:
            self._keys, self._identity = [], identity
            self._problem(str(exc))
            return []
        finally:
            if reading.done() and self._reading is reading:
                self._reading = None
        usable = [key for key in keys if len(key) <= self.max_key_bytes]
        if len(usable) < len(keys):
            logger.warning(
                "API key file %s: %d key(s) longer than %d bytes can never match (a request header "
                "cannot carry them) and are ignored",
                path,
                len(keys) - len(usable),
                self.max_key_bytes,
            )
        redaction.REDACTOR.remember(keys)
        self._keys, self._identity = usable, identity
        self._problem(None if usable else "empty")
        return usable

    async def allows(self, authorization: str | None) -> bool:
        """True if authentication is off, or the header carries one of the accepted keys."""
        if self.path is None:
            return True
        if not authorization:
            return False
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return False
        presented = token.strip().encode("utf-8", "surrogateescape")
        if not presented or len(presented) > self.max_key_bytes:
            return False
        matched = False
        for key in await self.keys():
            matched |= hmac.compare_digest(presented, key)  # no early exit: same work for every key
        return matched
