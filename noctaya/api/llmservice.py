"""LLMService (namespaced): the model, runtime selection, resources, scaling, cache and endpoint.

Fields, defaults and rules are listed in docs/api-reference.md (generated from these models);
extensions are marked. Every nested block has a default, so a minimal document (model source +
runtime) parses into a fully defaulted object, and the
CRD carries the same defaults (``default: {}`` on the blocks) so the API server fills in the same.

Rules (each is one ``meta.Rule`` / ``meta.CrossFieldRule``: pydantic checks it and reports its message,
the CRD carries its CEL, so both refuse the same documents with the same words):
- ``model``: exactly one of ``source`` / ``catalogRef``; ``source.uri`` is one of the forms of
  ``noctaya.api.sources``; ``source.secretRef`` only for ``oci://``.
- ``runtime``: exactly one of ``name`` / ``selector``; ``selector.vendor`` at least one known vendor.
- ``scaling``: ``min <= max``; ``activationTimeout > 0``; ``scaleDownStabilization`` whole seconds in
  0s..1h; ``drainTimeout >= 0``; at most 16 ``schedules`` with unique names, each a five-field cron
  ``start``, exactly one of ``end`` / ``duration`` and ``minReplicas <= max`` (CEL); offline, also
  every cron field's range, the IANA ``timezone`` (zoneinfo) and a ``duration`` cron can express.
- ``endpoint.coldStart.heartbeatInterval > 0``.
- ``resources.sharedMemory`` (extension): whole ``Mi`` or ``Gi`` (``16Gi``, ``512Mi``), a pattern the
  CRD checks too (no CEL quantity library needed).
- reserved (parse, then ``reserved_field_problems()`` reports them): ``model.catalogRef``,
  ``resources.fraction``, ``cache.strategy: BakedImage``.
- ``metadata.name``: a DNS-1035 label of at most 55 characters (the owned Services are
  ``<name>``, ``<name>-backend`` and ``<name>-scaler``, which must stay DNS labels).
"""

from __future__ import annotations

import datetime
import enum
from typing import Annotated, Any, Final, Literal

import pydantic

from noctaya.api import (
    cron,
    durations,
    gatewaymemory,
    inferenceruntime,
    meta,
    quantities,
    rules,
    servicestatus,
    sources,
)

KIND: Final = "LLMService"
PLURAL: Final = "llmservices"
#: Longest LLMService name: ``<name>-backend`` must still be a 63-character DNS label.
MAX_NAME_LENGTH: Final = 55
NAME_PATTERN: Final = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
NAME_RULE: Final = meta.Rule(
    rule=f"self.metadata.name.size() <= {MAX_NAME_LENGTH} && self.metadata.name.matches('{NAME_PATTERN}')",
    message="metadata.name must be a DNS-1035 label (lowercase letters, digits and '-', starting with a "
    f"letter) of at most {MAX_NAME_LENGTH} characters",
)
#: Extension: hold the backend up until this RFC 3339 time, with no request (the gateways' ``warmUntil``)
WARM_UNTIL_ANNOTATION: Final = "serving.noctaya.io/warm-until"
#: ``resources.sharedMemory``: a whole number of mebibytes or gibibytes, at most 6 digits
SHARED_MEMORY_PATTERN: Final = r"^[1-9][0-9]{0,5}(Mi|Gi)$"
#: Cache size used when ``cache.size`` is unset (a controller default, see docs/api-reference.md).
DEFAULT_CACHE_SIZE: Final = quantities.Quantity.parse("50Gi")

# The status lives in ``noctaya.api.servicestatus``; its names stay importable from here.
Phase = servicestatus.Phase
ConditionType = servicestatus.ConditionType
Reason = servicestatus.Reason
FAILURE_REASONS = servicestatus.FAILURE_REASONS
PROGRESS_REASONS = servicestatus.PROGRESS_REASONS
PhaseTiming = servicestatus.PhaseTiming
Activation = servicestatus.Activation
WarmWindow = servicestatus.WarmWindow
LLMServiceStatus = servicestatus.LLMServiceStatus


