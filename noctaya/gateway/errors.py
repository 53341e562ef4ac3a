"""OpenAI-shaped error responses: ``{"error": {"message", "type", "param", "code"}}``.

Every refusal the gateway makes goes through here, so a client always gets JSON it can parse (or,
when SSE headers were already sent, a final ``data:`` event carrying the same object).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from aiohttp import web

JSON_TYPE = "application/json"


def body(*, message: str, type: str, code: str) -> dict[str, object]:
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def response(
    *, status: int, message: str, type: str, code: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        status=status,
        body=json.dumps(body(message=message, type=type, code=code)).encode(),
        content_type=JSON_TYPE,
        headers=headers,
    )


def sse_event(*, message: str, type: str, code: str) -> bytes:
    """The same error as one final Server-Sent Event."""
    return b"data: " + json.dumps(body(message=message, type=type, code=code)).encode() + b"\n\n"


class GatewayError(Exception):
    """A refusal with its HTTP status and OpenAI error fields; ``reason`` labels the metric."""

    def __init__(
        self,
        *,
        status: int,
        message: str,
        type: str,
        code: str,
        reason: str | None = None,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.headers = headers
        self.status = status
        self.message = message
        self.type = type
        self.code = code
        self.reason = reason
        self.retry_after = retry_after

    def to_response(self) -> web.Response:
        headers = dict(self.headers or {})
        if self.retry_after is not None:
            headers["Retry-After"] = str(max(1, round(self.retry_after)))
        return response(
            status=self.status, message=self.message, type=self.type, code=self.code, headers=headers
        )

    def to_sse(self) -> bytes:
        return sse_event(message=self.message, type=self.type, code=self.code)


def activation_timeout(seconds: float) -> GatewayError:
    return GatewayError(
        status=504,
        message=f"the model backend did not become ready within the activation timeout ({seconds:g}s)",
        type="activation_timeout",
        code="activation_timeout",
        reason="activation_timeout",
    )


def draining() -> GatewayError:
    return GatewayError(
        status=503,
        message="the gateway is shutting down; retry on another replica",
        type="service_unavailable",
        code="draining",
        reason="draining",
        retry_after=1,
    )
