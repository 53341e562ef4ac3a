"""The model backend: a Deployment without ``spec.replicas`` (KEDA owns it) and its Service.

The Deployment is annotated ``serving.noctaya.io/initial-replicas`` (``scaling.min``): the operator
creates it with that many replicas, so a new service with ``min: 0`` starts no Pod before its first
request (the API server would default a Deployment without ``replicas`` to 1), and applies it without
the field from then on.

The Pod runs the runtime's serving container with:

- the port named ``http`` (also the Service port, so ``/metrics`` is discovered by port name);
- the runtime's probes, defaulting to readiness ``GET /health`` and startup ``GET /health`` (period
  10s, failureThreshold 60) on that port; no liveness probe unless the runtime gives one;
- with ``pre_stop_drain_seconds``: a preStop ``sleep`` so the Service stops routing before the engine
  receives SIGTERM, and a termination grace of at least that plus 10 s;
- the model volume (cache or ``pvc://``), and, when a staging Job fills it, an init container that
  waits (bounded) for the readiness marker;
- with ``shared_memory``: a memory-backed emptyDir ``dshm`` of that size at ``/dev/shm`` (why and how
  it is sized: ``noctaya.runtime.rendering``);
- the extra volumes and mounts (the runtime's ``container.volumes``, the adapter's host files: see
  ``noctaya.runtime.mounts``), after Noctaya's own; a clash of names or paths is refused;
- cpu request, memory request = limit, and the accelerator count as extended-resource request = limit;
- with ``share_node`` (the replicas share one ReadWriteOnce cache claim, ``NodeLocalPVC``): a
  *required* pod affinity to the backend's own selector labels on ``kubernetes.io/hostname``.

Why ``share_node``: a ReadWriteOnce volume attaches to one node at a time. Replicas spread over nodes
would hang in ``ContainerCreating`` (Multi-Attach) on every node but the first, and a rolling update
would start its new Pod elsewhere and wait forever for the old one's volume. With the affinity every
replica (and every surge Pod of a rollout) is scheduled on the node that already runs one, so each
either runs there with the cache or stays Pending as unschedulable — never stuck on a volume. The first
replica after scale-to-zero matches no Pod and goes wherever the claim allows. The limit is what that one
node holds (accelerators, memory); the operator reports replicas beyond it as
``CacheReady=False/CacheNodeFull`` naming the remedy: ``SharedPVC`` (a ReadWriteMany class, one cache
for every node) or ``HostPath`` (a cache per node) to spread replicas, or a lower ``scaling.max``.
Rolling the backend needs room for one more replica on that node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Final

import constructs
from cdk8s_plus_28 import k8s

from noctaya.constructs import kube, naming, volumes
from noctaya.runtime import delivery, mounts

COMPONENT: Final = "backend"
CONTAINER: Final = "server"
DRAIN_GRACE_MARGIN_SECONDS: Final = 10
#: allowance for scheduling and pulling a large serving image, on top of the startup budget
PULL_ALLOWANCE_SECONDS: Final = 300
#: Kubernetes' own default progress deadline; never go below it
MIN_PROGRESS_DEADLINE_SECONDS: Final = 600
#: the Service port is always named ``http`` (metrics discovery), whatever the container calls it
SERVICE_PORT_NAME: Final = "http"
#: pinned default image of the marker wait (RenderSettings can replace it)
WAIT_IMAGE: Final = "docker.io/library/busybox:1.37.0"
#: default bound of the wait for a staging Job's marker
MARKER_WAIT_SECONDS: Final = 3600
HOSTNAME_TOPOLOGY: Final = "kubernetes.io/hostname"
SHM_VOLUME: Final = "dshm"
SHM_PATH: Final = "/dev/shm"


@dataclasses.dataclass(frozen=True, kw_only=True)
class BackendProps:
    """Everything the backend Deployment and Service are made from.

    Probes, env and tolerations are Kubernetes JSON shapes (camelCase), as the API models dump them.
    """

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: the serving container's image (the InferenceRuntime's). Required.
    image: str
    #: the serving container's arguments, rendered from the runtime's templates. Default: none.
    args: tuple[str, ...] = ()
    #: the serving container's environment (Kubernetes ``EnvVar`` shapes). Default: none.
    env: tuple[Mapping[str, Any], ...] = ()
    #: container port name and number; the Service exposes the same port under the same name. Default:
    #: ``"http"``.
    port_name: str = "http"
    #: the container and Service port number. Default: ``8000``.
    port: int = 8000
    #: the replicas the Deployment is created with (``scaling.min``), as an annotation: the Deployment
    #: carries no ``replicas`` (KEDA owns them), so without it the API server would start one. Default:
    #: ``0``.
    initial_replicas: int = 0
    #: ``None`` means the API default (GET /health on the port). Default: ``None``.
    readiness_probe: Mapping[str, Any] | None = None
    #: the startup probe; ``None`` means the API default on ``health_path``. Default: ``None``.
    startup_probe: Mapping[str, Any] | None = None
    #: the liveness probe; ``None`` means none. Default: ``None``.
    liveness_probe: Mapping[str, Any] | None = None
    #: default readiness/startup path (the engine family's). Default: ``"/health"``.
    health_path: str = "/health"
    #: CPU request of the serving container; ``None``: none. Default: ``None``.
    cpu: str | None = None
    #: memory request and limit of the serving container; ``None``: none. Default: ``None``.
    memory: str | None = None
    #: extended resources (accelerators) -> whole-device count. Default: none.
    accelerators: Mapping[str, int] = dataclasses.field(default_factory=dict)
    #: the Pods' node selector (the accelerator's, and the spec's). Default: none.
    node_selector: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: the Pods' tolerations (Kubernetes ``Toleration`` shapes). Default: none.
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: the Pods' scheduler; ``None``: the cluster's default scheduler. Default: ``None``.
    scheduler_name: str | None = None
    #: annotations of the Pod template. Default: none.
    pod_annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: where the weights are mounted from (the cache or a staging target); ``None``: no model volume. Default:
    #: ``None``.
    model_volume: delivery.ModelVolume | None = None
    #: readiness marker to wait for (set when a staging Job fills the cache). Default: ``None``.
    ready_marker: str | None = None
    #: bound of that wait, in seconds. Default: ``MARKER_WAIT_SECONDS``.
    ready_marker_timeout_seconds: int = MARKER_WAIT_SECONDS
    #: the small image of the marker wait. Default: ``WAIT_IMAGE``.
    wait_image: str = WAIT_IMAGE
    #: preStop drain; ``None`` = no preStop hook. Default: ``None``.
    pre_stop_drain_seconds: int | None = None
    #: the runtime's termination grace, widened for ``pre_stop_drain_seconds``; ``None``: the Kubernetes
    #: default (30 s). Default: ``None``.
    termination_grace_period_seconds: int | None = None
    #: Secrets the Pods pull their images with. Default: none.
    image_pull_secrets: tuple[str, ...] = ()
    #: every replica on one node (replicas share a ReadWriteOnce claim); see the module docstring. Default:
    #: ``False``.
    share_node: bool = False
    #: size limit of the memory-backed /dev/shm; ``None`` mounts none (the container runtime's 64 MiB).
    #: Default: ``None``.
    shared_memory: str | None = None
    #: extra volumes of the Pod and mounts of the serving container (``noctaya.runtime.mounts``). Default:
    #: none.
    extra_volumes: tuple[mounts.ExtraVolume, ...] = ()
    #: mounts of ``extra_volumes`` in the serving container. Default: none.
    extra_mounts: tuple[mounts.ExtraMount, ...] = ()


def default_probe(*, path: str, port_name: str, startup: bool) -> dict[str, Any]:
    """The documented default (``spec.probes``, docs/api-reference.md): readiness GET path;
    startup GET path every 10 s, up to 60 failures."""
    probe: dict[str, Any] = {"httpGet": {"path": path, "port": port_name}}
    if startup:
        probe.update(periodSeconds=10, failureThreshold=60)
    return probe


def progress_deadline_seconds(*, startup: Mapping[str, Any], marker_wait_seconds: int | None) -> int:
    """The Deployment's progress deadline: long enough for a slow but healthy cold start.

    A model that legitimately needs the whole startup-probe budget (plus the wait for a prewarm
    marker, plus pulling the image) must not be reported as ``ProgressDeadlineExceeded``; a stuck one
    still is, once that budget is spent.
    """
    budget = int(startup.get("initialDelaySeconds", 0)) + int(startup.get("periodSeconds", 10)) * int(
        startup.get("failureThreshold", 3)
    )
    total = budget + (marker_wait_seconds or 0) + PULL_ALLOWANCE_SECONDS
    return max(MIN_PROGRESS_DEADLINE_SECONDS, total)


def same_node_affinity(selector: Mapping[str, str]) -> k8s.Affinity:
    """Required co-location of a component's Pods on one node (hostname topology)."""
    return k8s.Affinity(
        pod_affinity=k8s.PodAffinity(
            required_during_scheduling_ignored_during_execution=[
                k8s.PodAffinityTerm(
                    topology_key=HOSTNAME_TOPOLOGY,
                    label_selector=k8s.LabelSelector(match_labels=dict(selector)),
                )
            ]
        )
    )