# ------------------------------------------------------------------------------------------------- model
class SecretRef(meta.ApiModel):
    """A ``kubernetes.io/dockerconfigjson`` Secret with registry credentials (``oci://`` only)."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253, pattern=meta.DNS_SUBDOMAIN_PATTERN)]
    """Name of the Secret."""


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

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_SECRET_ONLY_OCI,
            fields=("uri", "secret_ref"),
            holds=lambda uri, secret_ref: secret_ref is None or uri.startswith("oci://"),
        ),
    )

    uri: Annotated[
        str,
        pydantic.Field(
            min_length=1,
            max_length=sources.MAX_URI_LENGTH,
            json_schema_extra={
                "pattern": sources.URI_PATTERN,  # the parser's messages are clearer offline
                **meta.cel(*sources.URI_RULES),
            },
        ),
        pydantic.AfterValidator(_check_uri),
    ]
    """hf://org/name[@revision] (or huggingface://), modelscope://org/name[@revision],
    oci://registry/repository@sha256:<digest> (no tags), or pvc://claim[/subpath]."""
    secret_ref: SecretRef | None = None
    """A kubernetes.io/dockerconfigjson Secret for the registry; only allowed for oci:// sources."""

    @property
    def parsed(self) -> sources.ModelSource:
        """The typed source (the URI was checked on parse)."""
        return sources.parse_source(self.uri)


_SOURCE_XOR_CATALOG = meta.Rule(
    rule="has(self.source) != has(self.catalogRef)",
    message="exactly one of source or catalogRef must be set",
)


class ModelSpec(meta.ApiModel):
    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_SOURCE_XOR_CATALOG,
            fields=("source", "catalog_ref"),
            holds=lambda source, catalog_ref: (source is None) != (catalog_ref is None),
        ),
    )

    source: ModelSourceRef | None = None
    """Where the weights come from. Exactly one of source or catalogRef."""
    catalog_ref: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Reserved, not implemented: a model catalog entry instead of a source."""


# ----------------------------------------------------------------------------------------------- runtime
class RuntimeSelector(meta.ApiModel):
    """Vendors in preference order: the first with a runtime wins, then the highest priority within it."""

    vendor: Annotated[list[inferenceruntime.Vendor], pydantic.Field(min_length=1)]
    """Accelerator vendors in order of preference."""


_NAME_XOR_SELECTOR = meta.Rule(
    rule="has(self.name) != has(self.selector)",
    message="exactly one of name or selector must be set",
)


class RuntimeRef(meta.ApiModel):
    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_NAME_XOR_SELECTOR,
            fields=("name", "selector"),
            holds=lambda name, selector: (name is None) != (selector is None),
        ),
    )

    name: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """The InferenceRuntime to use, by name. Exactly one of name or selector."""
    selector: RuntimeSelector | None = None
    """Select an InferenceRuntime by vendor preference, then highest priority; a tie at the top is an
    error."""
    args_override: Annotated[
        list[Annotated[str, pydantic.Field(max_length=meta.MAX_STRING)]],
        pydantic.Field(max_length=meta.MAX_ITEMS),
    ] = pydantic.Field(default_factory=list)
    """Arguments appended after the runtime's rendered args."""


# --------------------------------------------------------------------------------------------- resources
class Fraction(meta.ApiModel):
    """Reserved: fractional accelerators are not implemented."""

    memory: quantities.Quantity | None = None
    """Reserved: accelerator memory per replica."""
    cores: Annotated[int | None, pydantic.Field(ge=1, le=100)] = None
    """Reserved: percentage of accelerator cores per replica."""


