"""The prewarm Job ``<name>-prewarm``: stage the weights on the cache once, then write the marker.

It requests no accelerator (it only copies bytes) but keeps the runtime's node selector and
tolerations, so a node-local cache is filled where the servers will run. It is the only writer of the
staged directory; servers mount the finished cache read-only and wait for the marker.

Hub sources (``hf://``, ``modelscope://``) with ``spec.cache.prewarm``: one Python container downloads
``org/name[@revision]`` into ``<dir>.partial`` with the hub's own client, renames it to ``<dir>``
and writes ``<dir>/.noctaya-ready``. Nothing is installed at run time: the container runs the Noctaya
image (the one of the gateways, built from the repository's ``Dockerfile``), which ships both hub
clients pinned (the ``hub`` extra: ``huggingface_hub``, ``modelscope``). It works whatever the engine
image is (a llama.cpp server image has no Python at all; a vLLM image has no ModelScope client), and
an air-gapped cluster needs no package index. An image without the client fails the Job with a message
naming the missing module.

``oci://`` sources (digest-pinned), always staged:

1. init container ``pull``: the pinned ORAS image pulls the artifact into an emptyDir ``/stage``;
   registry credentials come only from a projected ``kubernetes.io/dockerconfigjson`` Secret file
   (``--registry-config``), never from args, env or logs;
2. container ``stage``: rejects symbolic links, special files and names that climb out of ``/stage``,
   copies into ``<dir>.partial`` on the cache, renames it atomically to ``<dir>`` and writes the marker.

Every attempt first removes what an interrupted one left (a ``.partial`` directory, or a directory
without marker): those are untrusted. A complete directory (marker present) is kept as is.

The Job is create-once: its pod template is hashed into ``serving.noctaya.io/spec-hash``.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from typing import Any, Final

import constructs
from cdk8s_plus_28 import k8s

from noctaya import __version__
from noctaya.api import sources
from noctaya.constructs import kube, naming, volumes
from noctaya.runtime import delivery

COMPONENT: Final = "prewarm"
STAGE_DIR: Final = "/stage"
REGISTRY_DIR: Final = "/etc/noctaya/registry"
DOCKERCONFIG_KEY: Final = ".dockerconfigjson"

#: pinned default images (RenderSettings can replace them); the hub download runs the Noctaya image
HUB_IMAGE: Final = f"ghcr.io/noctaya/noctaya:{__version__}"
ORAS_IMAGE: Final = "ghcr.io/oras-project/oras:v1.2.2"
STAGE_IMAGE: Final = "docker.io/library/busybox:1.37.0"
#: default bounds of the Job: retries and the whole Job's deadline
BACKOFF_LIMIT: Final = 3
DEADLINE_SECONDS: Final = 6 * 3600
#: env variables of the runtime that carry hub credentials; the download Job gets them too
HUB_TOKEN_VARIABLES: Final = frozenset({"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "MODELSCOPE_API_TOKEN"})

_HUB_SCRIPT: Final = r"""
import importlib, os, pathlib, shutil, sys
hub, repo, revision = os.environ["HUB"], os.environ["REPO_ID"], os.environ.get("REVISION") or None
target = pathlib.Path(os.environ["MODEL_DIR"])
partial = target.with_name(target.name + ".partial")
marker = target / ".noctaya-ready"
if marker.is_file():
    print(f"prewarm: {repo} already staged in {target}", flush=True)
    sys.exit(0)
for leftover in (partial, target):  # an interrupted attempt's output is untrusted
    if leftover.exists():
        shutil.rmtree(leftover)
module = "huggingface_hub" if hub == "huggingface" else "modelscope"
try:
    importlib.import_module(module)
except ImportError:
    sys.exit(f"prewarm: this image has no {module}; run the Noctaya image, which ships the hub clients")
partial.parent.mkdir(parents=True, exist_ok=True)
if hub == "huggingface":
    from huggingface_hub import snapshot_download
    snapshot_download(repo_id=repo, revision=revision, local_dir=str(partial))
else:
    from modelscope import snapshot_download
    snapshot_download(model_id=repo, revision=revision, local_dir=str(partial))
for path in partial.rglob("*"):
    if path.is_symlink():
        sys.exit(f"prewarm: refusing symbolic link {path.relative_to(partial)}")
partial.rename(target)
marker.write_text(repo + "\n")
print(f"prewarm: {repo} staged in {target}", flush=True)
""".strip()

_STAGE_SCRIPT: Final = r"""
set -eu
dir="$MODEL_DIR"; partial="$dir.partial"; marker="$dir/.noctaya-ready"
if [ -f "$marker" ]; then echo "stage: already staged in $dir"; exit 0; fi
rm -rf "$partial" "$dir"
bad=$(find "$STAGE" ! -type f ! -type d | head -n 5)
if [ -n "$bad" ]; then
  echo "stage: refusing symbolic links or special files:" >&2; echo "$bad" >&2; exit 1
