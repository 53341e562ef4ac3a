"""The operator's own installation: CRDs, namespace, ServiceAccount, RBAC, Deployment and PDB.

Least privilege, written out per resource:

- cluster-wide: read InferenceRuntimes; read/patch LLMServices, their ``status`` and ``finalizers``;
  full lifecycle of exactly the kinds an LLMService owns (Deployments, Services, ConfigMaps, Secrets,
  PVCs, Jobs, PDBs, KEDA ScaledObjects); read Pods (failure diagnosis); write Events; read CRDs
  (discovery: is KEDA installed?) and Namespaces (kopf's namespace scan);
- in the operator namespace only: Leases for leader election.

The Deployment runs ``noctaya operator`` with 2 replicas (one leads through the Lease, the other
stands by), preferred hostname anti-affinity and a PDB ``minAvailable: 1``; 1 replica is supported
(then without the PDB, which would block node drains).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Final

import cdk8s
import constructs
from cdk8s_plus_28 import k8s

from noctaya.constructs import gateway, kube, volumes

COMPONENT: Final = "operator"
NAME: Final = "noctaya-operator"
GROUP: Final = "serving.noctaya.io"
#: ``/healthz`` and ``/metrics`` of the operator (``--health-listen``)
HEALTH_PORT: Final = 8081
#: the operator's only writable directory (the root filesystem is read-only): jsii unpacks its Node.js
#: runtime into the temporary directory and keeps its package cache under ``$HOME``
SCRATCH_DIR: Final = "/tmp"
SCRATCH_SIZE: Final = "1Gi"

_RULES: Final[tuple[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...]] = (
    # (apiGroups, resources, verbs)
    ((GROUP,), ("inferenceruntimes",), ("get", "list", "watch")),
    ((GROUP,), ("llmservices",), ("get", "list", "watch", "patch", "update")),
    ((GROUP,), ("llmservices/status",), ("get", "patch", "update")),
    ((GROUP,), ("llmservices/finalizers",), ("update",)),
    (("apps",), ("deployments",), ("get", "list", "watch", "create", "patch", "update", "delete")),
    (
        ("",),
        ("services", "configmaps", "secrets", "persistentvolumeclaims"),
        ("get", "list", "watch", "create", "patch", "update", "delete"),
    ),
    (("batch",), ("jobs",), ("get", "list", "watch", "create", "patch", "delete")),
    (("policy",), ("poddisruptionbudgets",), ("get", "list", "watch", "create", "patch", "update", "delete")),
    (("keda.sh",), ("scaledobjects",), ("get", "list", "watch", "create", "patch", "update", "delete")),
    (("",), ("pods",), ("get", "list", "watch")),
    (("", "events.k8s.io"), ("events",), ("create", "patch")),
    (("apiextensions.k8s.io",), ("customresourcedefinitions",), ("get", "list", "watch")),
    (("",), ("namespaces",), ("get", "list", "watch")),
)
_LEASE_RULES: Final = (
    (("coordination.k8s.io",), ("leases",), ("get", "list", "watch", "create", "update", "patch")),
)


@dataclasses.dataclass(frozen=True, kw_only=True)
class OperatorInstallProps:
    """The operator installation."""

    image: str
    namespace: str = "noctaya-system"
    #: 2 = one leader and one standby (the default); 1 is a deliberate single-replica install
    replicas: int = 2
    #: the CustomResourceDefinitions (``noctaya.api.crds``), as manifests
    crds: Sequence[Mapping[str, Any]] = ()
    #: image and arguments of the gateways and scalers the operator renders
    gateway_image: str | None = None
    default_gateway_replicas: int = 1
    create_namespace: bool = True
    resources: Mapping[str, Mapping[str, str]] = dataclasses.field(
        default_factory=lambda: {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}
    )
    image_pull_secrets: tuple[str, ...] = ()


def labels() -> dict[str, str]:
    return {
        "app.kubernetes.io/name": NAME,
        "app.kubernetes.io/component": COMPONENT,
        "app.kubernetes.io/part-of": "noctaya",
        "app.kubernetes.io/managed-by": "noctaya",
    }


def _rules(rules: Sequence[tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]) -> list[k8s.PolicyRule]:
    return [k8s.PolicyRule(api_groups=list(g), resources=list(r), verbs=list(v)) for g, r, v in rules]


class OperatorInstall(constructs.Construct):
    """Children: ``Crd<Kind>``, ``Namespace``, ``ServiceAccount``, ``ClusterRole``, ``ClusterRoleBinding``,
    ``LeaseRole``, ``LeaseRoleBinding``, ``Resource`` (Deployment), ``Budget``."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: OperatorInstallProps) -> None:
        super().__init__(scope, id)
        if props.replicas < 1:
            raise ValueError(f"operator replicas: must be >= 1, got {props.replicas}")
        self.props = props
        ns = props.namespace
        meta = labels()
        selector = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": COMPONENT}
        for crd in props.crds:
            kind = crd["spec"]["names"]["kind"]
            obj = cdk8s.ApiObject(
                self,
                f"Crd{kind}",
                api_version="apiextensions.k8s.io/v1",
                kind="CustomResourceDefinition",
                metadata=cdk8s.ApiObjectMetadata(
                    name=crd["metadata"]["name"],
                    labels={**meta, **(crd["metadata"].get("labels") or {})},
                    annotations=crd["metadata"].get("annotations") or None,
                ),
            )
            obj.add_json_patch(cdk8s.JsonPatch.add("/spec", crd["spec"]))
        if props.create_namespace:
            k8s.KubeNamespace(
                self,
                "Namespace",
                metadata=k8s.ObjectMeta(
                    name=ns, labels={**meta, "pod-security.kubernetes.io/enforce": "restricted"}
                ),
            )
        k8s.KubeServiceAccount(
            self, "ServiceAccount", metadata=k8s.ObjectMeta(name=NAME, namespace=ns, labels=meta)
        )
        k8s.KubeClusterRole(
            self, "ClusterRole", metadata=k8s.ObjectMeta(name=NAME, labels=meta), rules=_rules(_RULES)
        )
        subject = [k8s.Subject(kind="ServiceAccount", name=NAME, namespace=ns)]
        k8s.KubeClusterRoleBinding(
            self,
            "ClusterRoleBinding",
            metadata=k8s.ObjectMeta(name=NAME, labels=meta),
            role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=NAME),
            subjects=subject,
        )
        lease_name = f"{NAME}-leader-election"
        k8s.KubeRole(
            self,
            "LeaseRole",
            metadata=k8s.ObjectMeta(name=lease_name, namespace=ns, labels=meta),
            rules=_rules(_LEASE_RULES),
        )
        k8s.KubeRoleBinding(
            self,
            "LeaseRoleBinding",
            metadata=k8s.ObjectMeta(name=lease_name, namespace=ns, labels=meta),
            role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=lease_name),
            subjects=subject,
        )

        env = [
            k8s.EnvVar(
                name="POD_NAME",
                value_from=k8s.EnvVarSource(field_ref=k8s.ObjectFieldSelector(field_path="metadata.name")),
            ),
            k8s.EnvVar(
                name="POD_NAMESPACE",
                value_from=k8s.EnvVarSource(
                    field_ref=k8s.ObjectFieldSelector(field_path="metadata.namespace")
                ),
            ),
            # the operator reads every flag from NOCTAYA_<FLAG>; POD_NAMESPACE places its Lease
            k8s.EnvVar(name="HOME", value=SCRATCH_DIR),
            k8s.EnvVar(name="NOCTAYA_HEALTH_LISTEN", value=f":{HEALTH_PORT}"),
            k8s.EnvVar(name="NOCTAYA_GATEWAY_IMAGE", value=props.gateway_image or props.image),
            k8s.EnvVar(name="NOCTAYA_DEFAULT_GATEWAY_REPLICAS", value=str(props.default_gateway_replicas)),
            # jsii's generated bindings type-check every struct at run time unless Python runs
            # optimized; synthesis is about twice as fast without (bench/synth.py)
            k8s.EnvVar(name="PYTHONOPTIMIZE", value="1"),
        ]
        container = k8s.Container(
            name="operator",
            image=props.image,
            command=["noctaya"],
            args=["operator"],
            env=env,
            ports=[k8s.ContainerPort(name="health", container_port=HEALTH_PORT, protocol="TCP")],
            liveness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/healthz", port=kube.int_or_string("health")),
                period_seconds=10,
                failure_threshold=3,
            ),
            resources=kube.resources(props.resources),
            volume_mounts=[k8s.VolumeMount(name="scratch", mount_path=SCRATCH_DIR)],
            security_context=volumes.restricted_security_context(),
        )
        self.deployment = k8s.KubeDeployment(
            self,
            "Resource",
            metadata=k8s.ObjectMeta(name=NAME, namespace=ns, labels=meta),
            spec=k8s.DeploymentSpec(
                replicas=props.replicas,
                selector=k8s.LabelSelector(match_labels=selector),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(labels=meta),
                    spec=k8s.PodSpec(
                        service_account_name=NAME,
                        containers=[container],
                        volumes=[
                            k8s.Volume(
                                name="scratch",
                                empty_dir=k8s.EmptyDirVolumeSource(size_limit=kube.quantity(SCRATCH_SIZE)),
                            )
                        ],
                        affinity=gateway.anti_affinity(selector),
                        enable_service_links=False,
                        security_context=gateway.pod_security_context(),
                        image_pull_secrets=kube.pull_secrets(props.image_pull_secrets),
                        termination_grace_period_seconds=30,
                    ),
                ),
            ),
        )
        if props.replicas < 2:
            return  # a PDB of minAvailable 1 over one Pod would block every node drain
        k8s.KubePodDisruptionBudget(
            self,
            "Budget",
            metadata=k8s.ObjectMeta(name=NAME, namespace=ns, labels=meta),
            spec=k8s.PodDisruptionBudgetSpec(
                min_available=kube.int_or_string(1), selector=k8s.LabelSelector(match_labels=selector)
            ),
        )