def check_extra(props: BackendProps, *, own_volumes: list[str], own_paths: list[str]) -> None:
    """Refuse extra volumes that take a name or path of the backend's own, or of each other."""
    names = [*own_volumes, *(v.name for v in props.extra_volumes)]
    if len(set(names)) != len(names):
        raise ValueError(f"InferenceRuntime spec.container.volumes: volume names clash: {sorted(names)}")
    extra_paths = [m.mount_path for m in props.extra_mounts]
    if len(set(extra_paths)) != len(extra_paths):
        raise ValueError(
            f"InferenceRuntime spec.container.volumeMounts: mount paths repeat: {sorted(extra_paths)}"
        )
    for own in own_paths:
        for path in extra_paths:
            if path == own or path.startswith(own + "/") or own.startswith(path + "/"):
                raise ValueError(
                    f"InferenceRuntime spec.container.volumeMounts: {path} overlaps Noctaya's {own}"
                )
    known = {v.name for v in props.extra_volumes}
    for m in props.extra_mounts:
        if m.name not in known:
            raise ValueError(f"InferenceRuntime spec.container.volumeMounts: {m.name!r} names no volume")


def grace_seconds(props: BackendProps) -> int | None:
    """The termination grace the Pod gets (the runtime's, widened for the drain)."""
    grace = props.termination_grace_period_seconds
    if props.pre_stop_drain_seconds is not None:
        widened = props.pre_stop_drain_seconds + DRAIN_GRACE_MARGIN_SECONDS
        grace = max(grace or 0, widened)
    return grace


