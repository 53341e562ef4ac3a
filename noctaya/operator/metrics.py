"""The operator's Prometheus metrics, one registry per operator instance.

Exported on ``/metrics`` by :mod:`noctaya.operator.probing`. Besides reconcile counts and latencies,
``noctaya_activation_phase_seconds`` breaks every backend activation into phases measured from Pod
creation: ``scheduled`` (bound to a node), ``started`` (image pulled, containers running) and ``ready``
(readiness passed: model loaded). Bounds are visible too: work-queue depth and workers.
"""

from __future__ import annotations

from typing import Final

import prometheus_client

ACTIVATION_BUCKETS: Final = (0.5, 1, 2, 5, 10, 20, 30, 60, 90, 120, 180, 300, 600, 1200, 1800)
RECONCILE_BUCKETS: Final = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)


class Metrics:
    def __init__(self, *, registry: prometheus_client.CollectorRegistry | None = None) -> None:
        self.registry = registry or prometheus_client.CollectorRegistry()
        r = self.registry
        self.reconciles = prometheus_client.Counter(
            "noctaya_reconciles", "LLMService reconcile passes by result", ["result"], registry=r
        )
        self.reconcile_seconds = prometheus_client.Histogram(
            "noctaya_reconcile_seconds",
            "Duration of one LLMService reconcile pass",
            buckets=RECONCILE_BUCKETS,
            registry=r,
        )
        self.objects = prometheus_client.Counter(
            "noctaya_owned_object_actions",
            "Owned-object actions: created, applied, skipped, pruned, refused, rejected, denied",
            ["action"],
            registry=r,
        )
        self.queue_depth = prometheus_client.Gauge(
            "noctaya_workqueue_depth", "LLMServices waiting for a reconcile", registry=r
        )
        self.backing_off = prometheus_client.Gauge(
            "noctaya_workqueue_backing_off",
            "LLMServices whose last pass failed, waiting for their backoff to end",
            registry=r,
        )
        self.workers = prometheus_client.Gauge(
            "noctaya_workqueue_workers", "Configured concurrent reconciles (the bound)", registry=r
        )
        self.leader = prometheus_client.Gauge(
            "noctaya_leader", "1 while this replica holds the Lease and reconciles", registry=r
        )
        self.leader_transitions = prometheus_client.Counter(
            "noctaya_leader_transitions", "Times this replica became the leader", registry=r
        )
        self.events = prometheus_client.Counter(
            "noctaya_events_posted",
            "Kubernetes Events posted for condition transitions",
            ["type"],
            registry=r,
        )
        self.activation = prometheus_client.Histogram(
            "noctaya_activation_phase_seconds",
            "Backend activation phases, seconds from Pod creation (scheduled, started, ready)",
            ["phase"],
            buckets=ACTIVATION_BUCKETS,
            registry=r,
        )

        # every bounded label value exists from the start, so rate() and absent() see it at once
        for result in ("ok", "refused", "error"):
            self.reconciles.labels(result=result)
        for action in ("created", "applied", "skipped", "pruned", "refused", "rejected", "denied"):
            self.objects.labels(action=action)
        for kind in ("Normal", "Warning", "failed", "suppressed"):
            self.events.labels(type=kind)
        for phase in ("scheduled", "started", "ready"):
            self.activation.labels(phase=phase)

    def observe_activation(self, *, scheduled: float | None, started: float | None, ready: float) -> None:
        if scheduled is not None:
            self.activation.labels(phase="scheduled").observe(scheduled)
        if started is not None:
            self.activation.labels(phase="started").observe(started)
        self.activation.labels(phase="ready").observe(ready)

    def exposition(self) -> bytes:
        return prometheus_client.generate_latest(self.registry)