fi
root=$(cd "$STAGE" && pwd -P)
find "$STAGE" -type f | while IFS= read -r f; do
  case "$(cd "$(dirname "$f")" && pwd -P)/" in
    "$root"/*) ;;
    *) echo "stage: path escapes $STAGE: $f" >&2; exit 1 ;;
  esac
done
if [ -z "$(find "$STAGE" -type f | head -n 1)" ]; then echo "stage: the artifact has no files" >&2; exit 1; fi
mkdir -p "$(dirname "$dir")" "$partial"
cp -R "$STAGE"/. "$partial/"
mv "$partial" "$dir"
echo "$ARTIFACT" > "$marker"
echo "stage: $ARTIFACT staged in $dir"
""".strip()


@dataclasses.dataclass(frozen=True, kw_only=True)
class PrewarmProps:
    """The staging Job of one LLMService."""

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: what the Job stages and where (the source and the target directory). Required.
    staging: delivery.StagingPlan
    #: the cache volume the Job writes (read-write). Required.
    cache_volume: delivery.ModelVolume
    #: ``spec.model.source.secretRef.name`` (oci:// only): a kubernetes.io/dockerconfigjson Secret. Default:
    #: ``None``.
    registry_secret: str | None = None
    #: hub credentials, as env entries taken from the runtime (``HUB_TOKEN_VARIABLES`` only, normally
    #: ``valueFrom.secretKeyRef``), so gated repositories download with the engine's own token. Default: none.
    hub_env: tuple[Mapping[str, Any], ...] = ()
    #: the Job Pod's node selector (the backend's, so a node-local cache fills on its node). Default: none.
    node_selector: Mapping[str, str] = dataclasses.field(default_factory=dict)
    #: the Job Pod's tolerations (the backend's). Default: none.
    tolerations: tuple[Mapping[str, Any], ...] = ()
    #: Secrets the Job Pod pulls its images with. Default: none.
    image_pull_secrets: tuple[str, ...] = ()
    #: the image that downloads from a model hub (this release's noctaya image). Default: ``HUB_IMAGE``.
    hub_image: str = HUB_IMAGE
    #: the image that pulls an oci:// artifact. Default: ``ORAS_IMAGE``.
    oras_image: str = ORAS_IMAGE
    #: the small image that moves a staged artifact into the cache. Default: ``STAGE_IMAGE``.
    stage_image: str = STAGE_IMAGE
    #: bound of the ORAS staging emptyDir (oci:// only); the artifact never exceeds the cache it fills.
    #: Default: ``None``.
    stage_size_limit: str | None = None
    #: retries of the Job's Pod. Default: ``BACKOFF_LIMIT``.
    backoff_limit: int = BACKOFF_LIMIT
    #: the whole Job's deadline, in seconds. Default: ``DEADLINE_SECONDS``.
    active_deadline_seconds: int = DEADLINE_SECONDS


def _writer_security_context(cache: delivery.ModelVolume) -> k8s.SecurityContext:
    """The containers that write the cache. On a claim they run as the non-root user and write
    through the Pod's ``fsGroup`` (the kubelet makes the volume group-writable): the ``restricted``
    Pod Security Standard. A HostPath directory takes no ``fsGroup`` and belongs to root, so there
    they run as root (said explicitly: the Noctaya image defaults to a non-root user) — still without
    privilege escalation or any capability."""
    if cache.host_path is not None:
        return k8s.SecurityContext(
            run_as_user=0,
            allow_privilege_escalation=False,
            capabilities=k8s.Capabilities(drop=["ALL"]),
            seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
        )
    return volumes.restricted_security_context()


def _hub_container(props: PrewarmProps, source: sources.HubSource, mount: k8s.VolumeMount) -> k8s.Container:
    env = [
        k8s.EnvVar(name="HUB", value=source.hub),
        k8s.EnvVar(name="REPO_ID", value=source.repo_id),
        k8s.EnvVar(name="REVISION", value=source.revision or ""),
        k8s.EnvVar(name="MODEL_DIR", value=props.staging.target_dir),
        k8s.EnvVar(name="HF_HUB_DISABLE_TELEMETRY", value="1"),
        k8s.EnvVar(name="HOME", value="/tmp"),
        *kube.env_vars(props.hub_env),
    ]
    return k8s.Container(
        name="download",
        image=props.hub_image,
        command=["python", "-c", _HUB_SCRIPT],
        env=env,
        volume_mounts=[mount, k8s.VolumeMount(name="tmp", mount_path="/tmp")],
        resources=k8s.ResourceRequirements(
            requests=kube.quantities({"cpu": "500m", "memory": "1Gi"}),
            limits=kube.quantities({"memory": "4Gi"}),
        ),
        security_context=_writer_security_context(props.cache_volume),
    )


def _oci_containers(
    props: PrewarmProps, source: sources.OciSource, mount: k8s.VolumeMount
) -> tuple[k8s.Container, k8s.Container]:
    args = ["pull", source.reference, "--output", STAGE_DIR, "--no-tty"]
    pull_mounts = [k8s.VolumeMount(name="stage", mount_path=STAGE_DIR)]
    if props.registry_secret:
        args += ["--registry-config", f"{REGISTRY_DIR}/config.json"]
        pull_mounts.append(k8s.VolumeMount(name="registry", mount_path=REGISTRY_DIR, read_only=True))
    pull = k8s.Container(
        name="pull",
        image=props.oras_image,
        command=["oras"],
        args=args,
        env=[k8s.EnvVar(name="HOME", value="/tmp")],
        volume_mounts=[*pull_mounts, k8s.VolumeMount(name="tmp", mount_path="/tmp")],
        resources=k8s.ResourceRequirements(
            requests=kube.quantities({"cpu": "250m", "memory": "256Mi"}),
            limits=kube.quantities({"memory": "1Gi"}),
        ),
        security_context=volumes.restricted_security_context(),
    )
    stage = k8s.Container(
        name="stage",
        image=props.stage_image,
        command=["/bin/sh", "-c", _STAGE_SCRIPT],
        env=[
            k8s.EnvVar(name="MODEL_DIR", value=props.staging.target_dir),
            k8s.EnvVar(name="ARTIFACT", value=source.reference),
            k8s.EnvVar(name="STAGE", value=STAGE_DIR),
        ],
        volume_mounts=[k8s.VolumeMount(name="stage", mount_path=STAGE_DIR, read_only=True), mount],
        resources=k8s.ResourceRequirements(
            requests=kube.quantities({"cpu": "100m", "memory": "64Mi"}),
            limits=kube.quantities({"memory": "256Mi"}),
        ),
        security_context=_writer_security_context(props.cache_volume),
    )
    return pull, stage


class Prewarm(constructs.Construct):
    """Child ``Resource``: the Job."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: PrewarmProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = props.identity
        staging = props.staging
        if props.cache_volume.empty_dir:
            raise ValueError("spec.cache.strategy: a prewarm Job needs a PVC or HostPath cache")
        if props.hub_env and staging.kind != "hub":
            raise ValueError("hub_env: only for hub sources")
        if props.registry_secret and staging.kind != "oci":
            raise ValueError("spec.model.source.secretRef: only allowed for oci:// sources")
        writable = dataclasses.replace(props.cache_volume, read_only=False)  # the Job is the only writer
        mount = volumes.mount(writable)
        pod_volumes = [volumes.volume(writable), k8s.Volume(name="tmp", empty_dir=k8s.EmptyDirVolumeSource())]
        init: list[k8s.Container] | None = None
        if isinstance(staging.source, sources.OciSource):
            pull, stage = _oci_containers(props, staging.source, mount)
            init, containers = [pull], [stage]
            limit = kube.quantity(props.stage_size_limit) if props.stage_size_limit else None
            pod_volumes.append(k8s.Volume(name="stage", empty_dir=k8s.EmptyDirVolumeSource(size_limit=limit)))
            if props.registry_secret:
                pod_volumes.append(
                    volumes.secret_volume(
                        name="registry",
                        secret=props.registry_secret,
                        items={DOCKERCONFIG_KEY: "config.json"},
                    )
                )
        else:
            containers = [_hub_container(props, staging.source, mount)]
        self.spec_hash = naming.props_hash(props)
        self.job = k8s.KubeJob(
            self,
            "Resource",
            metadata=ident.metadata(
                name=ident.prewarm,
                component=COMPONENT,
                annotations={naming.SPEC_HASH_ANNOTATION: self.spec_hash},
            ),
            spec=k8s.JobSpec(
                backoff_limit=props.backoff_limit,
                active_deadline_seconds=props.active_deadline_seconds,
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=ident.labels(COMPONENT)),
                    spec=k8s.PodSpec(
                        restart_policy="Never",
                        init_containers=init,
                        containers=containers,
                        volumes=pod_volumes,
                        node_selector=dict(props.node_selector) or None,
                        tolerations=[kube.toleration(t) for t in props.tolerations] or None,
                        automount_service_account_token=False,
                        enable_service_links=False,
                        image_pull_secrets=kube.pull_secrets(props.image_pull_secrets),
                        # the non-root writers write the claim, and the non-root pull container reads
                        # the 0440 registry file, through this group
                        security_context=k8s.PodSecurityContext(
                            fs_group=volumes.NONROOT_UID, fs_group_change_policy="OnRootMismatch"
                        )
                        if props.registry_secret or props.cache_volume.host_path is None
                        else None,
                    ),
                ),
            ),
        )


def describe(staging: delivery.StagingPlan) -> str:
    """One line for logs and status: what the Job stages where."""
    return f"{staging.kind} {shlex.quote(str(staging.source))} -> {staging.target_dir}"
