"""No log line carries a credential: a filter on every log handler that redacts them.

Our own code never logs a request's headers or a key; this is the second line, for what a library
logs on its own (a parse error quoting the header line it choked on, an exception whose text holds a
header). :class:`Redactor` rewrites each record before any handler formats it:

- an ``Authorization``/``Proxy-Authorization`` header value, a ``Bearer``/``Basic`` credential and
  an ``X-Api-Key``/``Api-Key`` value are replaced by ``[redacted]``, wherever they appear in the
  message, its arguments or the exception text;
- every secret registered with :meth:`Redactor.remember` (the keys of the API key file, the report
  token) is replaced wherever it appears, whatever surrounds it.

:func:`install` puts one redactor on every handler of the root logger (``logging.basicConfig``
first); :data:`REDACTOR` is the process's instance, which the key and token files feed.
"""

from __future__ import annotations

import logging
import re

MASK = "[redacted]"
MAX_SECRETS = 1024
MIN_SECRET_LENGTH = 8  # shorter strings are too likely to occur in ordinary text to be masked

_CREDENTIAL = re.compile(
    rb"(?i)((?:proxy-)?authorization\s*[:=]\s*|(?:x-)?api-key\s*[:=]\s*|\b(?:bearer|basic)\s+)"
    rb"(?:(?:bearer|basic)\s+)?[^\s'\",;\\]+"
)


class Redactor(logging.Filter):
    """Rewrites records so that credentials never reach a handler."""

    def __init__(self) -> None:
        super().__init__()
        self._secrets: dict[bytes, None] = {}  # insertion-ordered set, oldest first

    def remember(self, secrets: list[bytes]) -> None:
        """Mask these values from now on (bounded: the oldest are forgotten beyond MAX_SECRETS)."""
        for secret in secrets:
            if len(secret) >= MIN_SECRET_LENGTH:
                self._secrets.pop(secret, None)
                self._secrets[secret] = None
        while len(self._secrets) > MAX_SECRETS:
            del self._secrets[next(iter(self._secrets))]

    def redact(self, text: str) -> str:
        raw = text.encode("utf-8", "surrogateescape")
        cleaned = _CREDENTIAL.sub(lambda m: m.group(1) + MASK.encode(), raw)
        for secret in self._secrets:
            if secret in cleaned:
                cleaned = cleaned.replace(secret, MASK.encode())
        return (
            raw.decode("utf-8", "surrogateescape") if cleaned == raw else cleaned.decode("utf-8", "replace")
        )

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed record: keep only its template, never its arguments
            message = str(record.msg)
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:  # formatters use exc_text once it is set: the traceback goes out redacted
            record.exc_text = self.redact(record.exc_text)
        return True


REDACTOR = Redactor()


def install(root: logging.Logger | None = None) -> None:
    """Add :data:`REDACTOR` to every handler of ``root`` (the root logger by default)."""
    logger = root or logging.getLogger()
    for handler in logger.handlers:
        if REDACTOR not in handler.filters:
            handler.addFilter(REDACTOR)