class Resources(meta.ApiModel):
    """Backend resources: whole accelerators per replica; cpu is the request, memory request and limit."""

    accelerators: Annotated[int, pydantic.Field(ge=1)] = 1
    """Whole accelerator devices per backend replica."""
    cpu: quantities.Quantity | None = None
    """CPU request of the backend container."""
    memory: quantities.Quantity | None = None
    """Memory request and limit of the backend container."""
    fraction: Fraction | None = None
    """Reserved, not implemented: fractional accelerators."""
    shared_memory: Annotated[
        str | None, pydantic.Field(min_length=3, max_length=8, pattern=SHARED_MEMORY_PATTERN)
    ] = None
    """Extension: size of the memory-backed /dev/shm of the serving container, whole Mi or Gi (e.g.
    16Gi). Default: half of memory when memory is set, else 8Gi. Pages written there count against the
    container's memory limit."""


# ----------------------------------------------------------------------------------------------- scaling
class ScalingMetric(enum.StrEnum):
    QUEUE_DEPTH = "queueDepth"
    KV_CACHE_UTIL = "kvCacheUtil"


class AuthenticationKind(enum.StrEnum):
    TRIGGER_AUTHENTICATION = "TriggerAuthentication"
    CLUSTER_TRIGGER_AUTHENTICATION = "ClusterTriggerAuthentication"


class AuthenticationRef(meta.ApiModel):
    """The KEDA object providing ``caCert``, ``tlsClientCert`` and ``tlsClientKey``."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    """Name of the KEDA authentication object."""
    kind: AuthenticationKind = AuthenticationKind.TRIGGER_AUTHENTICATION
    """TriggerAuthentication (namespaced) or ClusterTriggerAuthentication."""


class ScalerTLS(meta.ApiModel):
    """Mutual TLS between KEDA and the ExternalScaler."""

    server_secret_name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    """Secret with tls.crt, tls.key and ca.crt for the scaler; its certificate must be valid for
    <llmservice>-scaler.<namespace>.svc."""
    authentication_ref: AuthenticationRef
    """KEDA object providing caCert, tlsClientCert and tlsClientKey."""


class ExternalScaler(meta.ApiModel):
    tls: ScalerTLS | None = None
    """Mutual TLS between KEDA and the scaler; plaintext when unset."""


_MIN_LE_MAX = meta.Rule(rule="self.min <= self.max", message="min must not exceed max")
MAX_SCHEDULES: Final = 16
CRON_PATTERN: Final = r"^\s*[0-9A-Za-z*?/,-]+(\s+[0-9A-Za-z*?/,-]+){4}\s*$"
_CRON_RULE = meta.Rule(
    rule=f"self.matches('{CRON_PATTERN.replace(chr(92), chr(92) * 2)}')",
    message="must be a five-field cron expression: minute hour day-of-month month day-of-week",
)
_END_XOR_DURATION = meta.Rule(
    rule="has(self.end) != has(self.duration)", message="exactly one of end or duration must be set"
)
_SCHEDULE_AT_MOST_MAX = meta.Rule(
    rule="!has(self.schedules) || self.schedules.all(s, !has(s.minReplicas) || s.minReplicas <= self.max)",
    message="a schedule's minReplicas must not exceed max",
)
_SCHEDULE_NAMES_UNIQUE = meta.Rule(
    rule="self.all(s, self.exists_one(t, t.name == s.name))", message="schedule names must be unique"
)
_DAY_MINUTES: Final = 24 * 60


def _check_cron(value: str) -> str:
    try:
        return cron.Expression.parse(value).text
    except cron.CronError as exc:
        raise ValueError(str(exc)) from None


def _check_zone(value: str) -> str:
    try:
        cron.zone(value)
    except cron.CronError as exc:
        raise ValueError(str(exc)) from None
    return value


CronExpression = Annotated[
    str,
    pydantic.Field(min_length=1, max_length=cron.MAX_LENGTH, json_schema_extra=meta.cel(_CRON_RULE)),
    pydantic.AfterValidator(_check_cron),
]


class Schedule(meta.ApiModel):
    """Extension: a recurring window during which the backend is kept warm, whatever the demand.

    Rendered as a KEDA ``cron`` trigger beside the demand trigger; KEDA scales to the highest of them,
    so requests still scale the backend above ``minReplicas`` within a window."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_END_XOR_DURATION,
            fields=("end", "duration"),
            holds=lambda end, duration: (end is None) != (duration is None),
        ),
    )

    name: Annotated[str, pydantic.Field(min_length=1, max_length=63, pattern=meta.DNS_LABEL_PATTERN)]
    """Names the window in status and in the trigger."""
    start: CronExpression
    """Five-field cron expression (minute hour day-of-month month day-of-week) of each window's start."""
    end: CronExpression | None = None
    """Cron expression of each window's end. Exactly one of end or duration."""
    duration: rules.PositiveDuration | None = None
    """Length of each window in whole minutes, at most 24h; needs a start at one minute and hour."""
    timezone: Annotated[
        str, pydantic.Field(min_length=1, max_length=64), pydantic.AfterValidator(_check_zone)
    ] = "UTC"
    """IANA time zone the expressions are read in."""
    min_replicas: Annotated[int, pydantic.Field(ge=1)] = 1
    """Backend replicas kept up during the window (KEDA's desiredReplicas); at most scaling.max."""

    @pydantic.model_validator(mode="after")
    def _expressible(self) -> Schedule:
        if self.duration is not None:
            minutes, rest = divmod(self.duration.nanoseconds, 60 * 10**9)
            if rest or not 0 < minutes <= _DAY_MINUTES:
                raise ValueError("duration: must be whole minutes, at most 24h")
            try:
                cron.shifted(cron.Expression.parse(self.start), minutes=minutes)
            except cron.CronError as exc:
                raise ValueError(f"duration: {exc}") from None
        elif self.end == self.start:
            raise ValueError("end: must differ from start (KEDA refuses equal start and end)")
        return self

    @property
    def end_expression(self) -> str:
        """The end as a cron expression: ``end``, or ``start`` shifted by ``duration``."""
        if self.end is not None:
            return self.end
        assert self.duration is not None
        minutes = self.duration.nanoseconds // (60 * 10**9)
        return cron.shifted(cron.Expression.parse(self.start), minutes=minutes)

    def window(self, now: datetime.datetime) -> cron.Window:
        """This schedule's window at ``now`` (aware), by KEDA's rule."""
        return cron.window(
            start=cron.Expression.parse(self.start),
            end=cron.Expression.parse(self.end_expression),
            zone=cron.zone(self.timezone),
            now=now,
        )


