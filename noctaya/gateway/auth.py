"""Client API keys: ``Authorization: Bearer <key>`` against a key file reread on every request.

The file is the mounted Secret key; rereading it for each proxied request makes rotation take
effect without a restart (the read is a few microseconds on a tmpfs-backed volume). Each non-empty
line is one accepted key, so an old and a new key can overlap during rotation. The read is bounded
(:data:`MAX_KEY_FILE_BYTES`); an unreadable, empty or oversized file accepts no key at all. Keys are
compared with :func:`hmac.compare_digest` against every accepted key, so timing reveals nothing.
"""

from __future__ import annotations

import hmac
import logging

logger = logging.getLogger(__name__)

MAX_KEY_FILE_BYTES = 64 * 1024
MAX_HEADER_KEY_BYTES = 4096


class KeyFile:
    """Checks bearer tokens against the keys in ``path``; ``path=None`` disables authentication."""

    def __init__(self, *, path: str | None) -> None:
        self.path = path
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

    def keys(self) -> list[bytes]:
        """The currently accepted keys; empty when the file cannot be used (deny)."""
        if self.path is None:
            return []
        try:
            with open(self.path, "rb") as handle:
                raw = handle.read(MAX_KEY_FILE_BYTES + 1)
        except OSError as exc:
            self._problem(f"unreadable ({exc.strerror or exc})")
            return []
        if len(raw) > MAX_KEY_FILE_BYTES:
            self._problem(f"larger than {MAX_KEY_FILE_BYTES} bytes")
            return []
        keys = [line.strip() for line in raw.splitlines() if line.strip()]
        self._problem(None if keys else "empty")
        return keys

    def allows(self, authorization: str | None) -> bool:
        """True if authentication is off, or the header carries one of the accepted keys."""
        if self.path is None:
            return True
        if not authorization:
            return False
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer":
            return False
        presented = token.strip().encode("utf-8", "surrogateescape")
        if not presented or len(presented) > MAX_HEADER_KEY_BYTES:
            return False
        matched = False
        for key in self.keys():
            matched |= hmac.compare_digest(presented, key)  # no early exit: same work for every key
        return matched
