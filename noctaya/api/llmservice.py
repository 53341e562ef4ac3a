"""LLMService (namespaced): the model, runtime selection, resources, scaling, cache and endpoint.

Fields, defaults and rules are those of API.md; extensions are marked. Every nested block has a
default, so a minimal document (model source + runtime) parses into a fully defaulted object, and the
CRD carries the same defaults (``default: {}`` on the blocks) so the API server fills in the same.

Rules (a cross-field rule is one ``meta.Rule``: the pydantic check raises its message, the CRD carries
its CEL):
- ``model``: exactly one of ``source`` / ``catalogRef``; ``source.uri`` is one of the forms of
  ``noctaya.api.sources``; ``source.secretRef`` only for ``oci://``.
- ``runtime``: exactly one of ``name`` / ``selector``; ``selector.vendor`` at least one known vendor.
- ``scaling``: ``min <= max``; ``activationTimeout > 0``; ``scaleDownStabilization`` whole seconds in
  0s..1h; ``drainTimeout >= 0``.
- ``endpoint.coldStart.heartbeatInterval > 0``.
- reserved (parse, then ``reserved_field_problems()`` reports them): ``model.catalogRef``,
  ``resources.fraction``, ``cache.strategy: BakedImage``, ``scaling.metric: kvCacheUtil``.
- ``metadata.name``: a DNS-1035 label of at most 55 characters (the owned Services are
  ``<name>-gateway`` and ``<name>-scaler``, which must stay DNS labels).
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Final, Literal

import pydantic

from noctaya.api import durations, inferenceruntime, meta, quantities, sources

KIND: Final = "LLMService"
PLURAL: Final = "llmservices"
#: Longest LLMService name: ``<name>-gateway`` must still be a 63-character DNS label.
MAX_NAME_LENGTH: Final = 55
NAME_PATTERN: Final = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
NAME_RULE: Final = meta.Rule(
    rule=f"self.metadata.name.size() <= {MAX_NAME_LENGTH} && self.metadata.name.matches('{NAME_PATTERN}')",
    message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a "
    f"letter) of at most {MAX_NAME_LENGTH} characters",
)
#: Cache size used when ``cache.size`` is unset (a controller default, as in API.md).
DEFAULT_CACHE_SIZE: Final = quantities.Quantity.parse("50Gi")


# ------------------------------------------------------------------------------------------ duration rules
def _duration_rule(rule: meta.Rule, check: Any) -> Any:
    def validate(value: durations.Duration) -> durations.Duration:
        if not check(value):
            raise ValueError(rule.message)
        return value

    return pydantic.AfterValidator(validate)


_POSITIVE = meta.Rule(rule="duration(self) > duration('0s')", message="must be a duration greater than 0s")
_NON_NEGATIVE = meta.Rule(rule="duration(self) >= duration('0s')", message="must not be a negative duration")
_STABILIZATION = meta.Rule(
    rule="duration(self) >= duration('0s') && duration(self) <= duration('1h') "
    "&& duration(string(duration(self).getSeconds()) + 's') == duration(self)",
    message="must be a whole number of seconds between 0s and 1h",
)
_ONE_HOUR = durations.Duration.of(hours=1)

PositiveDuration = Annotated[
    durations.Duration,
    _duration_rule(_POSITIVE, lambda d: d.nanoseconds > 0),
    pydantic.Field(json_schema_extra=meta.cel(_POSITIVE)),
]
NonNegativeDuration = Annotated[
    durations.Duration,
    _duration_rule(_NON_NEGATIVE, lambda d: d.nanoseconds >= 0),
    pydantic.Field(json_schema_extra=meta.cel(_NON_NEGATIVE)),
]
StabilizationWindow = Annotated[
    durations.Duration,
    _duration_rule(
        _STABILIZATION, lambda d: d.is_whole_seconds and 0 <= d.nanoseconds <= _ONE_HOUR.nanoseconds
    ),
    pydantic.Field(json_schema_extra=meta.cel(_STABILIZATION)),
]


# ------------------------------------------------------------------------------------------------- model
class SecretRef(meta.ApiModel):
    """A ``kubernetes.io/dockerconfigjson`` Secret with registry credentials (``oci://`` only)."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253, pattern=meta.DNS_SUBDOMAIN_PATTERN)]


def _check_uri(value: str) -> str:
    try:
        sources.parse_source(value)
    except sources.SourceError as exc:
        raise ValueError(str(exc)) from None
    return value


_SECRET_ONLY_OCI = meta.Rule(
    rule="!has(self.secretRef) || self.uri.startsWith('oci://')",
    message="secretRef is only allowed for oci:// sources",
)


class ModelSourceRef(meta.ApiModel):
    """Where the weights come from: a URI, and registry credentials for ``oci://``."""

    model_config = pydantic.ConfigDict(json_schema_extra=meta.cel(_SECRET_ONLY_OCI))

    uri: Annotated[
        str,
        pydantic.Field(
            min_length=1,
            max_length=sources.MAX_URI_LENGTH,
            json_schema_extra={
                "pattern": sources.URI_PATTERN,  # the parser's messages are clearer offline
                **meta.cel(*(meta.Rule(r.rule, r.message) for r in sources.URI_RULES)),
            },
        ),
        pydantic.AfterValidator(_check_uri),
    ]
    secret_ref: SecretRef | None = None

    @property
    def parsed(self) -> sources.ModelSource:
        """The typed source (the URI was checked on parse)."""
        return sources.parse_source(self.uri)

    @pydantic.model_validator(mode="after")
    def _secret_only_for_oci(self) -> ModelSourceRef:
        if self.secret_ref is not None and not self.uri.startswith("oci://"):
            raise ValueError(_SECRET_ONLY_OCI.message)
        return self


_SOURCE_XOR_CATALOG = meta.Rule(
    rule="has(self.source) != has(self.catalogRef)",
    message="exactly one of source or catalogRef must be set",
)


class ModelSpec(meta.ApiModel):
    model_config = pydantic.ConfigDict(json_schema_extra=meta.cel(_SOURCE_XOR_CATALOG))

    source: ModelSourceRef | None = None
    catalog_ref: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None

    @pydantic.model_validator(mode="after")
    def _source_xor_catalog(self) -> ModelSpec:
        if (self.source is None) == (self.catalog_ref is None):
            raise ValueError(_SOURCE_XOR_CATALOG.message)
        return self


# ----------------------------------------------------------------------------------------------- runtime
class RuntimeSelector(meta.ApiModel):
    """Vendors in preference order: the first with a runtime wins, then the highest priority within it."""

    vendor: Annotated[list[inferenceruntime.Vendor], pydantic.Field(min_length=1, max_length=8)]


_NAME_XOR_SELECTOR = meta.Rule(
    rule="has(self.name) != has(self.selector)",
    message="exactly one of name or selector must be set",
)


class RuntimeRef(meta.ApiModel):
    model_config = pydantic.ConfigDict(json_schema_extra=meta.cel(_NAME_XOR_SELECTOR))

    name: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    selector: RuntimeSelector | None = None
    args_override: Annotated[
        list[Annotated[str, pydantic.Field(max_length=meta.MAX_STRING)]],
        pydantic.Field(max_length=meta.MAX_ITEMS),
    ] = pydantic.Field(default_factory=list)

    @pydantic.model_validator(mode="after")
    def _name_xor_selector(self) -> RuntimeRef:
        if (self.name is None) == (self.selector is None):
            raise ValueError(_NAME_XOR_SELECTOR.message)
        return self


# --------------------------------------------------------------------------------------------- resources
class Fraction(meta.ApiModel):
    """Reserved: fractional accelerators are not implemented."""

    memory: quantities.Quantity | None = None
    cores: Annotated[int | None, pydantic.Field(ge=1, le=100)] = None


class Resources(meta.ApiModel):
    """Backend resources: whole accelerators per replica; cpu is the request, memory request and limit."""

    accelerators: Annotated[int, pydantic.Field(ge=1)] = 1
    cpu: quantities.Quantity | None = None
    memory: quantities.Quantity | None = None
    fraction: Fraction | None = None


# ----------------------------------------------------------------------------------------------- scaling
class ScalingMetric(enum.StrEnum):
    QUEUE_DEPTH = "queueDepth"
    KV_CACHE_UTIL = "kvCacheUtil"  # reserved: only queueDepth is implemented


class AuthenticationKind(enum.StrEnum):
    TRIGGER_AUTHENTICATION = "TriggerAuthentication"
    CLUSTER_TRIGGER_AUTHENTICATION = "ClusterTriggerAuthentication"


class AuthenticationRef(meta.ApiModel):
    """The KEDA object providing ``caCert``, ``tlsClientCert`` and ``tlsClientKey``."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    kind: AuthenticationKind = AuthenticationKind.TRIGGER_AUTHENTICATION


class ScalerTLS(meta.ApiModel):
    """Mutual TLS between KEDA and the ExternalScaler."""

    server_secret_name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    authentication_ref: AuthenticationRef


class ExternalScaler(meta.ApiModel):
    tls: ScalerTLS | None = None


_MIN_LE_MAX = meta.Rule(rule="self.min <= self.max", message="min must not exceed max")


class Scaling(meta.ApiModel):
    """Replica bounds and timing of the backend, owned by KEDA."""

    model_config = pydantic.ConfigDict(json_schema_extra=meta.cel(_MIN_LE_MAX))

    min: Annotated[int, pydantic.Field(ge=0, le=10_000)] = 0
    max: Annotated[int, pydantic.Field(ge=1, le=10_000)] = 1
    metric: ScalingMetric = ScalingMetric.QUEUE_DEPTH
    target: Annotated[int, pydantic.Field(ge=1)] = 10
    activation_timeout: PositiveDuration = durations.Duration.of(minutes=5)
    scale_down_stabilization: StabilizationWindow = durations.Duration.of(minutes=5)
    drain_timeout: NonNegativeDuration = durations.Duration.of(minutes=2)
    external_scaler: ExternalScaler | None = None

    @pydantic.model_validator(mode="after")
    def _min_le_max(self) -> Scaling:
        if self.min > self.max:
            raise ValueError(_MIN_LE_MAX.message)
        return self


# ------------------------------------------------------------------------------------------------- cache
class CacheStrategy(enum.StrEnum):
    NODE_LOCAL_PVC = "NodeLocalPVC"
    SHARED_PVC = "SharedPVC"
    HOST_PATH = "HostPath"
    BAKED_IMAGE = "BakedImage"  # reserved
    NONE = "None"


class Cache(meta.ApiModel):
    strategy: CacheStrategy = CacheStrategy.NODE_LOCAL_PVC
    size: quantities.Quantity | None = None
    storage_class_name: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    prewarm: bool = False

    @property
    def effective_size(self) -> quantities.Quantity:
        """``size``, or the controller default of 50Gi."""
        return self.size if self.size is not None else DEFAULT_CACHE_SIZE


# ---------------------------------------------------------------------------------------------- endpoint
class ResourceAmounts(meta.ApiModel):
    cpu: quantities.Quantity | None = None
    memory: quantities.Quantity | None = None


class GatewayResources(meta.ApiModel):
    """Gateway container requests and limits."""

    requests: ResourceAmounts | None = None
    limits: ResourceAmounts | None = None


class SecretKeyRef(meta.ApiModel):
    name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    key: Annotated[str, pydantic.Field(min_length=1, max_length=253)]


class Authentication(meta.ApiModel):
    """Bearer API key from a Secret key; missing or wrong keys get 401 on proxied routes."""

    secret_ref: SecretKeyRef


class ColdStartMode(enum.StrEnum):
    KEEPALIVE = "keepalive"
    REJECT = "reject"


class ColdStart(meta.ApiModel):
    mode: ColdStartMode = ColdStartMode.KEEPALIVE
    heartbeat_interval: PositiveDuration = durations.Duration.of(seconds=10)


class Endpoint(meta.ApiModel):
    """The gateway in front of the backend."""

    open_ai_compatible: bool = pydantic.Field(default=True, alias="openAICompatible")
    max_queue: Annotated[int, pydantic.Field(ge=1, le=1_000_000)] = 100
    resources: GatewayResources | None = None
    authentication: Authentication | None = None
    cold_start: ColdStart = pydantic.Field(default_factory=ColdStart)
    replicas: Annotated[int | None, pydantic.Field(ge=1, le=100)] = None  # extension


# -------------------------------------------------------------------------------------------------- spec
class LLMServiceSpec(meta.ApiModel):
    model: ModelSpec
    runtime: RuntimeRef
    resources: Resources = pydantic.Field(default_factory=Resources)
    scaling: Scaling = pydantic.Field(default_factory=Scaling)
    cache: Cache = pydantic.Field(default_factory=Cache)
    endpoint: Endpoint = pydantic.Field(default_factory=Endpoint)
    image_pull_secrets: Annotated[list[meta.LocalObjectReference], pydantic.Field(max_length=64)] = (
        pydantic.Field(default_factory=list)
    )


# ------------------------------------------------------------------------------------------------ status
class Phase(enum.StrEnum):
    PENDING = "Pending"
    LOADING = "Loading"
    READY = "Ready"
    SCALED_TO_ZERO = "ScaledToZero"
    DEGRADED = "Degraded"


class ConditionType(enum.StrEnum):
    READY = "Ready"
    DEGRADED = "Degraded"
    AUTOSCALING_READY = "AutoscalingReady"
    CACHE_READY = "CacheReady"  # extension


class Reason(enum.StrEnum):
    """Condition reasons. Progress reasons explain a False ``Ready``; failure reasons set ``Degraded``."""

    # Ready=True
    SERVING = "Serving"
    # progress (Ready=False)
    ACTIVATING = "Activating"
    STARTING = "Starting"
    MODEL_LOADING = "ModelLoading"
    SCHEDULING_DELAYED = "SchedulingDelayed"
    SCALED_TO_ZERO = "ScaledToZero"
    # hard activation failures (Degraded=True)
    IMAGE_PULL_FAILED = "ImagePullFailed"
    OOM_KILLED = "OOMKilled"
    CRASH_LOOP_BACK_OFF = "CrashLoopBackOff"
    CONTAINER_RESTARTING = "ContainerRestarting"
    PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"
    PREWARM_FAILED = "PrewarmFailed"
    HEALTHY = "Healthy"
    # configuration (Ready=False, AutoscalingReady, CacheReady)
    RUNTIME_NOT_FOUND = "RuntimeNotFound"
    RUNTIME_AMBIGUOUS = "RuntimeAmbiguous"
    INVALID_SPEC = "InvalidSpec"
    NOT_IMPLEMENTED = "NotImplemented"
    SCALED_OBJECT_CRD_MISSING = "ScaledObjectCRDMissing"
    CONFIGURED = "Configured"
    CACHE_SPEC_CHANGED = "CacheSpecChanged"
    PREWARMING = "Prewarming"
    PREWARMED = "Prewarmed"


#: Reasons that mark a hard activation failure (``Degraded=True``).
FAILURE_REASONS: Final = frozenset(
    {
        Reason.IMAGE_PULL_FAILED,
        Reason.OOM_KILLED,
        Reason.CRASH_LOOP_BACK_OFF,
        Reason.CONTAINER_RESTARTING,
        Reason.PROGRESS_DEADLINE_EXCEEDED,
        Reason.PREWARM_FAILED,
    }
)
#: Reasons of a False ``Ready`` that only mean "still on its way".
PROGRESS_REASONS: Final = frozenset(
    {
        Reason.ACTIVATING,
        Reason.STARTING,
        Reason.MODEL_LOADING,
        Reason.SCHEDULING_DELAYED,
        Reason.SCALED_TO_ZERO,
    }
)


class PhaseTiming(meta.ApiModel):
    """How long one cold-start stage took (e.g. ``Scheduled``, ``ImagePulled``, ``ModelLoaded``)."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=63)]
    duration: durations.Duration


class Activation(meta.ApiModel):
    """Extension: timings of the last scale-from-zero activation."""

    started_at: datetime.datetime
    ready_at: datetime.datetime | None = None
    phases: Annotated[list[PhaseTiming], pydantic.Field(max_length=16)] = pydantic.Field(default_factory=list)


class LLMServiceStatus(meta.ApiModel):
    observed_generation: Annotated[int | None, pydantic.Field(ge=0)] = None
    phase: Phase | None = None
    resolved_runtime: str | None = None
    replicas: Annotated[int, pydantic.Field(ge=0)] = 0
    endpoint_url: str | None = pydantic.Field(default=None, alias="endpointURL")
    conditions: Annotated[
        list[meta.Condition], pydantic.Field(max_length=32, json_schema_extra=meta.CONDITIONS_LIST)
    ] = pydantic.Field(default_factory=list)
    last_activation: Activation | None = None  # extension


# ------------------------------------------------------------------------------------------------ object
class LLMService(meta.ApiModel):
    """A namespaced LLMService object."""

    api_version: Literal["serving.noctaya.io/v1alpha1"] = "serving.noctaya.io/v1alpha1"
    kind: Literal["LLMService"] = KIND
    metadata: meta.ObjectMeta = pydantic.Field(default_factory=meta.ObjectMeta)
    spec: LLMServiceSpec
    status: LLMServiceStatus | None = None

    @property
    def name(self) -> str:
        return self.metadata.name or ""

    @property
    def namespace(self) -> str:
        return self.metadata.namespace or "default"

    def reserved_field_problems(self) -> list[meta.FieldProblem]:
        """Fields that parse (the CRD accepts them) but whose feature is reserved and not implemented."""
        spec = self.spec
        problems: list[meta.FieldProblem] = []

        def reserved(path: str, what: str) -> None:
            problems.append(meta.FieldProblem(path=path, message=f"{what} is reserved, not implemented"))

        if spec.model.catalog_ref is not None:
            reserved("spec.model.catalogRef", "catalogRef")
        if spec.resources.fraction is not None:
            reserved("spec.resources.fraction", "fractional accelerators (resources.fraction)")
        if spec.cache.strategy is CacheStrategy.BAKED_IMAGE:
            reserved("spec.cache.strategy", "cache strategy BakedImage")
        if spec.scaling.metric is ScalingMetric.KV_CACHE_UTIL:
            reserved("spec.scaling.metric", "scaling metric kvCacheUtil (only queueDepth is implemented)")
        return problems

    def to_manifest(self) -> dict[str, Any]:
        manifest = super().to_manifest()
        manifest["metadata"] = self.metadata.to_manifest()
        return manifest
