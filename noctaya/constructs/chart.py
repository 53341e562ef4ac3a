"""``LLMServiceChart``: every object of one LLMService, composed from the family constructs.

    app = cdk8s.App()
    LLMServiceChart(app, "qwen", service=service, runtime=runtime, settings=RenderSettings())
    app.synth()

The chart selects nothing (the caller passes the selected runtime, see
``noctaya.runtime.selection``), renders the server recipe (``noctaya.runtime.rendering``) and adds, in
this order: cache PVC, prewarm Job, backend, the engines' headless Service (when scaling reads them),
aggregate scaler (gateways > 1), gateway, ScaledObject.
Names are deterministic (``disable_resource_name_hashes``), every object carries the LLMService label
and the owner references of the settings.
"""

from __future__ import annotations

from typing import Final

import cdk8s
import constructs

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import (
    autoscaling,
    backend,
    cache,
    enginemetrics,
    gateway,
    naming,
    prewarm,
    scaler,
    settings,
)
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract
from noctaya.runtime import delivery, rendering

_RESOURCE_KEYS: Final = ("cpu", "memory")


def _gateway_resources(
    service: llmservice.LLMService, defaults: settings.RenderSettings
) -> dict[str, dict[str, str]]:
    resources = service.spec.endpoint.resources
    if resources is None:
        return {k: dict(v) for k, v in defaults.gateway_resources.items()}
    out: dict[str, dict[str, str]] = {}
    for part in ("requests", "limits"):
        amounts = getattr(resources, part)
        if amounts is not None:
            values = {k: str(getattr(amounts, k)) for k in _RESOURCE_KEYS if getattr(amounts, k) is not None}
            if values:
                out[part] = values
    return out


