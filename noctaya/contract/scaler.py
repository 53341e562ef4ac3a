"""The ExternalScaler's settings and the aggregate scaler's config file (``noctaya scaler --config``).

``ExternalScalerSettings`` is what KEDA sees of any scaler — the per-replica target, the metric name,
the bound on open ``StreamIsActive`` streams and the server credentials — whether the scaler runs in
the only gateway (the gateway file's ``scaler`` section) or as the aggregate scaler (this file, which
adds the report intake and the membership bounds).

File keys are camelCase (``maxMembers``), attributes snake_case. Every bound the scaler enforces is a
field here, so it is visible in the rendered ConfigMap and, through gauges, in metrics.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Final

import pydantic

from noctaya.contract import connections, documents, engines, fields

MAX_TARGET: Final = 1_000_000
#: KEDA opens one stream per ScaledObject trigger; a few more cover reconnect overlap
DEFAULT_MAX_STREAMS: Final = 16
#: so that one client (on the plaintext default, anyone who reaches the port) cannot hold them all
DEFAULT_MAX_STREAMS_PER_PEER: Final = 4
MAX_MEMBERS: Final = 10_000
MAX_MEMBER_DEMAND: Final = 10_000_000
MAX_REPORT_CONNECTIONS: Final = 100_000

ConfigError = documents.ConfigError

#: the ExternalScaler's own port, wherever it runs (the gateway's ``scaler.listen``, this file's
#: ``grpcListen``)
GrpcListen = Annotated[fields.Listen, pydantic.Field(description="ExternalScaler gRPC address")]


class ExternalScalerSettings(fields.Model):
    """What any ExternalScaler serves KEDA: target, metric, stream bound, credentials."""

    target: Annotated[
        int,
        pydantic.Field(ge=1, le=MAX_TARGET, description="demand per backend replica (GetMetricSpec target)"),
    ] = 10
    metric_name: Annotated[
        str,
        pydantic.Field(
            min_length=1,
            max_length=63,
            pattern=r"^[A-Za-z][A-Za-z0-9_-]*$",
            description="metric name KEDA asks for (matched without regard to case)",
        ),
    ] = "queueDepth"
    max_streams: Annotated[
        int,
        pydantic.Field(ge=1, le=10_000, description="open StreamIsActive streams served at once"),
    ] = DEFAULT_MAX_STREAMS
    max_streams_per_peer: Annotated[
        int,
        pydantic.Field(
            ge=1,
            le=10_000,
            description="open StreamIsActive streams from one address (KEDA needs one per ScaledObject)",
        ),
    ] = DEFAULT_MAX_STREAMS_PER_PEER
    tls: Annotated[
        fields.TlsFiles | None, pydantic.Field(description="gRPC server credentials; none means plaintext")
    ] = None
    engine: Annotated[
        engines.EngineSignalSection | None,
        pydantic.Field(description="read the engines' own queue and KV-cache use (noctaya.contract.engines)"),
    ] = None

    @pydantic.model_serializer(mode="wrap")
    def _without_unused_engine(self, handler: pydantic.SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Without an engine signal the ``engine`` key is left out of the file (files rendered before
        it existed stay as they were, and so does their config hash)."""
        dumped: dict[str, Any] = handler(self)
        if dumped.get("engine", ...) is None:
            dumped.pop("engine")
        return dumped

    @pydantic.model_validator(mode="after")
    def _stream_bounds_agree(self) -> ExternalScalerSettings:
        if self.max_streams_per_peer > self.max_streams:
            raise ValueError("maxStreamsPerPeer: must not exceed maxStreams")
        return self


class ScalerConfig(ExternalScalerSettings):
    """The aggregate scaler: sums the demand reports of several gateways for one ScaledObject."""

    leading_keys = ("service", "grpcListen", "reportListen", "tokenFile")

    service: Annotated[fields.ServiceRef, pydantic.Field(description="the LLMService whose demand is summed")]
    grpc_listen: GrpcListen = ":9090"
    report_listen: Annotated[fields.Listen, pydantic.Field(description="demand report HTTP address")] = (
        ":9091"
    )
    token_file: Annotated[
        str, pydantic.Field(min_length=1, description="file holding the gateways' shared report token")
    ] = "/etc/noctaya/scaler-token/token"
    max_members: Annotated[
        int, pydantic.Field(ge=1, le=MAX_MEMBERS, description="gateways counted at once")
    ] = 32
    max_member_demand: Annotated[
        int,
        pydantic.Field(
            ge=1, le=MAX_MEMBER_DEMAND, description="largest demand one gateway may report (requests)"
        ),
    ] = 1100
    member_ttl: Annotated[
        fields.Seconds,
        pydantic.Field(gt=0, le=3600, description="a gateway not heard from for this long is dropped"),
    ] = 10.0
    max_concurrent_reports: Annotated[
        int, pydantic.Field(ge=1, le=100_000, description="report requests handled at once")
    ] = 64
    max_report_bytes: Annotated[
        int, pydantic.Field(ge=256, le=1 << 20, description="largest report body (bytes)")
    ] = 4096
    # the report port's connection bounds (its clients are the gateways)
    header_timeout: connections.HeaderTimeout = 5.0
    keep_alive_timeout: connections.KeepAliveTimeout = 30.0
    max_connections: Annotated[connections.Count, pydantic.Field(le=MAX_REPORT_CONNECTIONS)] = 512
    max_connections_per_peer: Annotated[connections.PerPeer, pydantic.Field(le=MAX_REPORT_CONNECTIONS)] = 64
    peer_ipv6_prefix: connections.Ipv6Prefix = 64
    trusted_proxies: connections.TrustedProxies = ()

    _connections_agree = pydantic.model_validator(mode="after")(connections.check_per_peer)


def build_config(document: dict[str, Any]) -> ScalerConfig:
    return documents.build(ScalerConfig, document)


def load_config(path: str | Path) -> ScalerConfig:
    return build_config(documents.read_document(path))
