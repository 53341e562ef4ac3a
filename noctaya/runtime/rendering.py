"""Rendering: an LLMService and its InferenceRuntime become one vendor-neutral server recipe.

The recipe holds everything the backend construct needs, as plain values:

- ``args``: the runtime's ``container.args`` with the placeholders substituted
  (``{{ .Model.Path }}`` -> the delivery's model path, ``{{ .Service.Name }}``, ``{{ .Service.Namespace }}``),
  then ``spec.runtime.argsOverride`` appended verbatim;
- ``env``: the runtime's env (literal values rendered the same way; ``valueFrom`` kept as is), then the
  cache variables of hub clients and, for ModelScope sources served without staging, the engine
  family's switch to ModelScope — a variable the runtime sets itself is never overridden;
- probes (runtime's, else the API defaults), port, resources, the accelerator placement (adapter),
  drain and grace, and the model delivery plan;
- ``shared_memory``: the size of the serving container's memory-backed ``/dev/shm``. Engines exchange
  tensors between their worker processes there (NCCL, vLLM's and SGLang's multiprocessing), and a
  container runtime's default of 64 MiB makes tensor-parallel engines fail or fall back to slow paths.
  ``spec.resources.sharedMemory`` sets it; the default is half of ``spec.resources.memory`` — tmpfs
  pages are charged to the container's memory limit, so a larger size could not be used without the
  engine being OOM-killed, and half leaves the other half to the engine process — or
  :data:`DEFAULT_SHARED_MEMORY` (8Gi) when no memory is set: enough for the exchange buffers of eight
  accelerators; the size is a bound, it reserves nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

from noctaya.api import inferenceruntime, llmservice, quantities, sources, templates
from noctaya.runtime import accelerators, delivery, engines, mounts

#: /dev/shm size when neither ``resources.sharedMemory`` nor ``resources.memory`` is set
DEFAULT_SHARED_MEMORY: Final = "8Gi"


class RenderError(ValueError):
    """A runtime or service that cannot be rendered (the message names the field)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ServerRecipe:
    """The serving container and Pod of one LLMService, before any Kubernetes object exists."""

    image: str
    args: tuple[str, ...]
    env: tuple[Mapping[str, Any], ...]
    port_name: str
    port: int
    readiness_probe: Mapping[str, Any]
    startup_probe: Mapping[str, Any]
    liveness_probe: Mapping[str, Any] | None
    #: the HTTP path that answers once the model is loaded (for the gateway's readiness probing)
    readiness_path: str
    cpu: str | None
    memory: str | None
    placement: accelerators.Placement
    delivery: delivery.DeliveryPlan
    family: engines.EngineFamily
    pre_stop_drain_seconds: int | None
    termination_grace_period_seconds: int | None
    #: size limit of the memory-backed /dev/shm (a quantity string)
    shared_memory: str = DEFAULT_SHARED_MEMORY
    #: the runtime's extra volumes and the adapter's host files (``noctaya.runtime.mounts``)
    volumes: tuple[mounts.ExtraVolume, ...] = ()
    volume_mounts: tuple[mounts.ExtraMount, ...] = ()


def render_args(
    *, runtime: inferenceruntime.InferenceRuntime, service: llmservice.LLMService, model_path: str
) -> list[str]:
    """Runtime args rendered, then ``argsOverride`` appended."""
    rendered = [
        _render(arg, f"spec.container.args[{i}]", service=service, model_path=model_path)
        for i, arg in enumerate(runtime.spec.container.args)
    ]
    return rendered + list(service.spec.runtime.args_override)


