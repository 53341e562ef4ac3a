"""Every refusal the gateway makes, in one catalogue: ``{"error": {"message", "type", "param", "code"}}``.

A client always gets JSON it can parse (or, when SSE headers were already sent, a final ``data:``
event carrying the same object). Each refusal has a :class:`Reason`; its value is the ``reason``
label of ``noctaya_gateway_rejections_total``, so the set of labels is exactly this enum, and the
HTTP status, OpenAI ``type`` and ``code`` of each reason are fixed here (:data:`SPECS`). The
constructors below are the only way routing, proxying and admission build an error.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from typing import NamedTuple

from aiohttp import web

JSON_TYPE = "application/json"


class Reason(enum.StrEnum):
    """Why a request was refused; the ``reason`` label of the rejection counter."""

    UNAUTHORIZED = "unauthorized"
    INVALID_PATH = "invalid_path"
    INVALID_JSON = "invalid_json"
    INVALID_ENCODING = "invalid_encoding"
    MALFORMED = "malformed_request"
    EXPECTATION_FAILED = "expectation_failed"
    INVALID_WARM_REQUEST = "invalid_warm_request"
    NOT_FOUND = "not_found"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    TOO_LARGE = "too_large"
    BODY_TIMEOUT = "body_timeout"
    QUEUE_FULL = "queue_full"
    QUEUE_BYTES_FULL = "queue_bytes_full"
    OVERLOADED = "overloaded"
    COLD_REJECT = "cold_reject"
    ACTIVATION_TIMEOUT = "activation_timeout"
    DRAINING = "draining"
    BACKEND_UNAVAILABLE = "backend_unavailable"
    BACKEND_TIMEOUT = "backend_timeout"
    WEBSOCKET_REFUSED = "websocket_refused"
    WEBSOCKETS_FULL = "websockets_full"
    INVALID_WEBSOCKET = "invalid_websocket_handshake"
    WEBSOCKETS_PEER_FULL = "websockets_peer_full"
    WARM_FORBIDDEN = "warm_forbidden"


class Spec(NamedTuple):
    status: int
    type: str
    code: str


SPECS: Mapping[Reason, Spec] = {
    Reason.UNAUTHORIZED: Spec(401, "invalid_request_error", "invalid_api_key"),
    Reason.INVALID_PATH: Spec(400, "invalid_request_error", "invalid_path"),
    Reason.INVALID_JSON: Spec(400, "invalid_request_error", "invalid_json"),
    Reason.INVALID_ENCODING: Spec(400, "invalid_request_error", "invalid_content_encoding"),
    Reason.MALFORMED: Spec(400, "invalid_request_error", "malformed_request"),
    Reason.EXPECTATION_FAILED: Spec(417, "invalid_request_error", "expectation_failed"),
    Reason.INVALID_WARM_REQUEST: Spec(400, "invalid_request_error", "invalid_warm_request"),
    Reason.NOT_FOUND: Spec(404, "invalid_request_error", "not_found"),
    Reason.METHOD_NOT_ALLOWED: Spec(405, "invalid_request_error", "method_not_allowed"),
    Reason.TOO_LARGE: Spec(413, "invalid_request_error", "request_too_large"),
    Reason.BODY_TIMEOUT: Spec(408, "invalid_request_error", "request_timeout"),
    Reason.QUEUE_FULL: Spec(429, "rate_limit_exceeded", "queue_full"),
    Reason.QUEUE_BYTES_FULL: Spec(429, "rate_limit_exceeded", "queue_full"),
    Reason.OVERLOADED: Spec(429, "rate_limit_exceeded", "overloaded"),
    Reason.COLD_REJECT: Spec(503, "service_unavailable", "model_starting"),
    Reason.ACTIVATION_TIMEOUT: Spec(504, "activation_timeout", "activation_timeout"),
    Reason.DRAINING: Spec(503, "service_unavailable", "draining"),
    Reason.BACKEND_UNAVAILABLE: Spec(502, "backend_error", "backend_unavailable"),
    Reason.BACKEND_TIMEOUT: Spec(504, "backend_error", "backend_timeout"),
    # the status is the backend's own refusal of the upgrade (a 502 unless it is an HTTP error)
    Reason.WEBSOCKET_REFUSED: Spec(502, "backend_error", "websocket_refused"),
    Reason.WEBSOCKETS_FULL: Spec(429, "rate_limit_exceeded", "websockets_full"),
    Reason.WARM_FORBIDDEN: Spec(403, "permission_error", "warm_forbidden"),
    Reason.WEBSOCKETS_PEER_FULL: Spec(429, "rate_limit_exceeded", "websockets_full"),
    Reason.INVALID_WEBSOCKET: Spec(400, "invalid_request_error", "invalid_websocket_handshake"),
}


def body(*, message: str, type: str, code: str) -> dict[str, object]:
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def encode(*, message: str, type: str, code: str) -> bytes:
    return json.dumps(body(message=message, type=type, code=code)).encode()


def response(
    *, status: int, message: str, type: str, code: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        status=status,
        body=encode(message=message, type=type, code=code),
        content_type=JSON_TYPE,
        headers=headers,
    )


def sse_event(*, message: str, type: str, code: str) -> bytes:
    """The same error as one final Server-Sent Event."""
    return b"data: " + encode(message=message, type=type, code=code) + b"\n\n"


class GatewayError(Exception):
    """A refusal: its :class:`Reason` fixes the HTTP status and the OpenAI ``type`` and ``code``."""

    def __init__(
        self,
        *,
        reason: Reason,
        message: str,
        retry_after: float | None = None,
        headers: Mapping[str, str] | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        spec = SPECS[reason]
        self.reason = reason
        self.status = spec.status if status is None else status
        self.headers = headers
        self.type = spec.type
        self.code = spec.code
        self.message = message
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


def protocol_error_body(status: int, code: str, message: str) -> bytes:
    """The body of an error the HTTP layer sends for a request it could not parse
    (``connections.ErrorBody``)."""
    return encode(
        message=message, type="invalid_request_error" if status < 500 else "server_error", code=code
    )


# ---------------------------------------------------------------------------- the catalogue


def unauthorized() -> GatewayError:
    return GatewayError(
        reason=Reason.UNAUTHORIZED,
        message="missing or invalid API key (use 'Authorization: Bearer <key>')",
        headers={"WWW-Authenticate": 'Bearer realm="noctaya"'},
    )


def invalid_path() -> GatewayError:
    return GatewayError(
        reason=Reason.INVALID_PATH, message="the request path must not contain '.' or '..' segments"
    )


def invalid_json() -> GatewayError:
    return GatewayError(reason=Reason.INVALID_JSON, message="the request body is not valid JSON")


def invalid_encoding(detail: str) -> GatewayError:
    return GatewayError(
        reason=Reason.INVALID_ENCODING, message=f"the request body cannot be decoded: {detail}"
    )


def not_found(path: str) -> GatewayError:
    return GatewayError(
        reason=Reason.NOT_FOUND,
        message=f"no gateway route {path} (its own: /healthz, /metrics, /noctaya/queue, /noctaya/warm)",
    )


def method_not_allowed(method: str, path: str, *, allow: str = "GET, HEAD") -> GatewayError:
    return GatewayError(
        reason=Reason.METHOD_NOT_ALLOWED,
        message=f"{method} is not allowed on the gateway's own route {path}",
        headers={"Allow": allow},
    )


def invalid_warm(detail: str) -> GatewayError:
    return GatewayError(reason=Reason.INVALID_WARM_REQUEST, message=detail)


def warm_forbidden(detail: str) -> GatewayError:
    return GatewayError(reason=Reason.WARM_FORBIDDEN, message=f"POST /noctaya/warm is not allowed: {detail}")


def expectation_failed() -> GatewayError:
    return GatewayError(
        reason=Reason.EXPECTATION_FAILED, message="the only Expect this server knows is 100-continue"
    )


def too_large(limit: int) -> GatewayError:
    return GatewayError(reason=Reason.TOO_LARGE, message=f"request body exceeds the limit of {limit} bytes")


def body_timeout(seconds: float) -> GatewayError:
    return GatewayError(reason=Reason.BODY_TIMEOUT, message=f"request body not received within {seconds:g}s")


def queue_full(retry_after: float) -> GatewayError:
    return GatewayError(
        reason=Reason.QUEUE_FULL,
        message="the model is starting and its request queue is full; retry later",
        retry_after=retry_after,
    )


def queue_bytes_full(limit: int, retry_after: float) -> GatewayError:
    return GatewayError(
        reason=Reason.QUEUE_BYTES_FULL,
        message=f"the model is starting and its queued bodies already hold {limit} bytes; retry later",
        retry_after=retry_after,
    )


def overloaded(retry_after: float) -> GatewayError:
    return GatewayError(
        reason=Reason.OVERLOADED,
        message="the gateway is at its in-flight limit; retry later",
        retry_after=retry_after,
    )


def cold_reject(retry_after: float) -> GatewayError:
    return GatewayError(
        reason=Reason.COLD_REJECT,
        message="the model is starting; retry after the indicated delay",
        retry_after=retry_after,
    )


def activation_timeout(seconds: float) -> GatewayError:
    return GatewayError(
        reason=Reason.ACTIVATION_TIMEOUT,
        message=f"the model backend did not become ready within the activation timeout ({seconds:g}s)",
    )


def draining() -> GatewayError:
    return GatewayError(
        reason=Reason.DRAINING,
        message="the gateway is shutting down; retry on another replica",
        retry_after=1,
    )


def bad_gateway(message: str) -> GatewayError:
    return GatewayError(reason=Reason.BACKEND_UNAVAILABLE, message=message)


def control_in_header() -> GatewayError:
    """The backend's answer has a header field holding a control character (no client may get it)."""
    return bad_gateway("the backend's answer has a header field with a control character")


