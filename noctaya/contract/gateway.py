"""The gateway's config file (``noctaya gateway --config FILE``), YAML or JSON.

Two parts, one flat file:

- ``GatewaySettings``: the tunables — queue and in-flight bounds, cold-start behaviour, every timeout
  and probe period. The renderer takes them from the LLMService (and operator-wide settings), ``noctaya
  dev`` from its flags; both pass one ``GatewaySettings`` through, so a new tunable is a field here,
  the line that fills it, and the code that reads it.
- ``GatewayConfig``: the settings plus the wiring the renderer decides — where to listen, the backend
  Service, the API key file, the LLMService served, and exactly one of ``scaler`` (the co-located
  ExternalScaler of a single gateway) or ``report`` (publish demand to the aggregate scaler).

Keys are camelCase in files (``maxQueue``), attributes snake_case (``max_queue``); every field is also
a ``noctaya gateway`` flag (``--max-queue``). Durations are Go strings (``500ms``, ``10s``, ``1m30s``)
held as float seconds. Every bound the gateway enforces is a field here, so it is visible in the
ConfigMap and, through the gauges, in metrics.

Live fields (:data:`LIVE_FIELDS`, only ``warmUntil``): a running gateway polls its file (every
``configReloadInterval``) and applies a change of these itself; they are left out of the config hash
on the gateway's Pods (``GatewayConfig.rollout_document``), so changing them alone rolls nothing. Any
other field is read at start only: a change to it reaches the gateways through the rollout its hash
starts.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from urllib.parse import urlsplit

import pydantic

from noctaya.api import gatewaymemory
from noctaya.contract import connections, documents, fields, scaler

MAX_QUEUE: Final = 1_000_000
MAX_IN_FLIGHT: Final = 1_000_000
MAX_BODY_BYTES: Final = 1 << 30
MAX_QUEUED_BODY_BYTES: Final = gatewaymemory.MAX_QUEUED_BODY_BYTES
MAX_CONNECTIONS: Final = gatewaymemory.MAX_CONNECTIONS
#: the worst-case memory model (``noctaya.api.gatewaymemory``, the rule every renderer runs)
BASELINE_MEMORY_BYTES: Final = gatewaymemory.BASELINE_BYTES
CONNECTION_MEMORY_BYTES: Final = gatewaymemory.CONNECTION_BYTES
READINESS_PATH: Final = r"^/[^\s?#]*$"
#: a route's exact path: RFC 3986 path characters, no query or fragment
ROUTE_PATH: Final = r"^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$"
MAX_COLD_ROUTES: Final = 16
MAX_MESSAGE_BYTES: Final = gatewaymemory.MAX_MESSAGE_BYTES
WEBSOCKET_MESSAGE_COPIES: Final = gatewaymemory.WEBSOCKET_MESSAGE_COPIES
HEADER_NAME: Final = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$"
MAX_TENANTS: Final = 4096
MAX_SAMPLES: Final = 1000
BACKEND_FAILED_HEADER: Final = "Noctaya-Backend-Failed"
"""On a readiness answer that is no 2xx: the backend failed to start, and why (``noctaya dev``'s
Service sends it while the replicas crash-loop); the gateway ends the activation at once."""
MAX_BACKEND_FAILED_CHARS: Final = 256
#: the attributes a running gateway applies from a changed config file, without a restart (and the
#: ones the Pods' config hash leaves out): the one list both sides use
LIVE_FIELDS: Final = ("warm_until",)
#: shortest and longest period between two looks at the config file
MIN_CONFIG_RELOAD_INTERVAL: Final = 0.05
MAX_CONFIG_RELOAD_INTERVAL: Final = 300.0


def check_http_url(value: str) -> str:
    """An ``http(s)://host[:port][/path]`` URL without query or fragment, trailing ``/`` dropped."""
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"{value!r} is not an http(s) URL with a host")
    if parts.query or parts.fragment:
        raise ValueError(f"{value!r} must not carry a query or fragment")
    return value.rstrip("/")


HttpUrl = Annotated[str, pydantic.AfterValidator(check_http_url)]


def _rfc3339(value: str | None) -> str | None:
    """An RFC 3339 time with its zone, normalised to UTC ``YYYY-MM-DDTHH:MM:SSZ``; one whose UTC
    time (or Unix time) falls outside years 1 to 9999 is refused, not an overflow."""
    if value is None:
        return None
    try:
        moment = datetime.datetime.fromisoformat(value) if len(value) <= 64 and "T" in value.upper() else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise ValueError(f"{value[:64]!r} is not an RFC 3339 time with a zone, e.g. 2026-12-01T18:00:00Z")
    try:
        utc = moment.astimezone(datetime.UTC)
        utc.timestamp()
    except (OverflowError, ValueError, OSError):
        raise ValueError(f"{value[:64]!r} is outside the years 1 to 9999 once in UTC") from None
    return utc.replace(microsecond=0, tzinfo=None).isoformat() + "Z"  # %Y would not pad year 1


