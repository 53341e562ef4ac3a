"""Model delivery: where the weights come from, where they live, and what the server mounts.

From a parsed model source, the cache strategy and the prewarm flag this module decides, without any
Kubernetes object yet:

- ``model_path`` — what ``{{ .Model.Path }}`` renders to;
- the cache volume (a PVC ``<name>-cache``, a hostPath, or an emptyDir for ``None``) and whether the
  serving container mounts it read-only;
- the staging step, if any: a prewarm download (hub sources with ``prewarm: true``) or the ORAS copy
  (``oci://``, always staged), the directory it fills and the readiness marker it writes last.

Layout on the cache volume (mounted at ``/cache``)::

    /cache/huggingface/                    HF_HOME of hub clients that download themselves
    /cache/modelscope/                     MODELSCOPE_CACHE, likewise
    /cache/models/<hub>/<org>/<name>/      a prewarmed hub model; marker .noctaya-ready inside
    /cache/models/oci/sha256-<hex>/        a staged OCI artifact; marker .noctaya-ready inside

``pvc://claim[/sub]`` mounts the claim read-only at ``/models`` and needs no cache and no staging.

``NodeLocalPVC`` is one ReadWriteOnce claim: every replica that mounts it must run on the node it is
attached to, so the backend pins its replicas to one node (``noctaya.constructs.backend``) and the
operator reports replicas that node cannot hold. ``SharedPVC`` (ReadWriteMany) and ``HostPath`` (a
directory on every node) spread freely.
When a staging step exists it is the only writer: servers mount the cache read-only and wait for the
marker, so they never read partial output. Without it, servers keep write access (hub clients write
their own cache).
"""

from __future__ import annotations

import dataclasses
from typing import Final, Literal

from noctaya.api import sources

CACHE_MOUNT: Final = "/cache"
MODELS_MOUNT: Final = "/models"
READY_MARKER: Final = ".noctaya-ready"
CACHE_VOLUME: Final = "model-cache"
#: default node directory of HostPath caches (``<root>/<namespace>/<name>``)
HOST_PATH_ROOT: Final = "/var/lib/noctaya/cache"
MODELS_VOLUME: Final = "models"

Strategy = Literal["NodeLocalPVC", "SharedPVC", "HostPath", "BakedImage", "None"]
STRATEGIES: Final = ("NodeLocalPVC", "SharedPVC", "HostPath", "BakedImage", "None")


class DeliveryError(ValueError):
    """A combination of source, cache and prewarm that cannot work (the message names the field)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelVolume:
    """A volume the serving container mounts: exactly one of claim, host path or emptyDir."""

    name: str
    mount_path: str
    read_only: bool
    claim_name: str | None = None
    host_path: str | None = None
    empty_dir: bool = False
    sub_path: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class CachePlan:
    """The cache a strategy asks for: a PVC (access mode), a node directory, or nothing persistent."""

    strategy: Strategy
    access_mode: Literal["ReadWriteOnce", "ReadWriteMany"] | None = None
    host_path: str | None = None

    @property
    def needs_claim(self) -> bool:
        return self.access_mode is not None


@dataclasses.dataclass(frozen=True, kw_only=True)
class StagingPlan:
    """A one-time Job that fills ``target_dir`` on the cache and then writes ``marker``."""

    kind: Literal["hub", "oci"]
    source: sources.HubSource | sources.OciSource
    target_dir: str
    marker: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class DeliveryPlan:
    model_path: str
    cache: CachePlan | None
    volume: ModelVolume
    staging: StagingPlan | None
    env: dict[str, str]

    @property
    def ready_marker(self) -> str | None:
        """The file servers wait for before they start, when something stages the model."""
        return self.staging.marker if self.staging else None


def cache_plan(strategy: str, *, host_path_root: str, namespace: str, service: str) -> CachePlan:
    if strategy == "NodeLocalPVC":
        return CachePlan(strategy="NodeLocalPVC", access_mode="ReadWriteOnce")
    if strategy == "SharedPVC":
        return CachePlan(strategy="SharedPVC", access_mode="ReadWriteMany")
    if strategy == "HostPath":
        return CachePlan(strategy="HostPath", host_path=f"{host_path_root.rstrip('/')}/{namespace}/{service}")
    if strategy == "None":
        return CachePlan(strategy="None")
    if strategy == "BakedImage":
        raise DeliveryError(
            "spec.cache.strategy: BakedImage is reserved and not implemented; "
            "use NodeLocalPVC, SharedPVC, HostPath or None"
        )
    raise DeliveryError(
        f"spec.cache.strategy: unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})"
    )


def _cache_volume(cache: CachePlan, *, claim_name: str, read_only: bool) -> ModelVolume:
    if cache.needs_claim:
        return ModelVolume(
            name=CACHE_VOLUME, mount_path=CACHE_MOUNT, read_only=read_only, claim_name=claim_name
        )
    if cache.host_path:
        return ModelVolume(
            name=CACHE_VOLUME, mount_path=CACHE_MOUNT, read_only=read_only, host_path=cache.host_path
        )
    return ModelVolume(name=CACHE_VOLUME, mount_path=CACHE_MOUNT, read_only=False, empty_dir=True)


def hub_dir(source: sources.HubSource) -> str:
    return f"{CACHE_MOUNT}/models/{source.hub}/{source.org}/{source.name}"


def oci_dir(source: sources.OciSource) -> str:
    return f"{CACHE_MOUNT}/models/oci/{source.digest.replace(':', '-')}"


def plan(
    *,
    source: sources.ModelSource,
    strategy: str,
    prewarm: bool,
    service: str,
    namespace: str,
    claim_name: str,
    host_path_root: str = HOST_PATH_ROOT,
) -> DeliveryPlan:
    """Decide the delivery of ``source`` for LLMService ``namespace/service``."""
    if isinstance(source, sources.PvcSource):
        # pre-staged weights: mounted read-only, no cache, nothing to download
        path = f"{MODELS_MOUNT}/{source.subpath}" if source.subpath else MODELS_MOUNT
        volume = ModelVolume(
            name=MODELS_VOLUME, mount_path=MODELS_MOUNT, read_only=True, claim_name=source.claim
        )
        return DeliveryPlan(model_path=path, cache=None, volume=volume, staging=None, env={})

    cache = cache_plan(strategy, host_path_root=host_path_root, namespace=namespace, service=service)
    staging: StagingPlan | None = None
    if isinstance(source, sources.OciSource):
        target = oci_dir(source)
        staging = StagingPlan(kind="oci", source=source, target_dir=target, marker=f"{target}/{READY_MARKER}")
    elif prewarm:
        target = hub_dir(source)
        staging = StagingPlan(kind="hub", source=source, target_dir=target, marker=f"{target}/{READY_MARKER}")
    if staging is not None and cache.strategy == "None":
        what = "an oci:// source" if staging.kind == "oci" else "spec.cache.prewarm"
        raise DeliveryError(
            f"spec.cache.strategy: None keeps no files between Pods, so {what} cannot be staged; "
            "use NodeLocalPVC, SharedPVC or HostPath"
        )
    volume = _cache_volume(cache, claim_name=claim_name, read_only=staging is not None)
    if staging is not None:
        return DeliveryPlan(
            model_path=staging.target_dir, cache=cache, volume=volume, staging=staging, env={}
        )
    assert isinstance(source, sources.HubSource)
    env = {"HF_HOME": f"{CACHE_MOUNT}/huggingface", "MODELSCOPE_CACHE": f"{CACHE_MOUNT}/modelscope"}
    return DeliveryPlan(model_path=source.repo_id, cache=cache, volume=volume, staging=None, env=env)
