"""The gateway's configuration: one YAML/JSON file, every field also a command-line flag.

Keys are camelCase in files (``maxQueue``), attributes snake_case (``max_queue``). Durations are
Go/Kubernetes strings (``500ms``, ``10s``, ``1m30s``) and are held as float seconds. Every bound
the gateway enforces is a field here, so it is visible in the ConfigMap and, through the gauges, in
metrics. An invalid file fails with :class:`ConfigError`, whose message names each bad field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import pydantic
import yaml
from pydantic import alias_generators

_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
MAX_CONFIG_BYTES = 1 << 20


class ConfigError(Exception):
    """The configuration is unusable; the message is meant for a person and names the field."""


def parse_duration(value: object) -> float:
    """Go duration string (or a number of seconds) to seconds; rejects anything else."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as '10s' or '5m'")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if text == "0":
            return 0.0
        pos, seconds = 0, 0.0
        for match in _DURATION_PART.finditer(text):
            if match.start() != pos:
                break
            seconds += float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
            pos = match.end()
        if pos != len(text) or not text:
            raise ValueError(
                f"invalid duration {value!r}: expected a Go duration such as '500ms', '10s', '1m30s'"
            )
    else:
        raise ValueError("expected a duration such as '10s' or '5m'")
    if seconds != seconds or seconds < 0 or seconds > 365 * 86400:
        raise ValueError(f"duration {value!r} is out of range")
    return seconds


def format_duration(seconds: float) -> str:
    """Seconds to the canonical Go form (``90.0`` -> ``1m30s``, ``0.05`` -> ``50ms``)."""
    if seconds == 0:
        return "0s"
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{int(hours)}h" if hours else ""
    if hours or minutes:
        text += f"{int(minutes)}m"
    return text + f"{secs:g}s"


Duration = Annotated[
    float, pydantic.BeforeValidator(parse_duration), pydantic.PlainSerializer(format_duration)
]
PositiveDuration = Annotated[Duration, pydantic.Field(gt=0)]


def parse_listen(value: str) -> tuple[str, int]:
    """``":8080"`` -> ``("0.0.0.0", 8080)``; ``"127.0.0.1:0"``; ``"[::1]:8080"``."""
    host, sep, port_text = value.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 <= int(port_text) <= 65535:
        raise ValueError(f"invalid listen address {value!r}: expected HOST:PORT or :PORT")
    host = host.strip("[]") or "0.0.0.0"
    return host, int(port_text)


def _check_listen(value: str) -> str:
    parse_listen(value)
    return value


Listen = Annotated[str, pydantic.AfterValidator(_check_listen)]


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class ServiceRef(_Model):
    """Which LLMService (and so which ScaledObject) this gateway serves."""

    name: Annotated[str, pydantic.Field(pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")]
    namespace: Annotated[str, pydantic.Field(pattern=r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")]


class TlsFiles(_Model):
    """Server credentials; ``ca_file`` set means client certificates (mutual TLS) are required."""

    cert_file: str
    key_file: str
    ca_file: str | None = None


class ScalerSection(_Model):
    """The co-located KEDA ExternalScaler (only when this is the only gateway replica)."""

    listen: Listen = ":9090"
    target: Annotated[int, pydantic.Field(ge=1, le=1_000_000)] = 10
    metric_name: Annotated[
        str, pydantic.Field(min_length=1, max_length=63, pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")
    ] = "queueDepth"
    tls: TlsFiles | None = None


class ReportSection(_Model):
    """Aggregate mode: publish this gateway's demand to the aggregate scaler."""

    url: str
    token_file: str
    interval: PositiveDuration = 2.0

    @pydantic.field_validator("url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        return _check_http_url(value)


def _check_http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"{value!r} is not an http(s) URL with a host")
    if parts.query or parts.fragment:
        raise ValueError(f"{value!r} must not carry a query or fragment")
    return value.rstrip("/")


class GatewayConfig(_Model):
    """Everything one gateway process needs; see the module docstring for the file format."""

    listen: Listen = ":8080"
    backend_url: str
    readiness_path: Annotated[str, pydantic.Field(pattern=r"^/[^\s?#]*$")] = "/health"
    max_queue: Annotated[int, pydantic.Field(ge=1, le=1_000_000)] = 100
    max_in_flight: Annotated[int, pydantic.Field(ge=1, le=1_000_000)] = 1000
    cold_start_mode: Literal["keepalive", "reject"] = "keepalive"
    heartbeat_interval: PositiveDuration = 10.0
    activation_timeout: PositiveDuration = 300.0
    retry_after: PositiveDuration = 10.0
    retry_grace: Duration = 10.0
    drain_timeout: Duration = 120.0
    max_body_bytes: Annotated[int, pydantic.Field(ge=1, le=1 << 30)] = 16 * 1024 * 1024
    api_key_file: str | None = None
    service: ServiceRef | None = None
    scaler: ScalerSection | None = None
    report: ReportSection | None = None
    # Bounds and periods beyond the shared contract; defaults suit production.
    probe_interval: Annotated[Duration, pydantic.Field(gt=0, le=0.1)] = 0.05
    warm_probe_interval: PositiveDuration = 1.0
    #: cold with no demand (scaled to zero, nobody waiting): nothing needs the backend yet, so probe
    #: slowly; the first demand wakes the probe at once and it runs at ``probe_interval`` again
    idle_probe_interval: PositiveDuration = 1.0
    probe_timeout: PositiveDuration = 1.0
    connect_timeout: PositiveDuration = 5.0
    connect_retries: Annotated[int, pydantic.Field(ge=0, le=10)] = 2
    body_timeout: PositiveDuration = 30.0

    @pydantic.field_validator("backend_url")
    @classmethod
    def _backend_url(cls, value: str) -> str:
        return _check_http_url(value)

    @pydantic.model_validator(mode="after")
    def _one_scaler_mode(self) -> GatewayConfig:
        if self.scaler is not None and self.report is not None:
            raise ValueError(
                "scaler and report are exclusive: with report set the gateway runs no co-located scaler"
            )
        return self

    @property
    def listen_address(self) -> tuple[str, int]:
        return parse_listen(self.listen)


def describe_errors(error: pydantic.ValidationError) -> str:
    """One line per problem, each naming the field by its file key (``coldStartMode: ...``)."""
    lines = []
    for item in error.errors():
        where = ".".join(str(part) for part in item["loc"]) or "(document)"
        message = item["msg"].removeprefix("Value error, ")
        lines.append(f"{where}: {message}")
    return "\n".join(lines)


def read_document(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON mapping (bounded in size) from ``path``."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        document = json.loads(raw) if str(path).endswith(".json") else yaml.safe_load(raw)
    except (ValueError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not valid YAML/JSON: {exc}") from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level, got {type(document).__name__}")
    return document


def build_config(document: dict[str, Any]) -> GatewayConfig:
    """Validate a mapping (file keys) into a config; :class:`ConfigError` names every bad field."""
    try:
        return GatewayConfig.model_validate(document)
    except pydantic.ValidationError as exc:
        raise ConfigError(describe_errors(exc)) from None


def load_config(path: str | Path) -> GatewayConfig:
    return build_config(read_document(path))
