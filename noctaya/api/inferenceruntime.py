"""InferenceRuntime (cluster-scoped, passive): a reusable serving image, its arguments and accelerator.

Fields, defaults and rules are listed in docs/api-reference.md (generated from these models);
extensions are marked. The LLMService reconciler selects a runtime by name, or by vendor and
``priority``, and renders its container: ``args`` and literal ``env`` values may use the
placeholders of ``noctaya.api.templates`` and nothing else.

Rules (pydantic check and CRD CEL share one ``meta.Rule`` where a rule spans fields):
- ``container.image`` non-empty; ``container.port.name`` a DNS label of at most 15 characters,
  ``containerPort`` 1..65535, the family's port when unset (``FAMILY_PORTS``); offline, a ``--port``
  argument must name the same port (``port_problems()``, reported with the reserved fields).
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

from noctaya.api import core, meta, quantities, templates

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


#: the port each family's engine listens on by default: ``container.port.containerPort`` when unset
FAMILY_PORTS: Final[dict[Family, int]] = {
    Family.VLLM: 8000,
    Family.SGLANG: 30000,
    Family.TGI: 80,
    Family.LLAMACPP: 8080,
}
#: the engines' flag naming the port they listen on (``--port N`` or ``--port=N``)
PORT_FLAG: Final = "--port"


def _check_template(value: str) -> str:
    try:
        templates.check_template(value)
    except templates.TemplateError as exc:
        raise ValueError(str(exc)) from None
    return value


#: The most ``container.args`` items and ``container.env`` entries a runtime takes. The API server
#: estimates the placeholder rule's cost as (longest string x pattern length x items), and refuses a
#: CRD whose rule may cost more than 10M; at ``meta.MAX_ITEMS`` (256) the estimate was 10.9M, at 128 it
#: is half that.
MAX_TEMPLATED_ITEMS: Final = 128

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
    container_port: Annotated[int | None, pydantic.Field(ge=1, le=65535)] = None
    """Port number the server listens on; when unset, the family's default port (vllm 8000, sglang
    30000, tgi 80, llamacpp 8080)."""


#: volume names and paths of Noctaya's own mounts in the serving container (cache, pvc://, /dev/shm)
RESERVED_VOLUME_NAMES: Final = ("model-cache", "models", "dshm")
RESERVED_MOUNT_PATHS: Final = ("/cache", "/models", "/dev/shm")
MAX_VOLUMES: Final = 16
#: an absolute path of plain segments: no ``.`` or ``..`` segment, no trailing ``/``, no ``:``
PATH_PATTERN: Final = r"^(/[A-Za-z0-9_][-A-Za-z0-9._]*)+$"

_RESERVED_NAME = meta.Rule(
    rule="!(self in [" + ", ".join(f"'{n}'" for n in RESERVED_VOLUME_NAMES) + "])",
    message="is reserved for Noctaya's own volumes (" + ", ".join(RESERVED_VOLUME_NAMES) + ")",
)
_RESERVED_PATH = meta.Rule(
    rule="![" + ", ".join(f"'{p}'" for p in RESERVED_MOUNT_PATHS) + "]"
    ".exists(p, self == p || self.startsWith(p + '/') || p.startsWith(self + '/'))",
    message="must not be, contain or lie under Noctaya's own mounts ("
    + ", ".join(RESERVED_MOUNT_PATHS)
    + ")",
)


def _not_reserved_name(value: str) -> str:
    if value in RESERVED_VOLUME_NAMES:
        raise ValueError(_RESERVED_NAME.message)
    return value


def _not_reserved_path(value: str) -> str:
    if any(
        value == p or value.startswith(p + "/") or p.startswith(value + "/") for p in RESERVED_MOUNT_PATHS
    ):
        raise ValueError(_RESERVED_PATH.message)
    return value


VolumeName = Annotated[
    str,
    pydantic.Field(
        min_length=1,
        max_length=63,
        pattern=meta.DNS_LABEL_PATTERN,
        json_schema_extra=meta.cel(_RESERVED_NAME),
    ),
    pydantic.AfterValidator(_not_reserved_name),
]
AbsolutePath = Annotated[str, pydantic.Field(min_length=2, max_length=1024, pattern=PATH_PATTERN)]
MountPath = Annotated[
    str,
    pydantic.Field(
        min_length=2, max_length=1024, pattern=PATH_PATTERN, json_schema_extra=meta.cel(_RESERVED_PATH)
    ),
    pydantic.AfterValidator(_not_reserved_path),
]


class HostPathType(enum.StrEnum):
    UNSET = ""
    DIRECTORY_OR_CREATE = "DirectoryOrCreate"
    DIRECTORY = "Directory"
    FILE_OR_CREATE = "FileOrCreate"
    FILE = "File"
    SOCKET = "Socket"
    CHAR_DEVICE = "CharDevice"
    BLOCK_DEVICE = "BlockDevice"


class HostPathSource(meta.ApiModel):
    """A file or directory of the node (driver files, device sockets)."""

    path: AbsolutePath
    """Absolute path on the node."""
    type: HostPathType = HostPathType.UNSET
    """What must exist at the path (Kubernetes' hostPath types); unset checks nothing."""


class ConfigMapSource(meta.ApiModel):
    """The keys of a ConfigMap in the LLMService's namespace, as files."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253, pattern=meta.DNS_SUBDOMAIN_PATTERN)]
    """ConfigMap name."""
    optional: bool = False
    """Start even when the ConfigMap is missing."""


class SecretSource(meta.ApiModel):
    """The keys of a Secret in the LLMService's namespace, as read-only files."""

    secret_name: Annotated[
        str, pydantic.Field(min_length=1, max_length=253, pattern=meta.DNS_SUBDOMAIN_PATTERN)
    ]
    """Secret name."""
    optional: bool = False
    """Start even when the Secret is missing."""


class EmptyDirMedium(enum.StrEnum):
    DEFAULT = ""
    MEMORY = "Memory"


class EmptyDirSource(meta.ApiModel):
    """Scratch space that lives as long as the Pod."""

    medium: EmptyDirMedium = EmptyDirMedium.DEFAULT
    """Node storage (unset) or memory (Memory; counts against the container's memory limit)."""
    size_limit: quantities.Quantity | None = None
    """Upper bound of the space used."""


_ONE_SOURCE = meta.Rule(
    rule="(has(self.hostPath) ? 1 : 0) + (has(self.configMap) ? 1 : 0) + (has(self.secret) ? 1 : 0)"
    " + (has(self.emptyDir) ? 1 : 0) == 1",
    message="exactly one of hostPath, configMap, secret or emptyDir must be set",
)


class Volume(meta.ApiModel):
    """Extension: a volume of the backend Pod, one of a safe subset of Kubernetes' sources."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_ONE_SOURCE,
            fields=("host_path", "config_map", "secret", "empty_dir"),
            holds=lambda host_path, config_map, secret, empty_dir: (
                sum(v is not None for v in (host_path, config_map, secret, empty_dir)) == 1
            ),
        ),
    )

    name: VolumeName
    """Volume name (a DNS label), referenced by volumeMounts."""
    host_path: HostPathSource | None = None
    """A node file or directory."""
    config_map: ConfigMapSource | None = None
    """A ConfigMap's keys as files."""
    secret: SecretSource | None = None
    """A Secret's keys as read-only files."""
    empty_dir: EmptyDirSource | None = None
    """Pod-lifetime scratch space."""


class VolumeMount(meta.ApiModel):
    """Extension: where the serving container sees one of ``container.volumes``."""

    name: VolumeName
    """The volume (one of container.volumes)."""
    mount_path: MountPath
    """Absolute path in the container; not Noctaya's own /cache, /models or /dev/shm."""
    read_only: bool = False
    """Mount read-only."""
    sub_path: Annotated[
        str | None,
        pydantic.Field(
            min_length=1,
            max_length=1024,
            pattern=r"^[A-Za-z0-9_][-A-Za-z0-9._]*(/[A-Za-z0-9_][-A-Za-z0-9._]*)*$",
        ),
    ] = None
    """A relative path inside the volume (no '..')."""


_MOUNTS_NAME_VOLUMES = meta.Rule(
    rule="!has(self.volumeMounts) || self.volumeMounts.all(m, has(self.volumes) && "
    "self.volumes.exists(v, v.name == m.name))",
    message="every volumeMounts name must be one of volumes",
)
_UNIQUE_VOLUMES = meta.Rule(
    rule="!has(self.volumes) || self.volumes.all(v, self.volumes.exists_one(w, w.name == v.name))",
    message="volume names must be unique",
)
_UNIQUE_MOUNT_PATHS = meta.Rule(
    rule="!has(self.volumeMounts) || self.volumeMounts.all(m, self.volumeMounts.exists_one(n, "
    "n.mountPath == m.mountPath))",
    message="volumeMounts mountPaths must be unique",
)


class Container(meta.ApiModel):
    """The serving container: an OpenAI-compatible image, its templated args and env, and its port."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_MOUNTS_NAME_VOLUMES,
            fields=("volumes", "volume_mounts"),
            holds=lambda volumes, volume_mounts: {m.name for m in volume_mounts} <= {v.name for v in volumes},
        ),
        meta.CrossFieldRule(
            cel=_UNIQUE_VOLUMES,
            fields=("volumes",),
            holds=lambda volumes: len({v.name for v in volumes}) == len(volumes),
        ),
        meta.CrossFieldRule(
            cel=_UNIQUE_MOUNT_PATHS,
            fields=("volume_mounts",),
            holds=lambda volume_mounts: len({m.mount_path for m in volume_mounts}) == len(volume_mounts),
        ),
    )

    image: Annotated[str, pydantic.Field(min_length=1, max_length=meta.MAX_STRING)]
    """OpenAI-compatible serving image."""
    args: Annotated[list[TemplateString], pydantic.Field(max_length=MAX_TEMPLATED_ITEMS)] = pydantic.Field(
        default_factory=list
    )
    """Arguments; may use {{ .Model.Path }}, {{ .Service.Name }} and {{ .Service.Namespace }}."""
    env: Annotated[list[TemplatedEnvVar], pydantic.Field(max_length=MAX_TEMPLATED_ITEMS)] = pydantic.Field(
        default_factory=list
    )
    """Environment; literal values may use the same placeholders as args."""
    port: ContainerPort = pydantic.Field(default_factory=ContainerPort)
    """The serving port."""
    volumes: Annotated[list[Volume], pydantic.Field(max_length=MAX_VOLUMES)] = pydantic.Field(
        default_factory=list
    )
    """Extension: extra volumes of the backend Pod (hostPath, configMap, secret or emptyDir)."""
    volume_mounts: Annotated[list[VolumeMount], pydantic.Field(max_length=MAX_VOLUMES)] = pydantic.Field(
        default_factory=list
    )
    """Extension: where the serving container mounts them; a mount at an adapter default's path (the
    Ascend driver files) replaces that default."""


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
    """Where the engine's metrics are and what its gauges are called: the engine signal reads them from
    every Ready replica (LLMService spec.scaling.engineQueueTarget, metric kvCacheUtil); unset, the
    family's names apply."""

    path: Annotated[str, pydantic.Field(min_length=1, pattern=r"^/")] = "/metrics"
    """Metrics path of the engine."""
    port: core.Port = "http"
    """Metrics port, by name or number."""
    queue_depth: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    """Engine metric of waiting requests, e.g. vllm:num_requests_waiting."""
    kv_cache_util: Annotated[str | None, pydantic.Field(min_length=1, max_length=253)] = None
    """Engine metric of KV-cache utilization (0..1), e.g. vllm:kv_cache_usage_perc."""
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

    @property
    def serving_port(self) -> int:
        """``container.port.containerPort``, or the family's default port when it is unset."""
        return self.container.port.container_port or FAMILY_PORTS[self.family]

    def port_problems(self) -> list[meta.FieldProblem]:
        """A ``--port`` argument that names another port than the container port: the engine would
        listen where neither the probes nor the Service look, and never become Ready."""
        args = self.container.args
        problems: list[meta.FieldProblem] = []
        for index, arg in enumerate(args):
            if arg == PORT_FLAG and index + 1 < len(args):
                at, value = index + 1, args[index + 1]
            elif arg.startswith(PORT_FLAG + "="):
                at, value = index, arg.partition("=")[2]
            else:
                continue
            if not value.isdecimal() or int(value) == self.serving_port:
                continue  # a templated value cannot be checked here
            source = (
                f"spec.container.port.containerPort {self.serving_port}"
                if self.container.port.container_port
                else f"the {self.family.value} family's default container port {self.serving_port} "
                "(spec.container.port.containerPort unset)"
            )
            problems.append(
                meta.FieldProblem(
                    path=f"spec.container.args[{at}]",
                    message=f"{PORT_FLAG} {value} disagrees with {source}: the engine would listen where "
                    f"neither its probes nor its Service look; set containerPort: {value} or change "
                    f"{PORT_FLAG}",
                )
            )
        return problems


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
        """Fields that parse but whose feature is reserved and not implemented, and a ``--port``
        argument that disagrees with the container port."""
        problems: list[meta.FieldProblem] = self.spec.port_problems()
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