def parse_time(value: str) -> float:
    """A ``warmUntil`` value (already checked) as Unix seconds."""
    return datetime.datetime.fromisoformat(value).timestamp()


ConfigError = documents.ConfigError


class ColdRoute(fields.Model):
    """A ``GET`` (or ``HEAD``) route the gateway answers itself while the backend is cold, without
    taking a queue slot or opening an activation lease; proxied as usual once the backend is warm."""

    path: Annotated[str, pydantic.Field(max_length=256, pattern=ROUTE_PATH, description="exact request path")]
    answer: Annotated[
        Literal["models", "status"],
        pydantic.Field(
            description="models: the served model as an OpenAI model list; status: an empty answer"
        ),
    ] = "status"
    status: Annotated[int, pydantic.Field(ge=200, le=599, description="HTTP status of a 'status' answer")] = (
        200
    )


DEFAULT_COLD_ROUTES: Final = (ColdRoute(path="/v1/models", answer="models"),)


class GatewaySettings(fields.Model):
    """The gateway's tunables, each with its bound and its default (which suits production)."""

    live_fields = LIVE_FIELDS

    readiness_path: Annotated[
        str,
        pydantic.Field(pattern=READINESS_PATH, description="backend path probed for readiness (HTTP 200)"),
    ] = "/health"
    max_queue: Annotated[
        int, pydantic.Field(ge=1, le=MAX_QUEUE, description="cold requests held while the backend starts")
    ] = 100
    max_in_flight: Annotated[
        int, pydantic.Field(ge=1, le=MAX_IN_FLIGHT, description="requests forwarded to the backend at once")
    ] = 1000
    cold_start_mode: Annotated[
        Literal["keepalive", "reject"],
        pydantic.Field(
            description="keepalive: hold cold requests (SSE heartbeats on streams); reject: 503 + Retry-After"
        ),
    ] = "keepalive"
    heartbeat_interval: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="SSE keepalive comment period of a held stream")
    ] = 10.0
    activation_timeout: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="a cold request gives up after this long (504)")
    ] = 300.0
    retry_after: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="Retry-After of 429 and reject-mode 503 answers")
    ] = 10.0
    retry_grace: Annotated[
        fields.Seconds,
        pydantic.Field(description="an activation lease stays open this long after the last cold request"),
    ] = 10.0
    drain_timeout: Annotated[
        fields.Seconds, pydantic.Field(description="longest wait for in-flight requests on shutdown")
    ] = 120.0
    max_body_bytes: Annotated[
        int, pydantic.Field(ge=1, le=MAX_BODY_BYTES, description="largest request body (bytes)")
    ] = 16 * 1024 * 1024
    probe_interval: Annotated[
        fields.Seconds,
        pydantic.Field(
            gt=0, le=0.1, description="readiness probe period while requests wait for a cold start"
        ),
    ] = 0.05
    warm_probe_interval: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="readiness probe period while the backend is ready"),
    ] = 1.0
    idle_probe_interval: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(
            description="probe period while cold and nobody waits; the first demand wakes the probe at once"
        ),
    ] = 1.0
    probe_timeout: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="timeout of one readiness probe")
    ] = 1.0
    warm_probe_timeouts: Annotated[
        int,
        pydantic.Field(
            ge=1,
            le=10,
            description="how many probe timeouts a Ready backend's readiness probe waits for its answer "
            "(its connect has one); a late answer or none is a busy backend, which stays Ready (with 1, "
            "a timeout takes it out), while a connect refused or hanging, or an answer other than 2xx, "
            "takes it out at once",
        ),
    ] = 3
    connect_timeout: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="timeout of one backend connect")
    ] = 5.0
    connect_retries: Annotated[
        int,
        pydantic.Field(
            ge=0,
            le=10,
            description="times a request whose connect is refused is held again as cold, before a 502",
        ),
    ] = 3
    body_timeout: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="longest time to receive a request body")
    ] = 30.0
    cold_routes: Annotated[
        tuple[ColdRoute, ...],
        pydantic.Field(
            max_length=MAX_COLD_ROUTES,
            description="GET routes answered from what the gateway knows while cold (no lease opens)",
        ),
    ] = DEFAULT_COLD_ROUTES
    served_model: Annotated[
        str | None,
        pydantic.Field(min_length=1, max_length=256, description="model id a cold 'models' route answers"),
    ] = None
    forward_authorization: Annotated[
        bool,
        pydantic.Field(
            description="pass the client's Authorization header to the backend (engines run with --api-key)"
        ),
    ] = False
    websocket_max_message_bytes: Annotated[
        int,
        pydantic.Field(
            ge=1, le=MAX_MESSAGE_BYTES, description="largest WebSocket message, either way (bytes)"
        ),
    ] = gatewaymemory.DEFAULTS.websocket_max_message_bytes
    websocket_max_open: Annotated[
        int,
        pydantic.Field(
            ge=1,
            le=MAX_CONNECTIONS,
            description="WebSockets open at once (each may hold a few messages of the largest size)",
        ),
    ] = gatewaymemory.DEFAULTS.websocket_max_open
    websocket_max_open_per_peer: Annotated[
        int,
        pydantic.Field(
            ge=1,
            le=MAX_CONNECTIONS,
            description=(
                "WebSockets one peer (a client host, see trustedProxies) may hold open at once "
                "(at most websocketMaxOpen)"
            ),
        ),
    ] = 4
    websocket_idle_timeout: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="a WebSocket with no message either way for this long is closed"),
    ] = 300.0
    tenant_header: Annotated[
        str | None,
        pydantic.Field(
            pattern=HEADER_NAME,
            description=(
                "without API keys, the request header naming a client's tenant in the fair queue; it "
                "must be set by a proxy in front (with trustedProxies, only theirs is read)"
            ),
        ),
    ] = None
    tenant_key: Annotated[
        Literal["auto", "peer"],
        pydantic.Field(
            description=(
                "what names a client's tenant in the fair queue: auto (the API key when keys are "
                "configured, else tenantHeader, else one tenant for all) or peer (the client host, "
                "see trustedProxies)"
            ),
        ),
    ] = "auto"
    max_tenants: Annotated[
        int,
        pydantic.Field(
            ge=1, le=MAX_TENANTS, description="tenants told apart in the cold queue (more share one)"
        ),
    ] = 64
    retry_after_min: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="smallest Retry-After computed from observed activation times"),
    ] = 1.0
    retry_after_max: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="largest Retry-After computed from observed activation times"),
    ] = 120.0
    activation_samples: Annotated[
        int,
        pydantic.Field(
            ge=1, le=MAX_SAMPLES, description="recent activation durations kept to compute Retry-After"
        ),
    ] = 16
    warm_duration: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(
            description="how long POST /noctaya/warm holds the backend up when no duration is given"
        ),
    ] = 600.0
    max_warm_duration: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="longest hold POST /noctaya/warm accepts"),
    ] = 3600.0
    warm_access: Annotated[
        Literal["key", "open", "off"],
        pydantic.Field(
            description=(
                "who may POST /noctaya/warm: key (a client with an API key; nobody when no keys are "
                "configured), open (anyone who reaches the gateway when no keys are configured) or off"
            )
        ),
    ] = "key"
    warm_until: Annotated[
        str | None,
        pydantic.AfterValidator(lambda value: _rfc3339(value)),
        pydantic.Field(
            description="hold the backend up until this RFC 3339 time without a request "
            "(at most maxWarmDuration from when it is read); live: a change is applied without a restart"
        ),
    ] = None
    config_reload_interval: Annotated[
        fields.Seconds,
        pydantic.Field(
            ge=MIN_CONFIG_RELOAD_INTERVAL,
            le=MAX_CONFIG_RELOAD_INTERVAL,
            description="how often the config file is checked for a change of its live fields (warmUntil)",
        ),
    ] = 5.0
    access_log: Annotated[
        Literal["off", "on", "errors"],
        pydantic.Field(
            description="one log line per proxied request: off, on, or errors (status >= 400, every refusal)"
        ),
    ] = "errors"
    access_log_max_per_second: Annotated[
        int,
        pydantic.Field(
            ge=1, le=1_000_000, description="access log lines written in any one second (more are dropped)"
        ),
    ] = 1000

    max_queued_body_bytes: Annotated[
        int,
        pydantic.Field(
            ge=1,
            le=MAX_QUEUED_BODY_BYTES,
            description="request bodies held in memory by queued cold requests, all together (bytes)",
        ),
    ] = gatewaymemory.DEFAULTS.max_queued_body_bytes
    backend_header_timeout: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="longest wait for the backend's response headers (504 after it)"),
    ] = 600.0
    client_write_timeout: Annotated[
        fields.PositiveSeconds,
        pydantic.Field(description="a client that reads nothing of its response for this long is cut off"),
    ] = 60.0
    header_timeout: connections.HeaderTimeout = 10.0
    keep_alive_timeout: connections.KeepAliveTimeout = 60.0
    max_connections: Annotated[connections.Count, pydantic.Field(le=MAX_CONNECTIONS)] = (
        gatewaymemory.DEFAULTS.max_connections
    )
    max_connections_per_peer: Annotated[connections.PerPeer, pydantic.Field(le=MAX_CONNECTIONS)] = 256
    peer_ipv6_prefix: connections.Ipv6Prefix = 64
    trusted_proxies: connections.TrustedProxies = ()
    probe_connections: Annotated[
        int,
        pydantic.Field(
            ge=0,
            le=1024,
            description=(
                "connections of maxConnections kept for /healthz, whoever holds the others "
                "(at most half of maxConnections; 0: none kept)"
            ),
        ),
    ] = 8

    _connections_agree = pydantic.model_validator(mode="after")(connections.check_per_peer)

    @pydantic.field_validator("cold_routes")
    @classmethod
    def _distinct_paths(cls, routes: tuple[ColdRoute, ...]) -> tuple[ColdRoute, ...]:
        paths = [route.path for route in routes]
        if len(set(paths)) != len(paths):
            raise ValueError("each cold route path may appear once")
        return routes

    @pydantic.model_validator(mode="after")
    def _bounds_agree(self) -> GatewaySettings:
        if self.retry_after_min > self.retry_after_max:
            raise ValueError("retryAfterMin must not exceed retryAfterMax")
        if self.warm_duration > self.max_warm_duration:
            raise ValueError("warmDuration must not exceed maxWarmDuration")
        return self

    @property
    def memory_bounds(self) -> gatewaymemory.Bounds:
        """The four bounds that decide the worst-case memory."""
        return gatewaymemory.Bounds(**{name: getattr(self, name) for name in gatewaymemory.KEYS})

    def worst_case_memory_bytes(self) -> int:
        """What the gateway can hold at most under these bounds: a baseline, the queued bodies, and
        the buffers of every open connection (request and response flow control, request head), and
        the messages every open WebSocket may hold (``noctaya.api.gatewaymemory``)."""
        return self.memory_bounds.worst_case_bytes()


