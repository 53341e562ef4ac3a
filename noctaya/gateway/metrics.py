"""The gateway's Prometheus metrics, each app with its own registry (prefix ``noctaya_gateway_``).

Gauges that mirror state (queue depth, in-flight, backend ready, demand) are read when scraped, so
the request path pays nothing for them. Counters with labels cache their children, so a request
costs a dict lookup and an increment.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from noctaya.gateway import errors
from noctaya.serving import connections as connections_

PREFIX = "noctaya_gateway_"
ACTIVATION_EVENTS = ("started", "succeeded", "expired", "failed")
#: what became of a change of the config file (``noctaya.gateway.liveconfig``)
RELOAD_OUTCOMES = ("applied", "invalid", "unchanged_live")
ROUTES = ("chat/completions", "completions", "embeddings", "models")
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_WAIT_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1800)


_ROUTE_LABELS = {route: route for route in ROUTES}


def _task_count() -> float:
    try:
        return float(len(asyncio.all_tasks()))
    except RuntimeError:  # scraped from outside the loop (a registry read in a test's thread)
        return float("nan")


def route_label(path: str) -> str:
    """Bounded label for a ``/v1/...`` path: one of :data:`ROUTES`, else ``other``.

    Returns the shared constant, never a slice of ``path``: the label lives as long as its request
    (a held one for minutes), so it must not cost a string per request."""
    tail = path[4:] if path.startswith("/v1/") else path
    label = _ROUTE_LABELS.get(tail)
    if label is not None:
        return label
    if tail.startswith("models/"):
        return "models"
    return "other"


class Failures:
    """How many requests and activations failed and the last reason of each, for ``/noctaya/queue``
    (and so the view of ``noctaya dev``): a request failed when it was answered 429 or 5xx (a client
    that leaves or sends a bad request is not a failure of the gateway); an activation failed when it
    hit the activation timeout. The counters of the registry count the same events."""

    __slots__ = ("activations", "last_activation", "last_request", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.activations = 0
        self.last_request: str | None = None
        self.last_activation: str | None = None

    def request(self, *, status: int, reason: str | None) -> None:
        if status == 429 or status >= 500:
            self.requests += 1
            self.last_request = reason or f"HTTP {status}"

    def activation(self, *, reason: str) -> None:
        self.activations += 1
        self.last_activation = reason

    def document(self) -> dict[str, object]:
        return {
            "requests": self.requests,
            "lastRequestReason": self.last_request,
            "activations": self.activations,
            "lastActivationReason": self.last_activation,
        }


#: the HTTP layer's refusal codes (``connections.describe``) that are not ``malformed_request``
_REFUSALS = {
    "invalid_content_encoding": errors.Reason.INVALID_ENCODING,
    "method_not_allowed": errors.Reason.METHOD_NOT_ALLOWED,
}


class Metrics:
    """All collectors of one gateway app."""

    def __init__(self, *, max_queue: int, max_in_flight: int, max_tenants: int = 64) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.failures = Failures()
        r = self.registry
        self.requests = Counter(
            f"{PREFIX}requests",
            "Proxied requests by route and HTTP status code",
            ["route", "code"],
            registry=r,
        )
        self.admitted = Counter(
            f"{PREFIX}admitted",
            "Requests admitted, warm (at once) or cold (after queueing)",
            ["path"],
            registry=r,
        )
        self.rejections = Counter(
            f"{PREFIX}rejections",
            "Requests refused, by reason (the error catalogue's reasons)",
            ["reason"],
            registry=r,
        )
        self.activation_events = Counter(
            f"{PREFIX}activation_events",
            "Activation lease events: started (opened), succeeded (backend Ready), expired (timeout), "
            "failed (the backend said it failed to start)",
            ["event"],
            registry=r,
        )
        self.activation_duration = Histogram(
            f"{PREFIX}activation_duration_seconds",
            "Lease open to backend Ready",
            buckets=_WAIT_BUCKETS,
            registry=r,
        )
        self.activation_wait = Histogram(
            f"{PREFIX}activation_wait_seconds",
            "Time a cold request waited in the queue before being forwarded",
            buckets=_WAIT_BUCKETS,
            registry=r,
        )
        self.time_to_first_byte = Histogram(
            f"{PREFIX}time_to_first_byte_seconds",
            "Request forwarded to first response byte from the backend",
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.pending = Gauge(f"{PREFIX}pending", "Requests holding a cold-queue slot", registry=r)
        self.pending_body_bytes = Gauge(
            f"{PREFIX}pending_body_bytes", "Request body bytes held in memory by queued requests", registry=r
        )
        self.max_pending_body_bytes = Gauge(
            f"{PREFIX}max_pending_body_bytes",
            "Configured bound on the body bytes queued requests hold (maxQueuedBodyBytes)",
            registry=r,
        )
        self.in_flight = Gauge(f"{PREFIX}in_flight", "Requests being forwarded to the backend", registry=r)
        self.demand = Gauge(f"{PREFIX}demand", "Effective demand reported to the autoscaler", registry=r)
        self.backend_ready = Gauge(
            f"{PREFIX}backend_ready", "1 when the backend passes its readiness probe", registry=r
        )
        self.late_probes = Counter(
            f"{PREFIX}readiness_late_probes",
            "Readiness probes of a Ready backend answered later than probeTimeout, or not within "
            "warmProbeTimeouts probe timeouts (the backend stays Ready)",
            registry=r,
        )
        self.warm_probe_timeouts = Gauge(
            f"{PREFIX}warm_probe_timeouts",
            "Configured probe timeouts a Ready backend's readiness probe waits for its answer "
            "(warmProbeTimeouts)",
            registry=r,
        )
        self.draining = Gauge(f"{PREFIX}draining", "1 while the gateway drains before exit", registry=r)
        self.lease_open = Gauge(f"{PREFIX}lease_open", "1 while an activation lease is open", registry=r)
        Gauge(f"{PREFIX}max_queue", "Configured cold-queue slots", registry=r).set(max_queue)
        Gauge(f"{PREFIX}max_in_flight", "Configured in-flight capacity", registry=r).set(max_in_flight)
        self.connections = Gauge(f"{PREFIX}connections", "Open client connections", registry=r)
        self.max_connections = Gauge(
            f"{PREFIX}max_connections",
            "Bound on open connections (maxConnections, lowered to what RLIMIT_NOFILE holds)",
            registry=r,
        )
        self.backend_connections = Gauge(
            f"{PREFIX}backend_connections",
            "The backend connection pool's connections: open (connecting ones included), idle, or paused "
            "until the client they are piped to drains",
            ["state"],
            registry=r,
        )
        for state in ("open", "idle", "paused"):
            self.backend_connections.labels(state)
        self.max_backend_connections = Gauge(
            f"{PREFIX}max_backend_connections",
            "Bound on the backend connection pool's open connections (maxInFlight + 8; 0 for a backend URL "
            "the pool does not serve)",
            registry=r,
        )
        self.max_connections_per_peer = Gauge(
            f"{PREFIX}max_connections_per_peer",
            "Configured bound on open connections from one peer",
            registry=r,
        )
        self.websockets = Gauge(f"{PREFIX}websockets", "WebSockets open through the gateway", registry=r)
        self.max_websockets_per_peer = Gauge(
            f"{PREFIX}max_websockets_per_peer",
            "Bound on the WebSockets one peer holds open (websocketMaxOpenPerPeer, at most websocketMaxOpen)",
            registry=r,
        )
        self.max_websockets = Gauge(
            f"{PREFIX}max_websockets", "Configured bound on open WebSockets (websocketMaxOpen)", registry=r
        )
        Gauge(
            f"{PREFIX}event_loop_tasks",
            "asyncio tasks alive in the gateway process (read at scrape)",
            registry=r,
        ).set_function(_task_count)
        self.connections_refused = Counter(
            f"{PREFIX}connections_refused",
            "Connections closed at once because a connection bound was reached (or refused 503 in the "
            "probe reserve)",
            registry=r,
        )
        Gauge(f"{PREFIX}max_tenants", "Configured tenants told apart in the cold queue", registry=r).set(
            max_tenants
        )
        self.queue_tenants = Gauge(
            f"{PREFIX}queue_tenants", "Tenants holding at least one cold-queue slot", registry=r
        )
        self.warm_requests = Counter(
            f"{PREFIX}warm_requests", "Warm holds asked for (POST /noctaya/warm and warmUntil)", registry=r
        )
        self.warm_hold = Gauge(
            f"{PREFIX}warm_hold", "1 while a warm hold keeps demand up without a request", registry=r
        )
        self.access_log_dropped = Counter(
            f"{PREFIX}access_log_dropped", "Access log lines dropped over accessLogMaxPerSecond", registry=r
        )
        self.retry_after = Gauge(
            f"{PREFIX}retry_after_seconds",
            "Retry-After a cold request refused now is given (measured activation time, floored and capped)",
            registry=r,
        )
        self.max_access_log_per_second = Gauge(
            f"{PREFIX}access_log_max_per_second",
            "Configured access log lines written in any one second (accessLogMaxPerSecond)",
            registry=r,
        )
        self.activation_samples_max = Gauge(
            f"{PREFIX}activation_samples_max",
            "Configured activation durations kept to compute Retry-After (activationSamples)",
            registry=r,
        )
        self.retry_after_min = Gauge(
            f"{PREFIX}retry_after_min_seconds",
            "Configured floor of the measured Retry-After (retryAfterMin)",
            registry=r,
        )
        self.retry_after_max = Gauge(
            f"{PREFIX}retry_after_max_seconds",
            "Configured cap of the measured Retry-After (retryAfterMax)",
            registry=r,
        )
        self.max_warm_duration = Gauge(
            f"{PREFIX}max_warm_duration_seconds",
            "Configured longest warm hold (maxWarmDuration)",
            registry=r,
        )
        self.config_reloads = Counter(
            f"{PREFIX}config_reloads",
            "Changes of the config file seen, by outcome: applied (a live field changed), invalid (kept "
            "the running config), unchanged_live (no live field changed)",
            ["outcome"],
            registry=r,
        )
        self._reload_children = {outcome: self.config_reloads.labels(outcome) for outcome in RELOAD_OUTCOMES}
        self.config_reload_interval = Gauge(
            f"{PREFIX}config_reload_interval_seconds",
            "Configured period between two looks at the config file (configReloadInterval)",
            registry=r,
        )
        self._request_children: dict[tuple[str, int], Counter] = {}
        for route in ROUTES:  # the common outcome exists from the start; other codes as they happen
            self.request(route, 200, count=0)
        self._reject_children = {reason: self.rejections.labels(reason.value) for reason in errors.Reason}
        events = {event: self.activation_events.labels(event) for event in ACTIVATION_EVENTS}
        self.activation_started = events["started"]
        self.activation_succeeded = events["succeeded"]
        self.activation_expired = events["expired"]
        self.activation_failed = events["failed"]
        self.admitted_warm = self.admitted.labels("warm")
        self.admitted_cold = self.admitted.labels("cold")

    def bind_backend_pool(
        self,
        *,
        limit: int,
        open_: Callable[[], float],
        idle: Callable[[], float],
        paused: Callable[[], float],
    ) -> None:
        """Read the backend pool's gauges from the live pool at scrape time."""
        self.max_backend_connections.set(limit)
        self.backend_connections.labels("open").set_function(open_)
        self.backend_connections.labels("idle").set_function(idle)
        self.backend_connections.labels("paused").set_function(paused)

    def bind(
        self,
        *,
        queued: Callable[[], float],
        queued_body_bytes: Callable[[], float],
        max_queued_body_bytes: int,
        in_flight: Callable[[], float],
        demand: Callable[[], float],
        ready: Callable[[], float],
        draining: Callable[[], float],
        lease_open: Callable[[], float],
        connections: connections_.ConnectionTable,
        tenants: Callable[[], float] = lambda: 0.0,
        warm_hold: Callable[[], float] = lambda: 0.0,
        retry_after: Callable[[], float] = lambda: 0.0,
    ) -> None:
        """Read the state gauges from the live objects at scrape time."""
        self.pending.set_function(queued)
        self.pending_body_bytes.set_function(queued_body_bytes)
        self.max_pending_body_bytes.set(max_queued_body_bytes)
        self.in_flight.set_function(in_flight)
        self.demand.set_function(demand)
        self.backend_ready.set_function(ready)
        self.draining.set_function(draining)
        self.lease_open.set_function(lease_open)
        self.connections.set_function(lambda: connections.open)
        self.max_connections.set(connections.limits.max_connections)
        self.max_connections_per_peer.set(connections.limits.max_connections_per_peer)
        connections.on_refused = self.connections_refused.inc
        connections.on_malformed = lambda code: self.rejected(_REFUSALS.get(code, errors.Reason.MALFORMED))
        self.queue_tenants.set_function(tenants)
        self.warm_hold.set_function(warm_hold)
        self.retry_after.set_function(retry_after)

    def bounds(
        self,
        *,
        access_log_max_per_second: int,
        activation_samples: int,
        retry_after_min: float,
        retry_after_max: float,
        max_warm_duration: float,
        config_reload_interval: float,
        warm_probe_timeouts: int,
    ) -> None:
        """Export the configured bounds of the cold path beside the values they bound."""
        self.warm_probe_timeouts.set(warm_probe_timeouts)
        self.max_access_log_per_second.set(access_log_max_per_second)
        self.activation_samples_max.set(activation_samples)
        self.retry_after_min.set(retry_after_min)
        self.retry_after_max.set(retry_after_max)
        self.max_warm_duration.set(max_warm_duration)
        self.config_reload_interval.set(config_reload_interval)

    def config_reload(self, outcome: str) -> None:
        """A change of the config file, by one of :data:`RELOAD_OUTCOMES`."""
        self._reload_children[outcome].inc()

    def request(self, route: str, code: int, count: int = 1) -> None:
        child = self._request_children.get((route, code))
        if child is None:
            child = self._request_children[(route, code)] = self.requests.labels(route, str(code))
        child.inc(count)

    def rejected(self, reason: errors.Reason) -> None:
        self._reject_children[reason].inc()

    def exposition(self) -> bytes:
        return prometheus_client.generate_latest(self.registry)
