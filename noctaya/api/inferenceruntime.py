"""InferenceRuntime (cluster-scoped, passive): a reusable serving image, its arguments and accelerator.

Fields, defaults and rules are listed in docs/api-reference.md (generated from these models);
extensions are marked. The LLMService reconciler selects a runtime by name, or by vendor and
``priority``, and renders its container: ``args`` and literal ``env`` values may use the
placeholders of ``noctaya.api.templates`` and nothing else.

Rules (pydantic check and CRD CEL share one ``meta.Rule`` where a rule spans fields):
- ``container.image`` non-empty; ``container.port.name`` a DNS label of at most 15 characters,
  ``containerPort`` 1..65535.
- every ``container.args`` item and literal ``env`` value uses only the allowed placeholders.
- ``accelerator`` is required unless ``vendor`` is ``cpu`` (extension); ``accelerator.scheduler.queue``
  only with ``scheduler.name: volcano``.
- ``lifecycle.terminationGracePeriodSeconds`` >= 1; ``metrics.queueDepth`` required when ``metrics`` is set.
- reserved: ``accelerator.sharing.supported: true`` parses, and ``reserved_field_problems()`` reports it.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Final, Literal

import pydantic

from noctaya.api import core, meta, templates

KIND: Final = "InferenceRuntime"
PLURAL: Final = "inferenceruntimes"

_CEL_TEMPLATE = f"self.matches(r'{templates.VALID_PATTERN}')"
TEMPLATE_RULE: Final = meta.Rule(
    rule=_CEL_TEMPLATE,
    message="may only use the placeholders " + templates.allowed(),
)


class Vendor(enum.StrEnum):
    """Accelerator vendor; selects the adapter. ``amd``, ``intel-gaudi``, ``cpu`` are extensions."""

    NVIDIA = "nvidia"
    ASCEND = "ascend"
    AMD = "amd"
    INTEL_GAUDI = "intel-gaudi"
    CPU = "cpu"


class Family(enum.StrEnum):
    """Serving engine family. ``sglang``, ``tgi``, ``llamacpp`` are extensions."""

    VLLM = "vllm"
    SGLANG = "sglang"
    TGI = "tgi"
    LLAMACPP = "llamacpp"


def _check_template(value: str) -> str:
    try:
        templates.check_template(value)
    except templates.TemplateError as exc:
        raise ValueError(str(exc)) from None
    return value


#: A string that may carry runtime placeholders (checked offline and by the CRD's CEL rule).
TemplateString = Annotated[
    str,
    pydantic.Field(max_length=meta.MAX_STRING, json_schema_extra=meta.cel(TEMPLATE_RULE)),
    pydantic.AfterValidator(_check_template),
]


class TemplatedEnvVar(core.EnvVar):
    """``corev1.EnvVar`` whose literal ``value`` may use the runtime placeholders."""

    value: TemplateString | None = None


class ContainerPort(meta.ApiModel):
    name: Annotated[str, pydantic.Field(min_length=1, max_length=15, pattern=meta.DNS_LABEL_PATTERN)] = "http"
    """Port name (a DNS label of at most 15 characters)."""
    container_port: Annotated[int, pydantic.Field(ge=1, le=65535)] = 8000
    """Port number the server listens on."""


class Container(meta.ApiModel):
    """The serving container: an OpenAI-compatible image, its templated args and env, and its port."""

    image: Annotated[str, pydantic.Field(min_length=1, max_length=meta.MAX_STRING)]
    """OpenAI-compatible serving image."""
    args: Annotated[list[TemplateString], pydantic.Field(max_length=meta.MAX_ITEMS)] = pydantic.Field(
        default_factory=list
    )
    """Arguments; may use {{ .Model.Path }}, {{ .Service.Name }} and {{ .Service.Namespace }}."""
    env: Annotated[list[TemplatedEnvVar], pydantic.Field(max_length=meta.MAX_ITEMS)] = pydantic.Field(
        default_factory=list
    )
    """Environment; literal values may use the same placeholders as args."""
    port: ContainerPort = pydantic.Field(default_factory=ContainerPort)
    """The serving port."""


class Sharing(meta.ApiModel):
    """Reserved: fractional accelerator sharing is not implemented."""

    supported: bool = False
    """Reserved placeholder; must stay false."""


_QUEUE_NEEDS_VOLCANO = meta.Rule(
    rule="!has(self.queue) || (has(self.name) && self.name == 'volcano')",
    message="queue is only allowed with scheduler name volcano",
)


class Scheduler(meta.ApiModel):
    """Pod ``schedulerName`` and, with Volcano, the Volcano queue."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_QUEUE_NEEDS_VOLCANO,
            fields=("name", "queue"),
            holds=lambda name, queue: queue is None or (name is not None and name == "volcano"),
        ),
    )

    name: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Pod schedulerName, e.g. volcano."""
    queue: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Volcano queue (only with name volcano)."""


