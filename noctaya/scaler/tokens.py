"""The per-service report token, read from a mounted Secret file and kept fresh.

Both ends read the same Secret key (``<service>-scaler-token``, key ``token``): the aggregate scaler
to check reports, each gateway to sign its own. The file is stat-ed on every use and reread only
when its identity (``noctaya.contract.files``: device, inode, size, mtime) changes, so rotating the
Secret needs no restart and a busy scaler does not reread the file per report. Comparison is constant-time.
"""

from __future__ import annotations

import hmac
import logging
import pathlib

from noctaya.contract import files
from noctaya.serving import redaction

logger = logging.getLogger(__name__)

MAX_TOKEN_BYTES = 4096
MIN_TOKEN_BYTES = 16


class TokenError(Exception):
    """The token file is missing, unreadable or holds no usable token."""


class TokenFile:
    def __init__(self, *, path: str) -> None:
        self.path = pathlib.Path(path)
        self._identity: files.Identity | None = None
        self._token: bytes | None = None
        self._logged = ""  # the last problem logged, so a broken file does not flood the log
        self.reloads = 0

    def token(self) -> bytes:
        """The current token (surrounding whitespace removed); raises :class:`TokenError`."""
        try:
            identity = files.identity(self.path)
        except files.FileProblem as exc:
            raise TokenError(f"token file {str(self.path)!r}: {exc}") from None
        if identity != self._identity or self._token is None:
            self._token = self._read()
            self._identity = identity
            self.reloads += 1
        return self._token

    def _read(self) -> bytes:
        # a regular file only, opened non-blocking: a FIFO in its place cannot block
        try:
            raw = files.read_regular(self.path, limit=MAX_TOKEN_BYTES)
        except files.FileProblem as exc:
            raise TokenError(f"token file {str(self.path)!r}: {exc}") from None
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
