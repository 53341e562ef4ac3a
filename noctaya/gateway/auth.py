"""Client API keys: ``Authorization: Bearer <key>`` against a key file that follows rotation.

The file is the mounted Secret key. Every proxied request stats it (microseconds, on the loop; a
stat never waits for a writer) and the keys are reread only when the file's identity (device, inode,
size, mtime) changed, so rotation takes effect on the next request without a restart. The reread
runs off the event loop, in one thread at a time, within :data:`READ_TIMEOUT`: a file on a hung
volume delays no other client, and requests arriving meanwhile are checked against the keys read
last (none at first: deny). Only a regular file is read (opened non-blocking, then checked), so a
FIFO or a device in its place cannot freeze anything (``noctaya.contract.files``). The read is
bounded (:data:`MAX_KEY_FILE_BYTES`); an unreadable, empty or oversized file accepts no key at all.

The header is parsed by ``noctaya.serving.bearer``. Each non-empty line is one accepted key, so an
old and a new key can overlap during rotation. A key longer than a request header can carry
(``max_key_bytes``, from the server's header bound) could never match: it is left out, and said so
in the log. Keys are compared with :func:`hmac.compare_digest` against every accepted key, so timing
reveals nothing, and every key read is given to the log redactor.
"""

from __future__ import annotations

import hmac
import logging

from noctaya.contract import files
from noctaya.serving import bearer, redaction

logger = logging.getLogger(__name__)

MAX_KEY_FILE_BYTES = 64 * 1024
READ_TIMEOUT = files.READ_TIMEOUT

KeyFileProblem = files.FileProblem
"""The key file cannot be used; the message says why (never a key)."""


def read_keys(path: str) -> list[bytes]:
    """The keys in ``path`` (blocking: run off the loop); raises :class:`KeyFileProblem`."""
    raw = files.read_regular(path, limit=MAX_KEY_FILE_BYTES)
    return [line.strip() for line in raw.splitlines() if line.strip()]


class KeyFile:
    """Checks bearer tokens against the keys in ``path``; ``path=None`` disables authentication."""

    def __init__(self, *, path: str | None, max_key_bytes: int, read_timeout: float = READ_TIMEOUT) -> None:
        self.path = path
        self.max_key_bytes = max_key_bytes
        self.read_timeout = read_timeout
        self._identity: files.Identity | None = None
        self._keys: list[bytes] = []
        self._reader = None if path is None else files.Reader(lambda: read_keys(path), timeout=read_timeout)
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
        path, reader = self.path, self._reader
        if path is None or reader is None:
            return []
        try:
            identity = files.identity(path)
        except files.FileProblem as exc:
            self._identity, self._keys = None, []
            self._problem(str(exc))
            return []
        if identity == self._identity:
            return self._keys
        try:  # one read at a time, shared by every request that needs it; a late one is not waited for
            keys = await reader.read()
        except TimeoutError:
            self._problem(f"not read within {self.read_timeout:g}s")
            return self._keys if self._identity is not None else []
        except files.FileProblem as exc:
            self._keys, self._identity = [], identity
            self._problem(str(exc))
            return []
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

    def allows_now(self, authorization: str | None) -> bool | None:
        """:meth:`allows` when it can be told without reading the key file (the file is unchanged
        since the keys were read); None when it cannot (the caller awaits :meth:`allows`)."""
        if self.path is None:
            return True
        presented = bearer.token(authorization)
        if presented is None or len(presented) > self.max_key_bytes:
            return False
        try:
            identity = files.identity(self.path)
        except files.FileProblem:
            return None
        if identity != self._identity or self._identity is None:
            return None
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(presented, key)  # no early exit: same work for every key
        return matched

    async def allows(self, authorization: str | None) -> bool:
        """True if authentication is off, or the header carries one of the accepted keys."""
        if self.path is None:
            return True
        presented = bearer.token(authorization)
        if presented is None or len(presented) > self.max_key_bytes:
            return False
        matched = False
        for key in await self.keys():
            matched |= hmac.compare_digest(presented, key)  # no early exit: same work for every key
        return matched