class LLMServiceChart(cdk8s.Chart):
    """The chart of one LLMService rendered with one InferenceRuntime.

    Attributes after construction: ``recipe`` (the server recipe), ``backend``, ``gateway``,
    ``autoscaling``, and ``cache`` / ``prewarm`` / ``scaler`` when present (else ``None``).
    """

    def __init__(
        self,
        scope: constructs.Construct,
        id: str,
        *,
        service: llmservice.LLMService,
        runtime: inferenceruntime.InferenceRuntime,
        settings: settings.RenderSettings,
    ) -> None:
        super().__init__(scope, id, namespace=service.namespace, disable_resource_name_hashes=True)
        if not service.name:
            raise rendering.RenderError("metadata.name: an LLMService needs a name")
        spec = service.spec
        ident = naming.ServiceIdentity(
            name=service.name,
            namespace=service.namespace,
            owner_references=naming.owner_references(settings.owner_references),
        )
        self.identity = ident
        self.recipe = recipe = rendering.recipe(
            service=service, runtime=runtime, claim_name=ident.cache, host_path_root=settings.host_path_root
        )
        plan = recipe.delivery
        pull_secrets = tuple(ref.name for ref in spec.image_pull_secrets)
        placement = recipe.placement

        self.cache: cache.Cache | None = _cache(
            scope=self, identity=ident, service=service, plan=plan, settings=settings
        )
        self.prewarm: prewarm.Prewarm | None = _prewarm(
            scope=self,
            identity=ident,
            service=service,
            recipe=recipe,
            settings=settings,
            pull_secrets=pull_secrets,
        )

        self.backend = backend.Backend(
            self,
            "Backend",
            props=backend.BackendProps(
                identity=ident,
                image=recipe.image,
                args=recipe.args,
                env=recipe.env,
                port_name=recipe.port_name,
                port=recipe.port,
                initial_replicas=spec.scaling.min,
                readiness_probe=recipe.readiness_probe,
                startup_probe=recipe.startup_probe,
                liveness_probe=recipe.liveness_probe,
                health_path=recipe.readiness_path,
                cpu=recipe.cpu,
                memory=recipe.memory,
                accelerators=placement.resources,
                node_selector=placement.node_selector,
                tolerations=placement.tolerations,
                scheduler_name=placement.scheduler_name,
                pod_annotations=placement.pod_annotations,
                model_volume=plan.volume,
                ready_marker=plan.ready_marker,
                ready_marker_timeout_seconds=settings.marker_wait_seconds,
                wait_image=settings.wait_image,
                pre_stop_drain_seconds=recipe.pre_stop_drain_seconds,
                termination_grace_period_seconds=recipe.termination_grace_period_seconds,
                image_pull_secrets=pull_secrets,
                shared_memory=recipe.shared_memory,
                extra_volumes=recipe.volumes,
                extra_mounts=recipe.volume_mounts,
                share_node=plan.cache is not None
                and plan.cache.access_mode == "ReadWriteOnce"
                and plan.volume.claim_name is not None,
            ),
        )

        endpoint = spec.endpoint
        scaling = spec.scaling
        replicas = endpoint.replicas or settings.default_gateway_replicas
        tls = scaling.external_scaler.tls if scaling.external_scaler else None
        gateway_settings = _gateway_settings(service=service, recipe=recipe, settings=settings)
        scaler_settings = gateway.overlay(
            scaler_contract.ExternalScalerSettings(), target=scaling.target, metric_name=scaling.metric.value
        )
        # scaling on what the engines report: a headless Service of the Ready backend Pods, read by
        # the process serving KEDA
        self.engine_metrics: enginemetrics.EngineMetrics | None = None
        served_target: float = scaling.target
        if enginemetrics.wanted(scaling):
            port = enginemetrics.metrics_port(runtime=runtime, recipe=recipe)
            self.engine_metrics = enginemetrics.EngineMetrics(
                self,
                "EngineMetrics",
                props=enginemetrics.EngineMetricsProps(identity=ident, port=port, target_port=port),
            )
            engine = enginemetrics.section(
                scaling=scaling, runtime=runtime, recipe=recipe, host=self.engine_metrics.host
            )
            scaler_settings = gateway.overlay(scaler_settings, engine=engine)
            served_target = engine.kv_cache_target or scaling.target
        self.scaler: scaler.AggregateScaler | None = None
        if replicas > 1:
            self.scaler = scaler.AggregateScaler(
                self,
                "Scaler",
                props=scaler.AggregateScalerProps(
                    identity=ident,
                    image=settings.gateway_image,
                    scaler=scaler_settings,
                    max_members=scaler.member_bound(replicas),
                    max_member_demand=gateway_settings.max_queue + gateway_settings.max_in_flight,
                    tls_secret=tls.server_secret_name if tls else None,
                    token=settings.scaler_token,
                    image_pull_secrets=pull_secrets,
                ),
            )

        auth = endpoint.authentication
        self.gateway = gateway.Gateway(
            self,
            "Gateway",
            props=gateway.GatewayProps(
                identity=ident,
                image=settings.gateway_image,
                backend_url=self.backend.url,
                replicas=replicas,
                settings=gateway_settings,
                api_key=gateway.SecretKeyRef(name=auth.secret_ref.name, key=auth.secret_ref.key)
                if auth
                else None,
                scaler=scaler_settings,
                scaler_tls_secret=tls.server_secret_name if tls else None,
                resources=_gateway_resources(service, settings),
                image_pull_secrets=pull_secrets,
                pinned_bounds=frozenset(endpoint.pinned_bounds),
            ),
        )

        self.autoscaling = autoscaling.Autoscaling(
            self,
            "Autoscaling",
            props=autoscaling.AutoscalingProps(
                identity=ident,
                min_replicas=scaling.min,
                max_replicas=scaling.max,
                scale_down_stabilization_seconds=int(scaling.scale_down_stabilization.total_seconds),
                target=served_target,
                metric_name=scaling.metric.value,
                authentication_ref=autoscaling.AuthenticationRef(
                    name=tls.authentication_ref.name, kind=tls.authentication_ref.kind.value
                )
                if tls
                else None,
                schedules=tuple(
                    autoscaling.CronWindow(
                        name=schedule.name,
                        start=schedule.start,
                        end=schedule.end_expression,
                        timezone=schedule.timezone,
                        desired_replicas=schedule.min_replicas,
                    )
                    for schedule in scaling.schedules
                ),
            ),
        )


