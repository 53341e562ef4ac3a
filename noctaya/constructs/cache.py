"""The model cache: a PersistentVolumeClaim ``<name>-cache`` for the PVC strategies.

| strategy       | object                         | servers mount                         |
|----------------|--------------------------------|---------------------------------------|
| NodeLocalPVC   | PVC, ReadWriteOnce             | the claim at /cache, all on one node  |
| SharedPVC      | PVC, ReadWriteMany (RWX class) | the claim at /cache                   |
| HostPath       | none (a node directory)        | hostPath at /cache                    |
| None           | none                           | an emptyDir at /cache                 |
| BakedImage     | reserved: a clear error        |                                       |

A ReadWriteOnce claim attaches to one node, so NodeLocalPVC replicas are kept on that node (required
pod affinity, see ``noctaya.constructs.backend``); replicas it cannot hold stay Pending and are
reported (``CacheReady=False/CacheNodeFull``). Replicas across nodes need SharedPVC or HostPath.

The claim is create-once: size, access mode and class are immutable in practice, so the desired spec is
hashed into ``serving.noctaya.io/spec-hash`` and a change is reported, never applied silently.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import constructs
from cdk8s_plus_28 import k8s

from noctaya.constructs import kube, naming
from noctaya.runtime import delivery

COMPONENT: Final = "cache"


@dataclasses.dataclass(frozen=True, kw_only=True)
class CacheProps:
    """The cache of one LLMService (``spec.cache``)."""

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: ``spec.cache.strategy``: NodeLocalPVC, SharedPVC, HostPath or None (the table above). Default:
    #: ``"NodeLocalPVC"``.
    strategy: str = "NodeLocalPVC"
    #: claim size (``spec.cache.size``, controller default 50Gi). Default: ``"50Gi"``.
    size: str = "50Gi"
    #: ``None`` = the cluster's default StorageClass; SharedPVC needs one with RWX semantics. Default:
    #: ``None``.
    storage_class_name: str | None = None
    #: where HostPath caches live on the node (``<root>/<namespace>/<name>``). Default:
    #: ``delivery.HOST_PATH_ROOT``.
    host_path_root: str = delivery.HOST_PATH_ROOT


class Cache(constructs.Construct):
    """Child ``Resource``: the PVC, for NodeLocalPVC and SharedPVC only."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: CacheProps) -> None:
        super().__init__(scope, id)
        ident = props.identity
        self.props = props
        self.plan = delivery.cache_plan(
            props.strategy,
            host_path_root=props.host_path_root,
            namespace=ident.namespace or "default",
            service=ident.name,
        )
        self.claim: k8s.KubePersistentVolumeClaim | None = None
        self.spec_hash: str | None = None
        if self.plan.access_mode is None:
            return
        self.spec_hash = naming.spec_hash(
            {
                "accessModes": [self.plan.access_mode],
                "storage": props.size,
                "storageClassName": props.storage_class_name,
                "volumeMode": "Filesystem",
            }
        )
        self.claim = k8s.KubePersistentVolumeClaim(
            self,
            "Resource",
            metadata=ident.metadata(
                name=ident.cache,
                component=COMPONENT,
                annotations={naming.SPEC_HASH_ANNOTATION: self.spec_hash},
            ),
            spec=k8s.PersistentVolumeClaimSpec(
                access_modes=[self.plan.access_mode],
                resources=k8s.ResourceRequirements(requests={"storage": kube.quantity(props.size)}),
                storage_class_name=props.storage_class_name,
                volume_mode="Filesystem",
            ),
        )