def resources(props: BackendProps) -> k8s.ResourceRequirements:
    """The serving container's requests and limits: CPU requested, memory requested and limited,
    each accelerator requested and limited as whole devices."""
    requests: dict[str, str | int] = {}
    limits: dict[str, str | int] = {}
    if props.cpu:
        requests["cpu"] = props.cpu
    if props.memory:
        requests["memory"] = limits["memory"] = props.memory
    for resource, count in props.accelerators.items():
        requests[resource] = limits[resource] = count
    return k8s.ResourceRequirements(
        requests=kube.quantities(requests) or None, limits=kube.quantities(limits) or None
    )


def storage(props: BackendProps) -> tuple[list[k8s.Volume], list[k8s.VolumeMount]]:
    """The Pod's volumes and the serving container's mounts: the model volume, the memory-backed
    /dev/shm, then the runtime's extra volumes (checked against ours first)."""
    mounts_ = [volumes.mount(props.model_volume)] if props.model_volume else []
    pod_volumes = [volumes.volume(props.model_volume)] if props.model_volume else []
    if props.shared_memory is not None:
        mounts_.append(k8s.VolumeMount(name=SHM_VOLUME, mount_path=SHM_PATH))
        pod_volumes.append(
            k8s.Volume(
                name=SHM_VOLUME,
                empty_dir=k8s.EmptyDirVolumeSource(
                    medium="Memory", size_limit=kube.quantity(props.shared_memory)
                ),
            )
        )
    check_extra(props, own_volumes=[v.name for v in pod_volumes], own_paths=[m.mount_path for m in mounts_])
    pod_volumes += [volumes.extra_volume(v) for v in props.extra_volumes]
    mounts_ += [volumes.extra_mount(m) for m in props.extra_mounts]
    return pod_volumes, mounts_