def _unique_names(schedules: list[Schedule]) -> list[Schedule]:
    if len({s.name for s in schedules}) != len(schedules):
        raise ValueError(_SCHEDULE_NAMES_UNIQUE.message)
    return schedules


class Scaling(meta.ApiModel):
    """Replica bounds and timing of the backend, owned by KEDA."""

    cross_field_rules = (
        meta.CrossFieldRule(cel=_MIN_LE_MAX, fields=("min", "max"), holds=lambda min, max: min <= max),
        meta.CrossFieldRule(
            cel=_SCHEDULE_AT_MOST_MAX,
            fields=("schedules", "max"),
            holds=lambda schedules, max: all(s.min_replicas <= max for s in schedules),
        ),
    )

    min: Annotated[int, pydantic.Field(ge=0)] = 0
    """Fewest backend replicas; 0 scales to zero."""
    max: Annotated[int, pydantic.Field(ge=1)] = 1
    """Most backend replicas; at least min."""
    metric: ScalingMetric = ScalingMetric.QUEUE_DEPTH
    """Scaling metric: queueDepth (requests the gateways hold, queued and in flight; with
    engineQueueTarget also the engines' own waiting queue) or kvCacheUtil (the replicas' KV-cache use
    against kvCacheTarget, the gateways' count still a floor)."""
    target: Annotated[int, pydantic.Field(ge=1)] = 10
    """Queue-depth target per backend replica (requests held by the gateways)."""
    engine_queue_target: Annotated[int | None, pydantic.Field(ge=1, le=1_000_000)] = None
    """Extension: the engines' waiting requests per backend replica, read from every Ready replica's
    metrics; unset, the engines' queue is not read. The larger demand of this and target wins."""
    kv_cache_target: Annotated[int, pydantic.Field(ge=1, le=100)] = 80
    """Extension: with metric kvCacheUtil, the KV-cache use per backend replica, in percent."""
    activation_timeout: rules.PositiveDuration = durations.Duration.of(minutes=5)
    """How long a cold request waits for a Ready backend; demand stops after it."""
    scale_down_stabilization: rules.StabilizationWindow = durations.Duration.of(minutes=5)
    """HPA scale-down stabilization window and KEDA cooldown; whole seconds, 0s..1h."""
    drain_timeout: rules.NonNegativeDuration = durations.Duration.of(minutes=2)
    """preStop drain time when the runtime enables preStopDrain."""
    external_scaler: ExternalScaler | None = None
    """How KEDA reaches the ExternalScaler."""
    schedules: Annotated[
        list[Schedule],
        pydantic.Field(max_length=MAX_SCHEDULES, json_schema_extra=meta.cel(_SCHEDULE_NAMES_UNIQUE)),
        pydantic.AfterValidator(_unique_names),
    ] = pydantic.Field(default_factory=list)
    """Extension: windows during which the backend is kept warm (KEDA cron triggers), at most 16."""


