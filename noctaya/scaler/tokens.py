"""The per-service report token, read from a mounted Secret file and kept fresh.

Both ends read the same Secret key (``<service>-scaler-token``, key ``token``): the aggregate scaler
to check reports, each gateway to sign its own. The file is stat-ed on every use and reread only
when its identity (inode, size, mtime) changes, so rotating the Secret needs no restart and a busy
scaler does not reread the file per report. Comparison is constant-time.
"""

from __future__ import annotations

import hmac
import logging
import os
import pathlib
import stat

from noctaya.serving import redaction

logger = logging.getLogger(__name__)

MAX_TOKEN_BYTES = 4096
MIN_TOKEN_BYTES = 16


class TokenError(Exception):
    """The token file is missing, unreadable or holds no usable token."""


class TokenFile:
    def __init__(self, *, path: str) -> None:
        self.path = pathlib.Path(path)
        self._identity: tuple[int, int, int] | None = None
        self._token: bytes | None = None
        self._logged = ""  # the last problem logged, so a broken file does not flood the log
        self.reloads = 0

    def token(self) -> bytes:
        """The current token (surrounding whitespace removed); raises :class:`TokenError`."""
        try:
            st = os.stat(self.path)
        except OSError as exc:
            raise TokenError(f"token file {str(self.path)!r}: {exc.strerror or exc}") from exc
        identity = (st.st_ino, st.st_size, st.st_mtime_ns)
        if identity != self._identity or self._token is None:
            self._token = self._read()
            self._identity = identity
            self.reloads += 1
        return self._token

    def _read(self) -> bytes:
        # opened non-blocking and checked to be a regular file: a FIFO in its place cannot block
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            raise TokenError(f"token file {str(self.path)!r}: {exc.strerror or exc}") from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise TokenError(f"token file {str(self.path)!r} is not a regular file")
            raw = os.read(fd, MAX_TOKEN_BYTES + 1)
        except OSError as exc:
            raise TokenError(f"token file {str(self.path)!r}: {exc.strerror or exc}") from exc
        finally:
            os.close(fd)
        if len(raw) > MAX_TOKEN_BYTES:
            raise TokenError(f"token file {str(self.path)!r} is larger than {MAX_TOKEN_BYTES} bytes")
        token = raw.strip()
        if len(token) < MIN_TOKEN_BYTES:
            raise TokenError(f"token file {str(self.path)!r} holds fewer than {MIN_TOKEN_BYTES} bytes")
        if any(b < 0x21 or b > 0x7E for b in token):
            raise TokenError(f"token file {str(self.path)!r} holds characters not allowed in a Bearer token")
        redaction.REDACTOR.remember([token])
        return token

    def matches(self, presented: bytes) -> bool:
        """Constant-time comparison with the current token; False when no token is available."""
        try:
            expected = self.token()
        except TokenError as exc:
            if str(exc) != self._logged:
                logger.error("refusing demand reports: %s", exc)
                self._logged = str(exc)
            return False
        self._logged = ""
        return hmac.compare_digest(expected, presented)