def pre_stop(props: BackendProps) -> k8s.Lifecycle | None:
    """The preStop drain (a ``sleep``), when asked for."""
    if props.pre_stop_drain_seconds is None:
        return None
    return k8s.Lifecycle(
        pre_stop=k8s.LifecycleHandler(
            exec=k8s.ExecAction(command=["/bin/sh", "-c", f"sleep {props.pre_stop_drain_seconds}"])
        )
    )


class Backend(constructs.Construct):
    """The backend Deployment (child ``Resource``) and Service (child ``Service``)."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: BackendProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = props.identity
        selector = ident.selector_labels(COMPONENT)

        readiness = props.readiness_probe or default_probe(
            path=props.health_path, port_name=props.port_name, startup=False
        )
        startup = props.startup_probe or default_probe(
            path=props.health_path, port_name=props.port_name, startup=True
        )
        pod_volumes, mounts_ = storage(props)
        server = k8s.Container(
            name=CONTAINER,
            image=props.image,
            args=list(props.args) or None,
            env=kube.env_vars(props.env) or None,
            ports=[k8s.ContainerPort(name=props.port_name, container_port=props.port, protocol="TCP")],
            readiness_probe=kube.probe(readiness, kind="readinessProbe"),
            startup_probe=kube.probe(startup, kind="startupProbe"),
            liveness_probe=kube.probe(props.liveness_probe, kind="livenessProbe")
            if props.liveness_probe
            else None,
            resources=resources(props),
            volume_mounts=mounts_ or None,
            lifecycle=pre_stop(props),
            security_context=volumes.engine_security_context(),
        )
        init = None
        marker_wait = None
        if props.ready_marker and props.model_volume:
            marker_wait = props.ready_marker_timeout_seconds
            init = [
                volumes.marker_wait_container(
                    image=props.wait_image,
                    marker=props.ready_marker,
                    timeout_seconds=props.ready_marker_timeout_seconds,
                    model=props.model_volume,
                )
            ]
        pod = k8s.PodSpec(
            containers=[server],
            init_containers=init,
            volumes=pod_volumes or None,
            node_selector=dict(props.node_selector) or None,
            tolerations=[kube.toleration(t) for t in props.tolerations] or None,
            scheduler_name=props.scheduler_name,
            affinity=same_node_affinity(selector) if props.share_node else None,
            image_pull_secrets=kube.pull_secrets(props.image_pull_secrets),
            termination_grace_period_seconds=grace_seconds(props),
            enable_service_links=False,
            # model servers never talk to the Kubernetes API: no token in the Pod
            automount_service_account_token=False,
        )
        self.deployment = k8s.KubeDeployment(
            self,
            "Resource",
            metadata=ident.metadata(
                name=ident.backend,
                component=COMPONENT,
                annotations={naming.INITIAL_REPLICAS_ANNOTATION: str(props.initial_replicas)},
            ),
            spec=k8s.DeploymentSpec(
                # no replicas: KEDA owns the field, and leaving it out keeps apply from fighting KEDA;
                # the operator creates the Deployment with the initial replicas of the annotation
                progress_deadline_seconds=progress_deadline_seconds(
                    startup=startup, marker_wait_seconds=marker_wait
                ),
                selector=k8s.LabelSelector(match_labels=selector),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(
                        labels=ident.labels(COMPONENT),
                        annotations=dict(sorted(props.pod_annotations.items())) or None,
                    ),
                    spec=pod,
                ),
            ),
        )
        self.service = k8s.KubeService(
            self,
            "Service",
            metadata=ident.metadata(name=ident.backend, component=COMPONENT),
            spec=k8s.ServiceSpec(
                selector=selector,
                ports=[
                    k8s.ServicePort(
                        name=SERVICE_PORT_NAME,
                        port=props.port,
                        protocol="TCP",
                        target_port=kube.int_or_string(props.port_name),
                    )
                ],
            ),
        )

    @property
    def url(self) -> str:
        """The in-cluster base URL of the backend Service."""
        ident = self.props.identity
        return f"http://{ident.service_host(ident.backend)}:{self.props.port}"