# ------------------------------------------------------------------------------------------------- cache
class CacheStrategy(enum.StrEnum):
    NODE_LOCAL_PVC = "NodeLocalPVC"
    SHARED_PVC = "SharedPVC"
    HOST_PATH = "HostPath"
    BAKED_IMAGE = "BakedImage"  # reserved
    NONE = "None"


class Cache(meta.ApiModel):
    strategy: CacheStrategy = CacheStrategy.NODE_LOCAL_PVC
    """Where weights are cached: NodeLocalPVC, SharedPVC (needs a RWX class), HostPath or None; BakedImage
    is reserved."""
    size: quantities.Quantity | None = None
    """Cache volume size; 50Gi when unset."""
    storage_class_name: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """StorageClass of the cache volume; the cluster default when unset."""
    prewarm: bool = False
    """Download hub weights with a Job before serving; oci:// sources always stage through a Job."""

    @property
    def effective_size(self) -> quantities.Quantity:
        """``size``, or the controller default of 50Gi."""
        return self.size if self.size is not None else DEFAULT_CACHE_SIZE


# ---------------------------------------------------------------------------------------------- endpoint
class ResourceAmounts(meta.ApiModel):
    cpu: quantities.Quantity | None = None
    """CPU quantity."""
    memory: quantities.Quantity | None = None
    """Memory quantity."""


class GatewayResources(meta.ApiModel):
    """Gateway container requests and limits."""

    requests: ResourceAmounts | None = None
    """Gateway container requests."""
    limits: ResourceAmounts | None = None
    """Gateway container limits."""


class SecretKeyRef(meta.ApiModel):
    name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    """Name of the Secret."""
    key: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    """Key in the Secret holding the API key."""


class Authentication(meta.ApiModel):
    """Bearer API key from a Secret key; missing or wrong keys get 401 on proxied routes."""

    secret_ref: SecretKeyRef
    """Secret key holding the Bearer API key."""


class ColdStartMode(enum.StrEnum):
    KEEPALIVE = "keepalive"
    REJECT = "reject"


class ColdStart(meta.ApiModel):
    mode: ColdStartMode = ColdStartMode.KEEPALIVE
    """keepalive holds cold requests (SSE heartbeats for streams); reject answers 503 with Retry-After."""
    heartbeat_interval: rules.PositiveDuration = durations.Duration.of(seconds=10)
    """Interval of SSE keepalive comments while a streaming request waits."""


#: a cold route's exact path: RFC 3986 path characters, no query or fragment
COLD_ROUTE_PATH = r"^/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*$"
MAX_COLD_ROUTES = 16


class WarmAccess(enum.StrEnum):
    KEY = "key"
    OPEN = "open"
    OFF = "off"


class ColdRouteAnswer(enum.StrEnum):
    MODELS = "models"
    STATUS = "status"