def backend_timeout(seconds: float) -> GatewayError:
    return GatewayError(
        reason=Reason.BACKEND_TIMEOUT,
        message=f"the backend sent no response headers within {seconds:g}s",
    )


def websocket_refused(status: int) -> GatewayError:
    return GatewayError(
        reason=Reason.WEBSOCKET_REFUSED,
        message=f"the backend refused the WebSocket upgrade (HTTP {status})",
        status=status if 400 <= status < 600 else None,
    )


def websockets_full(limit: int, retry_after: float) -> GatewayError:
    return GatewayError(
        reason=Reason.WEBSOCKETS_FULL,
        message=f"the gateway already holds its {limit} open WebSockets; retry later",
        retry_after=retry_after,
    )


def websockets_peer_full(limit: int, retry_after: float) -> GatewayError:
    return GatewayError(
        reason=Reason.WEBSOCKETS_PEER_FULL,
        message=(
            f"this client already holds its {limit} open WebSockets (websocketMaxOpenPerPeer); retry later"
        ),
        retry_after=retry_after,
    )


def invalid_websocket(detail: str, *, headers: Mapping[str, str] | None = None) -> GatewayError:
    return GatewayError(
        reason=Reason.INVALID_WEBSOCKET, message=f"invalid WebSocket handshake: {detail}", headers=headers
    )


def backend_failed_event() -> bytes:
    """The final SSE event of a stream the backend broke off."""
    return sse_event(
        message="the backend failed in the middle of the stream",
        type="backend_error",
        code="backend_disconnected",
    )


def shutdown_event() -> bytes:
    """The final SSE event of a stream still running when the drain timeout ends."""
    spec = SPECS[Reason.DRAINING]
    return sse_event(
        message="the gateway shut down before the stream finished; retry on another replica",
        type=spec.type,
        code=spec.code,
    )
