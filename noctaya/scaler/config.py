"""The aggregate scaler's configuration (``noctaya scaler --config FILE``), YAML or JSON.

Keys are camelCase in files, attributes snake_case. Field types (listen addresses, durations, TLS
files, the service reference) are the gateway's, so both processes read the same shapes the operator
renders. Every bound the scaler enforces is a field here.
"""

from __future__ import annotations

import pathlib
from typing import Annotated, Any

import pydantic
from pydantic import alias_generators

from noctaya.gateway import config as gateway_config

ConfigError = gateway_config.ConfigError


class ScalerConfig(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    service: gateway_config.ServiceRef
    grpc_listen: gateway_config.Listen = ":9090"
    report_listen: gateway_config.Listen = ":9091"
    target: Annotated[int, pydantic.Field(ge=1, le=1_000_000)] = 10
    metric_name: Annotated[
        str, pydantic.Field(min_length=1, max_length=63, pattern=r"^[A-Za-z][A-Za-z0-9_-]*$")
    ] = "queueDepth"
    token_file: Annotated[str, pydantic.Field(min_length=1)] = "/etc/noctaya/scaler-token/token"
    max_members: Annotated[int, pydantic.Field(ge=1, le=10_000)] = 32
    max_member_demand: Annotated[int, pydantic.Field(ge=1, le=10_000_000)] = 1100
    member_ttl: Annotated[gateway_config.Duration, pydantic.Field(gt=0, le=3600)] = 10.0
    max_concurrent_reports: Annotated[int, pydantic.Field(ge=1, le=100_000)] = 64
    tls: gateway_config.TlsFiles | None = None
    # Beyond the shared contract; defaults suit production.
    max_streams: Annotated[int, pydantic.Field(ge=1, le=10_000)] = 16
    max_report_bytes: Annotated[int, pydantic.Field(ge=256, le=1 << 20)] = 4096


def build_config(document: dict[str, Any]) -> ScalerConfig:
    try:
        return ScalerConfig.model_validate(document)
    except pydantic.ValidationError as exc:
        raise ConfigError(gateway_config.describe_errors(exc)) from None


def load_config(path: str | pathlib.Path) -> ScalerConfig:
    return build_config(gateway_config.read_document(path))
