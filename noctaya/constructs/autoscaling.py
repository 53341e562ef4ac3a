"""Autoscaling: the KEDA ScaledObject ``<name>`` that owns the replicas of Deployment ``<name>-backend``.

One ``external-push`` trigger points at the scaler Service (``<name>-scaler.<ns>.svc:9090``):
``StreamIsActive`` activates 0 -> 1 at once, polling of ``GetMetrics`` against the per-replica target
scales 1 -> N. ``scaleDownStabilization`` sets both KEDA's ``cooldownPeriod`` (how long after the last
activity before returning to ``minReplicaCount``) and the HPA's scale-down stabilization window.

Each ``spec.scaling.schedules[]`` entry adds a KEDA ``cron`` trigger (``timezone``, ``start``, ``end``,
``desiredReplicas``; a ``duration`` becomes the ``end`` it implies) named ``schedule-<name>``. KEDA
scales to the highest recommendation of all triggers, so during a window the backend has at least
``minReplicas`` and demand still scales it further; outside every window the demand trigger alone
decides, down to zero.

With ``externalScaler.tls``, the trigger references the KEDA (Cluster)TriggerAuthentication that holds
``caCert``, ``tlsClientCert`` and ``tlsClientKey``; the scaler side mounts the server Secret. The trigger
metadata carries the metric name and target for readers; the scaler's own config is authoritative.
"""

from __future__ import annotations

import dataclasses
from typing import Final, Literal

import constructs

from noctaya.constructs import gateway, naming
from noctaya.imports import keda

COMPONENT: Final = "autoscaling"
TRIGGER_TYPE: Final = "external-push"
CRON_TRIGGER_TYPE: Final = "cron"
_KIND = keda.ScaledObjectSpecTriggersAuthenticationRefKind
_AUTH_KINDS: Final = {
    "TriggerAuthentication": _KIND.TRIGGER_AUTHENTICATION,
    "ClusterTriggerAuthentication": _KIND.CLUSTER_TRIGGER_AUTHENTICATION,
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class AuthenticationRef:
    name: str
    kind: Literal["TriggerAuthentication", "ClusterTriggerAuthentication"] = "TriggerAuthentication"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CronWindow:
    """One KEDA cron trigger: a window ``start``..``end`` (cron, in ``timezone``) at ``desired_replicas``."""

    name: str
    start: str
    end: str
    timezone: str = "UTC"
    desired_replicas: int = 1


@dataclasses.dataclass(frozen=True, kw_only=True)
class AutoscalingProps:
    """The ScaledObject of one LLMService."""

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: fewest backend replicas (``spec.scaling.min``). Default: ``0``.
    min_replicas: int = 0
    #: most backend replicas (``spec.scaling.max``). Default: ``1``.
    max_replicas: int = 1
    #: ``spec.scaling.scaleDownStabilization`` in whole seconds (cooldown and HPA window). Default: ``300``.
    scale_down_stabilization_seconds: int = 300
    #: the served metric's target per backend replica (queue depth, or a KV-cache fraction). Default: ``10``.
    target: float = 10
    #: the metric KEDA asks the ExternalScaler for. Default: ``"queueDepth"``.
    metric_name: str = "queueDepth"
    #: KEDA polling of IsActive/GetMetrics, the Go implementation's 5 s: scaling 1 -> N follows queue growth
    #: within seconds. Activation 0 -> 1 never waits for it (the StreamIsActive push does). Default: ``5``.
    polling_interval_seconds: int = 5
    #: the (Cluster)TriggerAuthentication KEDA dials the ExternalScaler with (mutual TLS); ``None``: plaintext
    #: inside the cluster. Default: ``None``.
    authentication_ref: AuthenticationRef | None = None
    #: ``spec.scaling.schedules``: one cron trigger each, beside the demand trigger. Default: none.
    schedules: tuple[CronWindow, ...] = ()

    @property
    def scaler_address(self) -> str:
        return f"{self.identity.service_host(self.identity.scaler)}:{gateway.GRPC_PORT}"


class Autoscaling(constructs.Construct):
    """Child ``Resource``: the ScaledObject."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: AutoscalingProps) -> None:
        super().__init__(scope, id)
        if props.min_replicas < 0 or props.max_replicas < 1 or props.min_replicas > props.max_replicas:
            raise ValueError(
                f"spec.scaling: need 0 <= min <= max and max >= 1, got min={props.min_replicas} "
                f"max={props.max_replicas}"
            )
        if not 0 <= props.scale_down_stabilization_seconds <= 3600:
            raise ValueError("spec.scaling.scaleDownStabilization: must be within 0s..1h")
        for window in props.schedules:
            if not 1 <= window.desired_replicas <= props.max_replicas:
                raise ValueError(
                    f"spec.scaling.schedules[{window.name}].minReplicas: must be within 1..max "
                    f"({props.max_replicas}), got {window.desired_replicas}"
                )
        self.props = props
        ident = props.identity
        auth = None
        if props.authentication_ref:
            auth = keda.ScaledObjectSpecTriggersAuthenticationRef(
                name=props.authentication_ref.name,
                kind=_AUTH_KINDS[props.authentication_ref.kind],
            )
        self.scaled_object = keda.ScaledObject(
            self,
            "Resource",
            metadata=ident.api_metadata(name=ident.scaled_object, component=COMPONENT),
            spec=keda.ScaledObjectSpec(
                scale_target_ref=keda.ScaledObjectSpecScaleTargetRef(
                    api_version="apps/v1", kind="Deployment", name=ident.backend
                ),
                min_replica_count=props.min_replicas,
                max_replica_count=props.max_replicas,
                polling_interval=props.polling_interval_seconds,
                cooldown_period=props.scale_down_stabilization_seconds,
                advanced=keda.ScaledObjectSpecAdvanced(
                    horizontal_pod_autoscaler_config=keda.ScaledObjectSpecAdvancedHorizontalPodAutoscalerConfig(
                        behavior=keda.ScaledObjectSpecAdvancedHorizontalPodAutoscalerConfigBehavior(
                            scale_down=keda.ScaledObjectSpecAdvancedHorizontalPodAutoscalerConfigBehaviorScaleDown(
                                stabilization_window_seconds=props.scale_down_stabilization_seconds,
                            ),
                        ),
                    ),
                ),
                triggers=[
                    keda.ScaledObjectSpecTriggers(
                        type=TRIGGER_TYPE,
                        name="demand",
                        metric_type=keda.ScaledObjectSpecTriggersMetricType.AVERAGE_VALUE,
                        metadata={
                            "scalerAddress": props.scaler_address,
                            "metricName": props.metric_name,
                            "target": f"{props.target:g}",
                        },
                        authentication_ref=auth,
                    ),
                    *(
                        keda.ScaledObjectSpecTriggers(
                            type=CRON_TRIGGER_TYPE,
                            name=f"schedule-{window.name}",
                            metadata={
                                "timezone": window.timezone,
                                "start": window.start,
                                "end": window.end,
                                "desiredReplicas": str(window.desired_replicas),
                            },
                        )
                        for window in props.schedules
                    ),
                ],
            ),
        )