class Accelerator(meta.ApiModel):
    """How the backend asks for devices and where it may run."""

    resource_name: Annotated[
        str,
        pydantic.Field(
            min_length=1,
            max_length=316,
            pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
            r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
        ),
    ]
    """Extended resource of the device plugin, e.g. nvidia.com/gpu, huawei.com/Ascend910, amd.com/gpu,
    habana.ai/gaudi."""
    sharing: Sharing = pydantic.Field(default_factory=Sharing)
    """Reserved: accelerator sharing."""
    node_selector: dict[str, str] = pydantic.Field(default_factory=dict)
    """Copied to backend and prewarm Pods."""
    tolerations: Annotated[list[core.Toleration], pydantic.Field(max_length=meta.MAX_ITEMS)] = pydantic.Field(
        default_factory=list
    )
    """Copied to backend and prewarm Pods."""
    scheduler: Scheduler | None = None
    """Scheduler of the backend Pods."""


class Health(meta.ApiModel):
    """Probes of the serving container. Unset: readiness ``GET /health`` on the port, startup ``GET
    /health`` every 10 s up to 60 failures, no liveness (see ``effective_*``)."""

    readiness: core.Probe | None = None
    """Readiness probe; GET /health on the serving port when unset."""
    liveness: core.Probe | None = None
    """Liveness probe; none when unset."""
    startup: core.Probe | None = None
    """Startup probe; GET /health every 10s up to 60 failures when unset."""

    def effective_readiness(self, *, port: str | int) -> core.Probe:
        if self.readiness is not None:
            return self.readiness
        return core.Probe(http_get=core.HTTPGetAction(path="/health", port=port))

    def effective_startup(self, *, port: str | int) -> core.Probe:
        if self.startup is not None:
            return self.startup
        return core.Probe(
            http_get=core.HTTPGetAction(path="/health", port=port), period_seconds=10, failure_threshold=60
        )


class Lifecycle(meta.ApiModel):
    """Shutdown: the grace period and whether preStop sleeps ``scaling.drainTimeout`` (needs /bin/sh)."""

    termination_grace_period_seconds: Annotated[int | None, pydantic.Field(ge=1)] = None
    """Base shutdown budget of the backend Pod."""
    pre_stop_drain: bool = False
    """preStop sleeps scaling.drainTimeout (needs /bin/sh); the grace period is widened to at least
    drainTimeout + 10s."""


class Metrics(meta.ApiModel):
    """Scrape metadata: where the engine's metrics are and what its queue metric is called."""

    path: Annotated[str, pydantic.Field(min_length=1, pattern=r"^/")] = "/metrics"
    """Metrics path of the engine."""
    port: core.Port = "http"
    """Metrics port, by name or number."""
    queue_depth: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    """Engine metric of waiting requests, e.g. vllm:num_requests_waiting."""
    kv_cache_util: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Engine metric of KV-cache utilization."""
    running: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Engine metric of running requests."""
    ttft: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Engine metric of time to first token."""


_ACCELERATOR_REQUIRED = meta.Rule(
    rule="self.vendor == 'cpu' || has(self.accelerator)",
    message="accelerator is required unless vendor is cpu",
)


class InferenceRuntimeSpec(meta.ApiModel):
    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_ACCELERATOR_REQUIRED,
            fields=("vendor", "accelerator"),
            holds=lambda vendor, accelerator: accelerator is not None or vendor == Vendor.CPU,
        ),
    )

    family: Family = Family.VLLM
    """Serving engine family."""
    vendor: Vendor
    """Accelerator vendor; selects the accelerator adapter."""
    priority: Annotated[int, pydantic.Field(ge=-(2**31), le=2**31 - 1)] = 0
    """Higher wins among runtimes of the same vendor."""
    container: Container
    """The serving container."""
    accelerator: Accelerator | None = None
    """Devices and placement; required unless vendor is cpu."""
    health: Health = pydantic.Field(default_factory=Health)
    """Probes of the serving container."""
    lifecycle: Lifecycle = pydantic.Field(default_factory=Lifecycle)
    """Shutdown behaviour."""
    metrics: Metrics | None = None
    """Scrape metadata of the engine."""


class InferenceRuntimeStatus(meta.ApiModel):
    """The runtime controller is passive; status only records what it last saw (extension)."""

    observed_generation: Annotated[int | None, pydantic.Field(ge=0)] = None
    conditions: meta.Conditions = pydantic.Field(default_factory=list)


class InferenceRuntime(meta.ApiModel):
    """A cluster-scoped InferenceRuntime object."""

    api_version: Literal["serving.noctaya.io/v1alpha1"] = "serving.noctaya.io/v1alpha1"
    kind: Literal["InferenceRuntime"] = KIND
    metadata: meta.ObjectMeta = pydantic.Field(default_factory=meta.ObjectMeta)
    spec: InferenceRuntimeSpec
    status: InferenceRuntimeStatus | None = None

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    def reserved_field_problems(self) -> list[meta.FieldProblem]:
        """Fields that parse but whose feature is reserved and not implemented."""
        problems: list[meta.FieldProblem] = []
        accelerator = self.spec.accelerator
        if accelerator is not None and accelerator.sharing.supported:
            problems.append(
                meta.FieldProblem(
                    path="spec.accelerator.sharing.supported",
                    message="accelerator sharing is reserved, not implemented; leave it false",
                )
            )
        return problems

    def to_manifest(self) -> dict[str, Any]:
        manifest = super().to_manifest()
        manifest["metadata"] = self.metadata.to_manifest()
        return manifest
