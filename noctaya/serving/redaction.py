"""No log line carries a credential or a control character: a filter on every log handler.

Our own code never logs a request's headers or a key; this is the second line, for what a library
logs on its own (a parse error quoting the header line it choked on, an exception whose text holds a
header). :class:`Redactor` rewrites each record before any handler formats it:

- an ``Authorization``/``Proxy-Authorization`` header value, a ``Bearer``/``Basic`` credential and
  an ``X-Api-Key``/``Api-Key`` value are replaced by ``[redacted]``, wherever they appear in the
  message, its arguments or the exception text;
- every secret registered with :meth:`Redactor.remember` (the keys of the API key file, the report
  token) is replaced wherever it appears, whatever surrounds it.

- every control character (C0, DEL, C1, the Unicode line and paragraph separators and the
  bidirectional overrides) in the message is written as an escape (``\\x1b``, ``\\r``,
  ``\\u2028``) by :func:`escape`, the one escaping function of every log line: a client's decoded
  path or header cannot forge a line, retitle a terminal or ring it. A traceback keeps its line
  breaks, its other control characters escaped.

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


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_NEWLINE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with every control character written as its escape (see the module docstring);
    ``keep_newlines`` leaves line feeds as they are (a traceback's lines)."""
    pattern = _CONTROL_BUT_NEWLINE if keep_newlines else _CONTROL
    return pattern.sub(_escaped, text) if pattern.search(text) else text


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
        record.msg = escape(self.redact(message))
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:  # formatters use exc_text once it is set: the traceback goes out redacted
            record.exc_text = escape(self.redact(record.exc_text), keep_newlines=True)
        return True


REDACTOR = Redactor()


def install(root: logging.Logger | None = None) -> None:
    """Add :data:`REDACTOR` to every handler of ``root`` (the root logger by default)."""
    logger = root or logging.getLogger()
    for handler in logger.handlers:
        if REDACTOR not in handler.filters:
            handler.addFilter(REDACTOR)
