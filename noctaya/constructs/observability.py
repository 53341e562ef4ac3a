"""Optional monitoring for a Prometheus Operator stack: a ServiceMonitor and alert rules.

Noctaya manages no monitoring stack. These constructs only describe what to scrape and when to alert,
for clusters that run the Prometheus Operator:

- ``ServiceMonitor``: every Service carrying ``serving.noctaya.io/llmservice`` (backends and gateways),
  port ``http``, path ``/metrics``; the LLMService name becomes the target label
  ``serving_noctaya_io_llmservice``; and port ``reports`` of the aggregate scaler Services (its
  ``/metrics`` sits beside the report intake). A co-located scaler's metrics are the gateway's own.
- ``PrometheusRule``: alerts on the gateway's own metrics (``noctaya_gateway_*``): activation timeouts,
  a cold queue near its bound, sustained rejections, slow activations, a backend that stays unready
  while demand exists, an ExternalScaler (co-located or aggregate) that no KEDA stream is connected
  to (``noctaya_scaler_streams``), and an engine queue that stays long (vLLM's metric name by default).
"""

from __future__ import annotations

import dataclasses
from typing import Final

import cdk8s
import constructs

from noctaya.constructs import naming
from noctaya.imports import monitoring

LABELS: Final = {"app.kubernetes.io/part-of": "noctaya", "app.kubernetes.io/component": "monitoring"}
BY: Final = "namespace, serving_noctaya_io_llmservice"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ObservabilityProps:
    """Where the monitoring objects live and which namespaces they watch."""

    #: the namespace of the ServiceMonitors and alert rules. Default: ``"monitoring"``.
    namespace: str = "monitoring"
    #: the name of the monitoring objects. Default: ``"noctaya"``.
    name: str = "noctaya"
    #: namespaces whose LLMServices are scraped; empty = all namespaces. Default: none.
    watch_namespaces: tuple[str, ...] = ()
    #: labels your Prometheus selects ServiceMonitors and rules by (e.g. ``release: kube-prometheus``).
    #: Default: none.
    extra_labels: tuple[tuple[str, str], ...] = ()
    #: how often Prometheus scrapes the gateways and scalers (a duration). Default: ``"15s"``.
    scrape_interval: str = "15s"
    #: a queue fuller than this share of ``maxQueue`` alerts. Default: ``0.9``.
    queue_saturation_ratio: float = 0.9
    #: an activation slower than this alerts. Default: ``300``.
    slow_activation_seconds: int = 300
    #: the engine's queue metric an alert watches. Default: ``"vllm:num_requests_waiting"``.
    engine_queue_metric: str = "vllm:num_requests_waiting"
    #: that metric above this alerts. Default: ``50``.
    engine_queue_threshold: int = 50
    #: how long the engine signal may fall back to the gateways' count before it is an alert (one
    #: unreadable round is normal while a replica starts or stops). Default: ``"10m"``.
    engine_fallback_for: str = "10m"
    #: how long a scaler may serve without any KEDA stream before it is an alert (KEDA reconnects with a
    #: backoff of a few seconds, so a short gap is normal). Default: ``"5m"``.
    stream_missing_for: str = "5m"