def render_env(
    *,
    runtime: inferenceruntime.InferenceRuntime,
    service: llmservice.LLMService,
    model_path: str,
    extra: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Runtime env rendered, then ``extra`` variables the runtime does not set itself."""
    out: list[dict[str, Any]] = []
    for i, var in enumerate(runtime.spec.container.env):
        item = var.to_manifest()
        if var.value is not None:
            item["value"] = _render(
                var.value, f"spec.container.env[{i}].value", service=service, model_path=model_path
            )
        out.append(item)
    present = {item["name"] for item in out}
    out += [{"name": name, "value": value} for name, value in (extra or {}).items() if name not in present]
    return out


def _render(text: str, field: str, *, service: llmservice.LLMService, model_path: str) -> str:
    try:
        return templates.render_template(
            text, model_path=model_path, service_name=service.name, service_namespace=service.namespace
        )
    except templates.TemplateError as exc:
        raise RenderError(f"InferenceRuntime {field}: {exc}") from None


def _compact(value: Any) -> Any:
    """A probe's JSON without empty lists and maps (``httpHeaders: []`` says nothing)."""
    if isinstance(value, dict):
        return {k: _compact(v) for k, v in value.items() if v not in ([], {}, None)}
    return value


def shared_memory_size(resources: llmservice.Resources) -> str:
    """``resources.sharedMemory``, else half of ``resources.memory``, else the default (see above)."""
    if resources.shared_memory is not None:
        return resources.shared_memory
    if resources.memory is not None and int(resources.memory) > 0:
        half = int(resources.memory) // 2
        return str(quantities.Quantity.of(half, resources.memory.format))
    return DEFAULT_SHARED_MEMORY


def _probe_path(probe: Mapping[str, Any], default: str) -> str:
    http = probe.get("httpGet")
    return str(http.get("path") or "/") if http else default


def _delivery_plan(
    *, service: llmservice.LLMService, source: sources.ModelSource, claim_name: str, host_path_root: str
) -> delivery.DeliveryPlan:
    """How the model of ``service`` reaches the server (a delivery refusal is a ``RenderError``)."""
    try:
        return delivery.plan(
            source=source,
            strategy=service.spec.cache.strategy.value,
            prewarm=service.spec.cache.prewarm,
            service=service.name,
            namespace=service.namespace,
            claim_name=claim_name,
            host_path_root=host_path_root,
        )
    except delivery.DeliveryError as exc:
        raise RenderError(str(exc)) from None


def _placement(*, runtime: inferenceruntime.InferenceRuntime, count: int) -> accelerators.Placement:
    """Where and how a server with ``count`` accelerators of ``runtime`` is scheduled."""
    rspec = runtime.spec
    accel = rspec.accelerator
    request = accelerators.AcceleratorRequest(
        vendor=rspec.vendor.value,
        resource_name=accel.resource_name if accel else "",
        count=count,
        node_selector=accel.node_selector if accel else {},
        tolerations=[t.to_manifest() for t in accel.tolerations] if accel else [],
        scheduler_name=accel.scheduler.name if accel and accel.scheduler else None,
        queue=accel.scheduler.queue if accel and accel.scheduler else None,
    )
    try:
        return accelerators.translate(request)
    except accelerators.AcceleratorError as exc:
        raise RenderError(f"InferenceRuntime {runtime.name}: {exc}") from None


def recipe(
    *,
    service: llmservice.LLMService,
    runtime: inferenceruntime.InferenceRuntime,
    claim_name: str,
    host_path_root: str = delivery.HOST_PATH_ROOT,
) -> ServerRecipe:
    """Render the server of ``service`` with ``runtime``."""
    spec = service.spec
    rspec = runtime.spec
    family = engines.family_for(rspec.family.value)
    if spec.model.source is None:
        raise RenderError(
            "spec.model.catalogRef: model catalogs are reserved, not implemented; set spec.model.source"
        )
    for problem in rspec.port_problems():
        raise RenderError(f"InferenceRuntime {runtime.name}: {problem}")
    source = spec.model.source.parsed
    plan = _delivery_plan(
        service=service, source=source, claim_name=claim_name, host_path_root=host_path_root
    )

    extra = dict(plan.env)
    if isinstance(source, sources.HubSource) and source.hub == "modelscope" and plan.staging is None:
        extra.update(family.modelscope_env)

    placement = _placement(runtime=runtime, count=spec.resources.accelerators)
    extra.update({k: v for k, v in placement.env.items() if k not in extra})
    try:
        volumes, volume_mounts = mounts.merge(
            container=rspec.container, host_files=placement.host_files, vendor=rspec.vendor.value
        )
    except mounts.MountError as exc:
        raise RenderError(f"InferenceRuntime {runtime.name}: {exc}") from None

    port = rspec.container.port
    readiness = _compact(rspec.health.effective_readiness(port=port.name).to_manifest())
    startup = _compact(rspec.health.effective_startup(port=port.name).to_manifest())
    liveness = _compact(rspec.health.liveness.to_manifest()) if rspec.health.liveness else None
    drain = int(spec.scaling.drain_timeout.total_seconds) if rspec.lifecycle.pre_stop_drain else None
    return ServerRecipe(
        image=rspec.container.image,
        args=tuple(render_args(runtime=runtime, service=service, model_path=plan.model_path)),
        env=tuple(render_env(runtime=runtime, service=service, model_path=plan.model_path, extra=extra)),
        port_name=port.name,
        port=rspec.serving_port,
        readiness_probe=readiness,
        startup_probe=startup,
        liveness_probe=liveness,
        readiness_path=_probe_path(readiness, family.readiness_path),
        cpu=str(spec.resources.cpu) if spec.resources.cpu is not None else None,
        memory=str(spec.resources.memory) if spec.resources.memory is not None else None,
        placement=placement,
        delivery=plan,
        family=family,
        pre_stop_drain_seconds=drain,
        termination_grace_period_seconds=rspec.lifecycle.termination_grace_period_seconds,
        shared_memory=shared_memory_size(spec.resources),
        volumes=volumes,
        volume_mounts=volume_mounts,
    )
