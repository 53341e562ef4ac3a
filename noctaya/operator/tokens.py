"""The aggregate scaler's bearer token: read back from its Secret, or made once.

The token lives in the create-once Secret ``<name>-scaler-token`` (key ``token``), which the gateways
and the aggregate scaler mount. Every pass renders the Secret with the token it already holds, so the
Secret is never rewritten and the token never changes while the Secret exists; a Secret that holds no
usable token (absent, not base64, not UTF-8, empty) gets a new one of 32 random bytes.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Mapping
from typing import Any, Final

from noctaya.constructs import gateway

TOKEN_KEY: Final = gateway.TOKEN_KEY
TOKEN_BYTES: Final = 32


def token_of(secret: Mapping[str, Any] | None) -> str | None:
    """The token a scaler token Secret holds (``data``, else ``stringData``), or None."""
    if secret is None:
        return None
    raw = (secret.get("data") or {}).get(TOKEN_KEY)
    if isinstance(raw, str):
        try:
            token = base64.b64decode(raw, validate=True).decode()
        except (binascii.Error, UnicodeDecodeError):
            token = ""
        if token:
            return token
    plain = (secret.get("stringData") or {}).get(TOKEN_KEY)
    return plain if isinstance(plain, str) and plain else None


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)