def alert_rules(props: ObservabilityProps) -> list[monitoring.PrometheusRuleSpecGroupsRules]:
    """The alerting rules, each with a summary and a description."""

    def rule(
        alert: str, expr: str, for_: str, severity: str, summary: str, description: str
    ) -> monitoring.PrometheusRuleSpecGroupsRules:
        return monitoring.PrometheusRuleSpecGroupsRules(
            alert=alert,
            expr=expr,
            for_=for_,
            labels={"severity": severity},
            annotations={"summary": summary, "description": description},
        )

    return [
        rule(
            "NoctayaActivationTimeouts",
            f'sum by ({BY}) (increase(noctaya_gateway_activation_events_total{{event="expired"}}[10m])) > 0',
            "0m",
            "warning",
            "Cold starts of {{ $labels.serving_noctaya_io_llmservice }} time out",
            "Activation leases expired without a Ready backend in the last 10 minutes; see the LLMService's "
            "Degraded condition (image pull, OOM, crash loop, prewarm).",
        ),
        rule(
            "NoctayaColdQueueSaturated",
            f"max by ({BY}) (noctaya_gateway_pending / noctaya_gateway_max_queue) "
            f"> {props.queue_saturation_ratio}",
            "2m",
            "warning",
            "The cold queue of {{ $labels.serving_noctaya_io_llmservice }} is nearly full",
            "New cold requests will get 429; raise spec.endpoint.maxQueue or keep a warm replica "
            "(spec.scaling.min).",
        ),
        rule(
            "NoctayaRequestsRejected",
            f"sum by ({BY}, reason) (rate(noctaya_gateway_rejections_total[5m])) > 0",
            "10m",
            "info",
            "{{ $labels.serving_noctaya_io_llmservice }} rejects requests ({{ $labels.reason }})",
            "The gateway has refused requests for 10 minutes.",
        ),
        rule(
            "NoctayaSlowActivation",
            f"histogram_quantile(0.9, sum by ({BY}, le) "
            "(rate(noctaya_gateway_activation_duration_seconds_bucket[30m]))) "
            f"> {props.slow_activation_seconds}",
            "0m",
            "info",
            "Cold starts of {{ $labels.serving_noctaya_io_llmservice }} are slow",
            "90% of activations took longer than the threshold; consider a prewarmed cache.",
        ),
        rule(
            "NoctayaBackendUnreadyWithDemand",
            f"max by ({BY}) (noctaya_gateway_demand) > 0 "
            f"and max by ({BY}) (noctaya_gateway_backend_ready) == 0",
            "15m",
            "warning",
            "{{ $labels.serving_noctaya_io_llmservice }} has demand but no Ready backend",
            "Requests are waiting and no backend became Ready for 15 minutes.",
        ),
        rule(
            "NoctayaExternalScalerStreamMissing",
            f"max by ({BY}) (noctaya_scaler_streams) == 0",
            props.stream_missing_for,
            "warning",
            "KEDA holds no StreamIsActive stream to the scaler of "
            "{{ $labels.serving_noctaya_io_llmservice }}",
            "KEDA's external-push trigger keeps one stream open per ScaledObject; without it a cold "
            "request waits for KEDA's polling interval instead of scaling from zero at once. Check the "
            "ScaledObject's trigger address, the scaler's TLS settings and the KEDA operator's log.",
        ),
        rule(
            "NoctayaEngineSignalFallback",
            f"max by ({BY}) (noctaya_engine_fallback) == 1",
            props.engine_fallback_for,
            "warning",
            "{{ $labels.serving_noctaya_io_llmservice }} scales on the gateways' count, not the engine's",
            "A Ready backend replica's metrics endpoint cannot be read, or reads NaN, negative or absurd "
            "values, so KEDA gets the gateways' own count of requests instead of the engine signal "
            "(spec.scaling.metric kvCacheUtil or engineQueueTarget). /noctaya/queue names the replica and "
            "the reason; check the runtime's metrics port and path.",
        ),
        rule(
            "NoctayaEngineQueueHigh",
            f"sum by ({BY}) ({props.engine_queue_metric}) > {props.engine_queue_threshold}",
            "5m",
            "info",
            "The engine queue of {{ $labels.serving_noctaya_io_llmservice }} is long",
            "Requests wait inside the engine; raise spec.scaling.max or lower spec.scaling.target.",
        ),
    ]


class Observability(constructs.Construct):
    """Children: ``ServiceMonitor`` and ``Rules`` (PrometheusRule)."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: ObservabilityProps) -> None:
        super().__init__(scope, id)
        labels = {**LABELS, **dict(props.extra_labels)}
        meta = cdk8s.ApiObjectMetadata(name=props.name, namespace=props.namespace, labels=labels)
        namespaces = (
            monitoring.ServiceMonitorSpecNamespaceSelector(match_names=list(props.watch_namespaces))
            if props.watch_namespaces
            else monitoring.ServiceMonitorSpecNamespaceSelector(any=True)
        )
        self.service_monitor = monitoring.ServiceMonitor(
            self,
            "ServiceMonitor",
            metadata=meta,
            spec=monitoring.ServiceMonitorSpec(
                selector=monitoring.ServiceMonitorSpecSelector(
                    match_expressions=[
                        monitoring.ServiceMonitorSpecSelectorMatchExpressions(
                            key=naming.LLMSERVICE_LABEL, operator="Exists"
                        )
                    ]
                ),
                namespace_selector=namespaces,
                target_labels=[naming.LLMSERVICE_LABEL],
                endpoints=[
                    monitoring.ServiceMonitorSpecEndpoints(
                        port=port, path="/metrics", interval=props.scrape_interval
                    )
                    for port in ("http", "reports")  # Services without the port yield no targets
                ],
            ),
        )
        self.rules = monitoring.PrometheusRule(
            self,
            "Rules",
            metadata=meta,
            spec=monitoring.PrometheusRuleSpec(
                groups=[monitoring.PrometheusRuleSpecGroups(name="noctaya.rules", rules=alert_rules(props))]
            ),
        )