def _cache(
    *,
    scope: constructs.Construct,
    identity: naming.ServiceIdentity,
    service: llmservice.LLMService,
    plan: delivery.DeliveryPlan,
    settings: settings.RenderSettings,
) -> cache.Cache | None:
    """The model cache (a claim or a node directory) when the delivery plan needs one, else ``None``."""
    if plan.cache is None or not plan.cache.needs_claim:
        return None
    spec = service.spec
    return cache.Cache(
        scope,
        "Cache",
        props=cache.CacheProps(
            identity=identity,
            strategy=plan.cache.strategy,
            size=str(spec.cache.effective_size),
            storage_class_name=spec.cache.storage_class_name,
            host_path_root=settings.host_path_root,
        ),
    )


def _prewarm(
    *,
    scope: constructs.Construct,
    identity: naming.ServiceIdentity,
    service: llmservice.LLMService,
    recipe: rendering.ServerRecipe,
    settings: settings.RenderSettings,
    pull_secrets: tuple[str, ...],
) -> prewarm.Prewarm | None:
    """The Job staging the model into the cache when the delivery plan stages it, else ``None``."""
    plan = recipe.delivery
    if plan.staging is None:
        return None
    spec = service.spec
    placement = recipe.placement
    secret = spec.model.source.secret_ref if spec.model.source else None
    return prewarm.Prewarm(
        scope,
        "Prewarm",
        props=prewarm.PrewarmProps(
            identity=identity,
            staging=plan.staging,
            cache_volume=plan.volume,
            registry_secret=secret.name if secret else None,
            hub_env=tuple(e for e in recipe.env if e["name"] in prewarm.HUB_TOKEN_VARIABLES)
            if plan.staging.kind == "hub"
            else (),
            node_selector=placement.node_selector,
            tolerations=placement.tolerations,
            image_pull_secrets=pull_secrets,
            hub_image=settings.hub_image or settings.gateway_image,
            oras_image=settings.oras_image,
            stage_image=settings.stage_image,
            stage_size_limit=str(spec.cache.effective_size) if plan.staging.kind == "oci" else None,
            backoff_limit=settings.prewarm_backoff_limit,
            active_deadline_seconds=settings.prewarm_deadline_seconds,
        ),
    )


def _gateway_settings(
    *, service: llmservice.LLMService, recipe: rendering.ServerRecipe, settings: settings.RenderSettings
) -> gateway_contract.GatewaySettings:
    """The operator's gateway settings with what the LLMService and its server recipe set."""
    endpoint = service.spec.endpoint
    scaling = service.spec.scaling
    return gateway.overlay(
        settings.gateway_settings,
        readiness_path=recipe.readiness_path,
        max_queue=endpoint.max_queue,
        cold_start_mode=endpoint.cold_start.mode.value,
        heartbeat_interval=endpoint.cold_start.heartbeat_interval.total_seconds,
        activation_timeout=scaling.activation_timeout.total_seconds,
        drain_timeout=scaling.drain_timeout.total_seconds,
        cold_routes=[route.model_dump(mode="json") for route in endpoint.cold_routes],
        served_model=endpoint.served_model_name or service.metadata.name,
        forward_authorization=endpoint.forward_authorization,
        warm_access=endpoint.warm_access.value,
        warm_until=None if service.warm_until is None else service.warm_until.isoformat(),
        max_connections_per_peer=min(
            settings.gateway_settings.max_connections_per_peer,
            endpoint.max_connections or settings.gateway_settings.max_connections_per_peer,
        ),
        **endpoint.pinned_bounds,
    )
