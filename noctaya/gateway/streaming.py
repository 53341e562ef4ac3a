"""Whether a held request asked for a stream (``"stream": true``), learnt at a bounded cost.

A cold request's body is read to answer a streaming client at once (SSE headers, then heartbeats)
while the backend starts. Building the whole document to learn one top-level flag would let a small
body cost a lot: 16 MiB of ``[{},{},...]`` is half a GiB of Python objects, built on the event loop.
So the document is never built beyond :data:`FULL_PARSE_BYTES`:

- a body up to :data:`FULL_PARSE_BYTES` is parsed whole (a few MiB of objects at most, for a few
  milliseconds); a body declared ``application/json`` that does not parse is the client's error;
- a longer body is looked at from its end: the last ``"stream"`` in it (the one a JSON parser would
  keep, and where the OpenAI SDKs put it: after the messages) is the top-level key when the text
  from it to the end, read as the rest of an object, parses and closes the document exactly. That
  text is at most :data:`TAIL_BYTES`; anything else is "not a stream", and the syntax of the body is
  the backend's to judge, as it is on the warm path.

Both paths cost O(length) in C (``bytes.rfind``) plus a parse of at most 64 KiB.
"""

from __future__ import annotations

import json
from typing import Final

FULL_PARSE_BYTES: Final = 64 * 1024
TAIL_BYTES: Final = 64 * 1024
_KEY: Final = b'"stream"'
_DECODER: Final = json.JSONDecoder()


class InvalidJson(ValueError):
    """A short body that is not JSON."""


def requests_stream(body: bytes, *, strict: bool) -> bool:
    """``"stream": true`` at the top level of ``body``. ``strict``: a short body that does not parse
    raises :class:`InvalidJson` (otherwise it is simply no stream)."""
    if len(body) <= FULL_PARSE_BYTES:
        try:
            document = json.loads(body)
        except (ValueError, RecursionError):
            if strict:
                raise InvalidJson from None
            return False
        return isinstance(document, dict) and document.get("stream") is True
    return _last_key_is_stream(body)


def _last_key_is_stream(body: bytes) -> bool:
    if body.lstrip()[:1] != b"{":
        return False
    at = body.rfind(_KEY)
    if at < 0 or len(body) - at > TAIL_BYTES:
        return False
    try:
        tail = "{" + body[at:].decode("utf-8")
        value, end = _DECODER.raw_decode(tail)
    except (ValueError, RecursionError):
        return False
    # the tail closed the object it opened exactly at the end of the body: "stream" was a key of
    # the top-level object (one level deeper, a "}" would be left over)
    return not tail[end:].strip() and isinstance(value, dict) and value.get("stream") is True