class ColdRoute(meta.ApiModel):
    """Extension: a GET/HEAD route the gateway answers itself while the backend is cold, without
    waking it; proxied as usual once warm."""

    path: Annotated[str, pydantic.Field(min_length=1, max_length=256, pattern=COLD_ROUTE_PATH)]
    """Exact request path, e.g. ``/v1/models`` or ``/health``."""
    answer: ColdRouteAnswer = ColdRouteAnswer.STATUS
    """models: the served model as an OpenAI model list; status: an empty answer with ``status``."""
    status: Annotated[int, pydantic.Field(ge=200, le=599)] = 200
    """HTTP status of a ``status`` answer."""


def _default_cold_routes() -> list[ColdRoute]:
    return [ColdRoute(path="/v1/models", answer=ColdRouteAnswer.MODELS)]


class Endpoint(meta.ApiModel):
    """The gateway in front of the backend."""

    open_ai_compatible: bool = pydantic.Field(default=True, alias="openAICompatible")
    """Informational: the backend speaks the OpenAI API."""
    max_queue: Annotated[int, pydantic.Field(ge=1)] = 100
    """Cold admission slots per gateway replica; a full queue answers 429."""
    resources: GatewayResources | None = None
    """Gateway container resources."""
    authentication: Authentication | None = None
    """Require a Bearer API key on proxied routes."""
    cold_start: ColdStart = pydantic.Field(default_factory=ColdStart)
    """Behaviour while the backend is cold."""
    replicas: Annotated[int | None, pydantic.Field(ge=1)] = None  # extension
    """Extension: gateway replicas; the operator-wide default (1) when unset."""
    cold_routes: Annotated[list[ColdRoute], pydantic.Field(max_length=MAX_COLD_ROUTES)] = pydantic.Field(
        default_factory=_default_cold_routes
    )  # extension
    """Extension: routes answered while the backend is cold, without waking it (default: ``GET
    /v1/models`` answers the served model). Any other path, unknown ``/v1/*`` ones too, wakes it."""
    served_model_name: Annotated[str | None, pydantic.Field(min_length=1, max_length=256)] = None  # extension
    """Extension: the model id a cold ``models`` route answers; the LLMService's name when unset (the
    example runtimes serve the model under that name)."""
    forward_authorization: bool = False  # extension
    """Extension: pass the client's ``Authorization`` header to the engine (for engines started with
    their own ``--api-key``); stripped by default."""
    warm_access: WarmAccess = WarmAccess.KEY  # extension
    """Extension: who may hold the backend up with ``POST /noctaya/warm``: key (a client with an API
    key, see ``authentication``; nobody without one), open (anyone who reaches the gateway, when no
    keys are configured) or off. The warm-until annotation is the owner's and holds either way."""
    max_queued_body_bytes: Annotated[
        int | None, pydantic.Field(ge=1, le=gatewaymemory.MAX_QUEUED_BODY_BYTES)
    ] = None  # extension
    """Extension: bytes of request bodies all queued cold requests of one gateway hold together; when
    unset, the operator's setting (128 MiB), lowered to fit a smaller ``resources.limits.memory``."""
    max_connections: Annotated[int | None, pydantic.Field(ge=1, le=gatewaymemory.MAX_CONNECTIONS)] = (
        None  # extension
    )
    """Extension: client connections one gateway keeps open at once; when unset, the operator's setting
    (1024), lowered to fit a smaller ``resources.limits.memory``."""
    websocket_max_open: Annotated[int | None, pydantic.Field(ge=1, le=gatewaymemory.MAX_CONNECTIONS)] = (
        None  # extension
    )
    """Extension: WebSockets one gateway keeps open at once; when unset, the operator's setting (16),
    lowered to fit a smaller ``resources.limits.memory``."""
    websocket_max_message_bytes: Annotated[
        int | None, pydantic.Field(ge=1, le=gatewaymemory.MAX_MESSAGE_BYTES)
    ] = None  # extension
    """Extension: the largest WebSocket message either way, in bytes; when unset, the operator's
    setting (4 MiB)."""

    @property
    def memory_limit(self) -> quantities.Quantity | None:
        """The gateway container's memory limit: ``resources.limits.memory``, the default 1Gi when
        ``resources`` is unset, None when resources are set without a memory limit."""
        if self.resources is None:
            return quantities.Quantity.parse(gatewaymemory.DEFAULT_LIMIT)
        return self.resources.limits.memory if self.resources.limits else None

    @property
    def pinned_bounds(self) -> dict[str, int]:
        """The memory bounds this endpoint sets itself (attribute name -> value)."""
        return {name: getattr(self, name) for name in gatewaymemory.KEYS if getattr(self, name) is not None}

    def memory_fit(self, *, base: gatewaymemory.Bounds = gatewaymemory.DEFAULTS) -> gatewaymemory.Fit:
        """The gateway's bounds under its memory limit (``noctaya.api.gatewaymemory.fit``);
        ``ValueError`` when the limit cannot hold them."""
        limit = self.memory_limit
        return gatewaymemory.fit(
            limit_bytes=None if limit is None else int(limit),
            limit=None if limit is None else str(limit),
            base=base,
            pinned=self.pinned_bounds,
        )


