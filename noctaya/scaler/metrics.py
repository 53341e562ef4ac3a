"""Prometheus metrics of the ExternalScaler, of the aggregate scaler's report intake and of the
gateway-side reporter.

One ``ScalerMetrics`` per process, registered into the registry its host serves: the gateway's
registry when the scaler is co-located, the aggregate scaler's own registry on ``:9091/metrics``.
A reporting gateway registers ``ReporterMetrics`` into its registry instead. Bounds are exported as
gauges next to the values they bound.
"""

from __future__ import annotations

import prometheus_client

from noctaya.serving import connections

REFUSAL_REASONS = (
    "unauthorized",
    "bad_request",
    "too_large",
    "stale_sequence",
    "too_many_members",
    "demand_out_of_range",
    "busy",
    "wrong_service",
)


class ScalerMetrics:
    def __init__(self, *, registry: prometheus_client.CollectorRegistry) -> None:
        self.demand = prometheus_client.Gauge(
            "noctaya_scaler_demand", "Demand the ExternalScaler currently serves", registry=registry
        )
        self.active = prometheus_client.Gauge(
            "noctaya_scaler_active", "1 while demand > 0 (what IsActive answers)", registry=registry
        )
        self.streams = prometheus_client.Gauge(
            "noctaya_scaler_streams", "Open StreamIsActive streams", registry=registry
        )
        self.max_streams = prometheus_client.Gauge(
            "noctaya_scaler_streams_max", "Bound on concurrent StreamIsActive streams", registry=registry
        )
        self.max_streams_per_peer = prometheus_client.Gauge(
            "noctaya_scaler_streams_per_peer_max",
            "Bound on concurrent StreamIsActive streams from one address",
            registry=registry,
        )
        self.pushes = prometheus_client.Counter(
            "noctaya_scaler_pushes",
            "IsActiveResponse messages pushed on streams",
            ["result"],
            registry=registry,
        )
        self.rpcs = prometheus_client.Counter(
            "noctaya_scaler_rpcs",
            "ExternalScaler calls by method and status code",
            ["method", "code"],
            registry=registry,
        )
        self.members = prometheus_client.Gauge(
            "noctaya_scaler_gateway_members",
            "Gateways whose demand reports are being summed",
            registry=registry,
        )
        self.max_members = prometheus_client.Gauge(
            "noctaya_scaler_members_max", "Bound on summed gateways", registry=registry
        )
        self.reports = prometheus_client.Counter(
            "noctaya_scaler_reports",
            "Demand reports by outcome and refusal reason",
            ["outcome", "reason"],
            registry=registry,
        )
        self.expired_members = prometheus_client.Counter(
            "noctaya_scaler_expired_members",
            "Gateway members removed because they stopped reporting for memberTtl",
            registry=registry,
        )
        self.withdrawn_members = prometheus_client.Counter(
            "noctaya_scaler_withdrawn_members",
            "Gateway members removed by their own withdraw report (graceful shutdown)",
            registry=registry,
        )
        self.reports_in_flight = prometheus_client.Gauge(
            "noctaya_scaler_reports_in_flight", "Demand reports being processed", registry=registry
        )
        self.max_reports_in_flight = prometheus_client.Gauge(
            "noctaya_scaler_reports_in_flight_max",
            "Bound on concurrently processed reports",
            registry=registry,
        )
        for result in ("true", "false"):
            self.pushes.labels(result=result)
        for method in ("IsActive", "StreamIsActive", "GetMetricSpec", "GetMetrics"):
            self.rpcs.labels(method=method, code="OK")
        self.reports.labels(outcome="accepted", reason="")
        for reason in REFUSAL_REASONS:
            self.reports.labels(outcome="refused", reason=reason)


class ReporterMetrics:
    def __init__(self, *, registry: prometheus_client.CollectorRegistry) -> None:
        self.reports = prometheus_client.Counter(
            "noctaya_gateway_demand_reports",
            "Demand reports this gateway sent to the aggregate scaler, by result (accepted, failed)",
            ["result"],
            registry=registry,
        )
        self.failures = prometheus_client.Gauge(
            "noctaya_scaler_reporter_failures",
            "Demand reports failed in a row (retried with backoff)",
            registry=registry,
        )
        self.max_backoff = prometheus_client.Gauge(
            "noctaya_scaler_reporter_backoff_max_seconds",
            "Longest wait before retrying a failed report (the report interval)",
            registry=registry,
        )
        for result in ("accepted", "failed"):
            self.reports.labels(result=result)


class ConnectionMetrics:
    """The aggregate scaler's report listener: open connections and their bounds."""

    def __init__(
        self, *, registry: prometheus_client.CollectorRegistry, table: connections.ConnectionTable
    ) -> None:
        self.connections = prometheus_client.Gauge(
            "noctaya_scaler_connections", "Open connections on the report port", registry=registry
        )
        self.connections.set_function(lambda: table.open)
        prometheus_client.Gauge(
            "noctaya_scaler_max_connections",
            "Configured bound on open report-port connections",
            registry=registry,
        ).set(table.limits.max_connections)
        prometheus_client.Gauge(
            "noctaya_scaler_max_connections_per_peer",
            "Configured bound on open report-port connections from one address",
            registry=registry,
        ).set(table.limits.max_connections_per_peer)
        refused = prometheus_client.Counter(
            "noctaya_scaler_connections_refused",
            "Report-port connections closed at once because a connection bound was reached",
            registry=registry,
        )
        table.on_refused = refused.inc
