"""The Pod of a data-plane process: ``noctaya gateway`` or ``noctaya scaler`` run from its config file.

Both components render the same shape, so it is defined here once (:class:`Process`):

- the config file (:func:`render_config`: deterministic YAML, every field) in the ConfigMap of the
  process's name (child ``Config``), mounted read-only at the component's config directory and named
  by ``--config``; its hash is a Pod annotation (``CONFIG_HASH_ANNOTATION``), so a changed config
  rolls the Pods. The hash leaves out the model's live fields (``fields.Model.live_fields``, for the
  gateway ``warmUntil``): the process applies a change of those from the file the kubelet updates in
  place, so a change of them alone rolls nothing (:attr:`Process.config_hash`);
- Secret files projected read-only beside the config (:class:`PodFiles`);
- one container ``noctaya <command> --config <dir>/config.yaml``, non-root with the restricted security
  context, its liveness a TCP connect to a named port;
- the Deployment of the process's name (child ``Resource``), whose Pods have no Kubernetes credentials
  nor Service links, and whose projected files belong to the containers' group
  (:func:`pod_security_context`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import Any, Final, Protocol

import constructs
import yaml
from cdk8s_plus_28 import k8s

from noctaya.constructs import kube, naming, volumes
from noctaya.contract import fields

#: a component's config directory is ``<CONFIG_ROOT>/<command>``, its file ``config.yaml`` there
CONFIG_ROOT: Final = "/etc/noctaya"
CONFIG_FILE: Final = "config.yaml"
CONFIG_HASH_ANNOTATION: Final = "serving.noctaya.io/config-hash"
#: a live process accepts a TCP connect; this many missed periods restart it
LIVENESS_PERIOD_SECONDS: Final = 10
LIVENESS_FAILURES: Final = 3


def render_config(config: fields.Model) -> str:
    """Deterministic YAML for a config file (field order, every field, no aliases)."""
    return _yaml(config.document())


def _yaml(document: dict[str, Any]) -> str:
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False, width=1000)


def pod_security_context() -> k8s.PodSecurityContext:
    """Non-root Pods whose projected Secret files (mode 0440) belong to the containers' group."""
    return k8s.PodSecurityContext(
        run_as_non_root=True,
        fs_group=volumes.NONROOT_UID,
        seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
    )


class Workload(Protocol):
    """What a component's props say of its Pods."""

    @property
    def identity(self) -> naming.ServiceIdentity: ...

    @property
    def image(self) -> str: ...

    @property
    def resources(self) -> Mapping[str, Mapping[str, str]]: ...

    @property
    def image_pull_secrets(self) -> tuple[str, ...]: ...


@dataclasses.dataclass(kw_only=True)
class PodFiles:
    """A Pod's volumes and its container's read-only mounts of them, in the same order."""

    volumes: list[k8s.Volume] = dataclasses.field(default_factory=list)
    mounts: list[k8s.VolumeMount] = dataclasses.field(default_factory=list)

    def add(self, volume: k8s.Volume, *, path: str) -> None:
        """Mount ``volume`` read-only at ``path``."""
        self.volumes.append(volume)
        self.mounts.append(k8s.VolumeMount(name=volume.name, mount_path=path, read_only=True))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Process:
    """``noctaya <command> --config /etc/noctaya/<command>/config.yaml`` for one LLMService, ``config``
    rendered into its ConfigMap; the ConfigMap and the Deployment are both called ``name``, and
    ``command`` is also the component label and the container name."""

    workload: Workload
    command: str
    name: str
    config: fields.Model
    #: a line written as a YAML comment at the top of the config file (why a value is what it is)
    comment: str | None = None
    #: the config first; the component adds its Secret files
    files: PodFiles = dataclasses.field(default_factory=PodFiles, init=False)

    def __post_init__(self) -> None:
        volume = k8s.Volume(name="config", config_map=k8s.ConfigMapVolumeSource(name=self.name))
        self.files.add(volume, path=self.config_dir)

    @property
    def identity(self) -> naming.ServiceIdentity:
        return self.workload.identity

    @property
    def config_dir(self) -> str:
        return f"{CONFIG_ROOT}/{self.command}"

    @functools.cached_property
    def text(self) -> str:
        """The config file as mounted."""
        text = render_config(self.config)
        if self.comment:
            text = f"# {' '.join(self.comment.split())}\n{text}"
        return text

    @functools.cached_property
    def config_hash(self) -> str:
        """The Pods' ``CONFIG_HASH_ANNOTATION``: the config file with its live fields at their defaults
        (so a file without a live value hashes as it always has)."""
        return naming.spec_hash(_yaml(self.config.rollout_document()))

    def config_map(self, scope: constructs.Construct) -> k8s.KubeConfigMap:
        """The child ``Config``: the ConfigMap holding the config file."""
        metadata = self.identity.metadata(name=self.name, component=self.command)
        return k8s.KubeConfigMap(scope, "Config", metadata=metadata, data={CONFIG_FILE: self.text})

    def container(
        self, *, ports: Sequence[k8s.ContainerPort], readiness_probe: k8s.Probe, liveness_port: str
    ) -> k8s.Container:
        """The process's container, with every file added so far mounted."""
        return k8s.Container(
            name=self.command,
            image=self.workload.image,
            command=["noctaya"],
            args=[self.command, "--config", f"{self.config_dir}/{CONFIG_FILE}"],
            ports=list(ports),
            readiness_probe=readiness_probe,
            liveness_probe=k8s.Probe(
                tcp_socket=k8s.TcpSocketAction(port=kube.int_or_string(liveness_port)),
                period_seconds=LIVENESS_PERIOD_SECONDS,
                failure_threshold=LIVENESS_FAILURES,
            ),
            resources=kube.resources(self.workload.resources),
            volume_mounts=self.files.mounts,
            security_context=volumes.restricted_security_context(),
        )

    def deployment(
        self,
        scope: constructs.Construct,
        *,
        replicas: int,
        strategy: k8s.DeploymentStrategy,
        container: k8s.Container,
        affinity: k8s.Affinity | None = None,
        termination_grace_period_seconds: int | None = None,
    ) -> k8s.KubeDeployment:
        """The child ``Resource``: the Deployment of ``container``."""
        ident = self.identity
        template = k8s.PodTemplateSpec(
            metadata=k8s.ObjectMeta(
                labels=ident.labels(self.command),
                annotations={CONFIG_HASH_ANNOTATION: self.config_hash},
            ),
            spec=k8s.PodSpec(
                containers=[container],
                volumes=self.files.volumes,
                affinity=affinity,
                automount_service_account_token=False,
                enable_service_links=False,
                image_pull_secrets=kube.pull_secrets(self.workload.image_pull_secrets),
                security_context=pod_security_context(),
                termination_grace_period_seconds=termination_grace_period_seconds,
            ),
        )
        return k8s.KubeDeployment(
            scope,
            "Resource",
            metadata=ident.metadata(name=self.name, component=self.command),
            spec=k8s.DeploymentSpec(
                replicas=replicas,
                selector=k8s.LabelSelector(match_labels=ident.selector_labels(self.command)),
                strategy=strategy,
                template=template,
            ),
        )