# -------------------------------------------------------------------------------------------------- spec
class LLMServiceSpec(meta.ApiModel):
    model: ModelSpec
    """The model weights."""
    runtime: RuntimeRef
    """Which InferenceRuntime serves the model."""
    resources: Resources = pydantic.Field(default_factory=Resources)
    """Backend resources."""
    scaling: Scaling = pydantic.Field(default_factory=Scaling)
    """Backend replica bounds and timing (KEDA owns the replicas)."""
    cache: Cache = pydantic.Field(default_factory=Cache)
    """Model cache and prewarming."""
    endpoint: Endpoint = pydantic.Field(default_factory=Endpoint)
    """The always-on gateway in front of the backend."""
    image_pull_secrets: list[meta.LocalObjectReference] = pydantic.Field(default_factory=list)
    """Applied to backend, gateway and prewarm Pods."""


# ------------------------------------------------------------------------------------------------ object
class LLMService(meta.ApiModel):
    """A namespaced LLMService object."""

    api_version: Literal["serving.noctaya.io/v1alpha1"] = "serving.noctaya.io/v1alpha1"
    kind: Literal["LLMService"] = KIND
    metadata: meta.ObjectMeta = pydantic.Field(default_factory=meta.ObjectMeta)
    spec: LLMServiceSpec
    status: LLMServiceStatus | None = None

    @pydantic.model_validator(mode="after")
    def _warm_until_is_a_time(self) -> LLMService:
        self.warm_until  # noqa: B018  (raises ValueError naming the annotation)
        return self

    @property
    def warm_until(self) -> datetime.datetime | None:
        """Extension: the ``serving.noctaya.io/warm-until`` annotation, an RFC 3339 time with its zone,
        until which the gateways hold the backend up without a request; None when unset."""
        text = self.metadata.annotations.get(WARM_UNTIL_ANNOTATION)
        if text is None:
            return None
        try:
            moment = datetime.datetime.fromisoformat(text.strip()) if len(text) <= 64 else None
        except ValueError:
            moment = None
        where = f"metadata.annotations[{WARM_UNTIL_ANNOTATION}]"
        if moment is None or moment.tzinfo is None or "T" not in text.upper():
            raise ValueError(
                f"{where}: {text[:64]!r} is not an RFC 3339 time with a zone, e.g. 2026-12-01T18:00:00Z"
            )
        return meta.utc_instant(moment, what=f"{where}: {text[:64]!r}")

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
        return problems

    def gateway_memory_problems(self) -> list[meta.FieldProblem]:
        """The gateway memory limit cannot hold the bounds (with the default operator settings)."""
        try:
            self.spec.endpoint.memory_fit()
        except ValueError as exc:
            return [meta.FieldProblem(path="spec.endpoint.resources.limits.memory", message=str(exc))]
        return []

    def to_manifest(self) -> dict[str, Any]:
        manifest = super().to_manifest()
        manifest["metadata"] = self.metadata.to_manifest()
        return manifest
