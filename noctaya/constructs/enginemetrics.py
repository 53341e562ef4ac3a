"""The engine signal's objects: the headless Service ``<name>-engines`` and the scaler's ``engine`` section.

Rendered only when the LLMService scales on what the engines report (``spec.scaling.metric:
kvCacheUtil``, or ``spec.scaling.engineQueueTarget`` set). The headless Service selects the backend
Pods and publishes no address of a Pod that is not Ready, so its DNS name answers one address per
Ready replica: the process serving KEDA (the co-located scaler or the aggregate scaler) reads each
one's metrics endpoint directly, with no Kubernetes credentials and no Prometheus. ``-engines`` keeps
the name within a DNS label for the longest LLMService name (55 characters).

Metric names: InferenceRuntime ``spec.metrics`` (``queueDepth``, ``kvCacheUtil``) when given, else
the family's (``noctaya.runtime.engines``); a family without a KV-cache gauge (TGI, the llama.cpp
server Noctaya builds) and no override cannot render ``kvCacheUtil`` (a ``RenderError`` naming the
field). The metrics port is ``spec.metrics.port`` (a number, or the container port's name).
"""

from __future__ import annotations

import dataclasses
from typing import Final

import constructs
from cdk8s_plus_28 import k8s

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import backend, kube, naming
from noctaya.contract import engines
from noctaya.runtime import rendering

SUFFIX: Final = "-engines"
PORT_NAME: Final = "metrics"


@dataclasses.dataclass(frozen=True, kw_only=True)
class EngineMetricsProps:
    """The headless Service of the backend's Ready Pods."""

    identity: naming.ServiceIdentity
    #: the metrics port: its number (what the reader connects to) and the container port it targets
    port: int
    target_port: str | int


def service_name(identity: naming.ServiceIdentity) -> str:
    return f"{identity.name}{SUFFIX}"


class EngineMetrics(constructs.Construct):
    """Child ``Service``: headless, selecting the backend's Pods, Ready ones only."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: EngineMetricsProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = props.identity
        self.service = k8s.KubeService(
            self,
            "Service",
            metadata=ident.metadata(name=service_name(ident), component=backend.COMPONENT),
            spec=k8s.ServiceSpec(
                cluster_ip="None",
                publish_not_ready_addresses=False,
                selector=ident.selector_labels(backend.COMPONENT),
                ports=[
                    k8s.ServicePort(
                        name=PORT_NAME,
                        port=props.port,
                        protocol="TCP",
                        target_port=kube.int_or_string(props.target_port),
                    )
                ],
            ),
        )

    @property
    def host(self) -> str:
        ident = self.props.identity
        return ident.service_host(service_name(ident))


def wanted(scaling: llmservice.Scaling) -> bool:
    """Whether this LLMService scales on what its engines report."""
    return scaling.metric is llmservice.ScalingMetric.KV_CACHE_UTIL or scaling.engine_queue_target is not None


def metrics_port(*, runtime: inferenceruntime.InferenceRuntime, recipe: rendering.ServerRecipe) -> int:
    """The metrics port's number: ``spec.metrics.port``, the container port when named as it."""
    metrics = runtime.spec.metrics
    port = metrics.port if metrics is not None else recipe.port_name
    if isinstance(port, int):
        return port
    if port in (recipe.port_name, backend.SERVICE_PORT_NAME):
        return recipe.port
    raise rendering.RenderError(
        f"spec.metrics.port: {port!r} names no port of the container (it has {recipe.port_name!r}); "
        "give the metrics port's number"
    )


def section(
    *,
    scaling: llmservice.Scaling,
    runtime: inferenceruntime.InferenceRuntime,
    recipe: rendering.ServerRecipe,
    host: str,
) -> engines.EngineSignalSection:
    """The scaler's ``engine`` section for this LLMService and runtime."""
    family = recipe.family
    metrics = runtime.spec.metrics
    queue = (metrics.queue_depth,) if metrics is not None else (family.queue_depth_metric,)
    kv: tuple[str, ...] = family.kv_cache_util_metrics
    if metrics is not None and metrics.kv_cache_util is not None:
        kv = (metrics.kv_cache_util,)
    kv_target: float | None = None
    if scaling.metric is llmservice.ScalingMetric.KV_CACHE_UTIL:
        if not kv:
            raise rendering.RenderError(
                f"spec.scaling.metric: kvCacheUtil needs a KV-cache gauge, and engine family "
                f"{family.name} exports none; set the InferenceRuntime's spec.metrics.kvCacheUtil"
            )
        kv_target = scaling.kv_cache_target / 100
    return engines.EngineSignalSection(
        host=host,
        port=metrics_port(runtime=runtime, recipe=recipe),
        path=metrics.path if metrics is not None else family.metrics_path,
        queue_metrics=tuple(n for n in queue if n) if scaling.engine_queue_target is not None else (),
        queue_target=None if scaling.engine_queue_target is None else float(scaling.engine_queue_target),
        kv_cache_metrics=kv if kv_target is not None else (),
        kv_cache_target=kv_target,
    )
