"""``Authorization: Bearer <token>``, parsed one way for every listener that takes a token.

The scheme is matched without regard to case (RFC 9110), the token is what follows the first space
with surrounding whitespace dropped, as the bytes the client sent (aiohttp decodes header bytes that
are not UTF-8 with ``surrogateescape``, which encoding back undoes), so a comparison with a stored
key sees exactly what came over the wire.
"""

from __future__ import annotations


def token(authorization: str | None) -> bytes | None:
    """The Bearer token of an ``Authorization`` header value; None when there is no header, it
    names another scheme, or the token is empty."""
    if not authorization:
        return None
    scheme, _, presented = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return None
    raw = presented.strip().encode("utf-8", "surrogateescape")
    return raw or None