class ScalerSection(scaler.ExternalScalerSettings):
    """The co-located ExternalScaler (only when this is the only gateway replica)."""

    listen: scaler.GrpcListen = ":9090"


class ReportSection(fields.Model):
    """Aggregate mode: publish this gateway's demand to the aggregate scaler."""

    url: Annotated[HttpUrl, pydantic.Field(description="the aggregate scaler's report URL")]
    token_file: Annotated[str, pydantic.Field(min_length=1, description="file holding the report token")]
    interval: Annotated[
        fields.PositiveSeconds, pydantic.Field(description="report period (changes are reported at once)")
    ] = 2.0


class GatewayConfig(GatewaySettings):
    """Everything one gateway process needs; see the module docstring for the file format."""

    leading_keys = ("listen", "backendUrl", "apiKeyFile", "service")

    listen: Annotated[fields.Listen, pydantic.Field(description="where clients connect")] = ":8080"
    backend_url: Annotated[HttpUrl, pydantic.Field(description="the backend Service's base URL")]
    api_key_file: Annotated[
        str | None,
        pydantic.Field(
            min_length=1, description="require 'Authorization: Bearer <key>' with the key in FILE"
        ),
    ] = None
    service: Annotated[
        fields.ServiceRef | None,
        pydantic.Field(description="the LLMService served (required with scaler or report)"),
    ] = None
    scaler: ScalerSection | None = None
    report: ReportSection | None = None

    @pydantic.model_validator(mode="after")
    def _one_scaler_mode(self) -> GatewayConfig:
        if self.scaler is not None and self.report is not None:
            raise ValueError(
                "scaler and report are exclusive: with report set the gateway runs no co-located scaler"
            )
        if (self.scaler is not None or self.report is not None) and self.service is None:
            raise ValueError("service: required when scaler or report is set (it names the ScaledObject)")
        return self

    @property
    def listen_address(self) -> fields.ListenAddress:
        return fields.ListenAddress.parse(self.listen)

    @property
    def settings(self) -> GatewaySettings:
        """The tunables alone (what a renderer passes in)."""
        return GatewaySettings.model_validate(
            {name: getattr(self, name) for name in GatewaySettings.model_fields}
        )


def build_config(document: dict[str, Any]) -> GatewayConfig:
    return documents.build(GatewayConfig, document)


def load_config(path: str | Path) -> GatewayConfig:
    return build_config(documents.read_document(path))
