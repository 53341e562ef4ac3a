"""The operator's own installation: CRDs, namespace, ServiceAccount, RBAC, Deployment and PDB.

RBAC is exactly what the operator's code calls, rendered from one table
(:data:`noctaya.api.access.GRANTS`; the operator tests record every request the operator makes and check
each against this RBAC, and that no verb is unused):

- ClusterRole ``noctaya-operator``: list/watch InferenceRuntimes and CustomResourceDefinitions (kopf
  watches ``scaledobjects.keda.sh`` by name: is KEDA installed); with watched namespaces also
  Namespaces (kopf's namespace scan);
- ``noctaya-operator-watched``: list/watch LLMServices and patch their ``status``; list/watch, read
  (``get``: an object of a name it needs that the watch has not shown), server-side apply (``patch``,
  and ``create``: an apply that creates its object is authorized as a create too) and prune
  (``delete``) the objects an LLMService owns; ``create`` the create-once ones (cache PVC,
  prewarm Job, scaler token Secret); list/watch Pods; create Events. A ClusterRole when the operator
  watches every namespace, one Role per namespace of ``watch_namespaces`` otherwise;
- Role ``noctaya-operator-leader-election`` in the operator namespace: get, create and update (renew)
  Leases — with leader election only.

What remains broad, and why: RBAC cannot restrict ``list``/``watch`` by label, nor name objects whose
names are derived from user input (``resourceNames`` would need every LLMService's name in advance). The
operator's watches ask only for objects labelled ``serving.noctaya.io/llmservice`` and it never reads a
Secret it does not own (client API keys are mounted by the gateways, never read by the operator), but
its grant lets it list Secrets in every namespace it watches: set ``watch_namespaces`` (Helm value
``watchNamespaces``) to confine that to the namespaces that hold LLMServices.

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

from noctaya.api import access, gatewaymemory
from noctaya.constructs import gateway, kube, process, volumes

COMPONENT: Final = "operator"
NAME: Final = "noctaya-operator"
GROUP: Final = "serving.noctaya.io"
#: ``/healthz`` and ``/metrics`` of the operator (``--health-listen``)
HEALTH_PORT: Final = 8081
#: the operator's only writable directory (the root filesystem is read-only): jsii unpacks its Node.js
#: runtime into the temporary directory and keeps its package cache under ``$HOME``
SCRATCH_DIR: Final = "/tmp"
SCRATCH_SIZE: Final = "1Gi"
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")
#: the operator's variable of each gateway memory bound (``--gateway-max-connections`` …)
GATEWAY_BOUND_VARIABLES: Final = {key: f"NOCTAYA_GATEWAY_{key.upper()}" for key in gatewaymemory.KEYS}


@dataclasses.dataclass(frozen=True, kw_only=True)
class OperatorInstallProps:
    """The operator installation."""

    #: the noctaya image the operator runs. Required.
    image: str
    #: the namespace the operator runs in. Default: ``"noctaya-system"``.
    namespace: str = "noctaya-system"
    #: 2 = one leader and one standby (the default); 1 is a deliberate single-replica install. Default: ``2``.
    replicas: int = 2
    #: the CustomResourceDefinitions (``noctaya.api.crds``), as manifests. Default: none.
    crds: Sequence[Mapping[str, Any]] = ()
    #: the image of the gateways and scalers the operator renders; ``None``: the operator's
    #: own. Default: ``None``.
    gateway_image: str | None = None
    #: gateway replicas of an LLMService that names none. Default: ``1``.
    default_gateway_replicas: int = 1
    #: the gateways' memory bounds where an LLMService sets none (``--gateway-*``). Default: the
    #: built-in bounds (``gatewaymemory.DEFAULTS``).
    gateway_bounds: gatewaymemory.Bounds = gatewaymemory.DEFAULTS
    #: render the operator's Namespace too (off: it must already exist). Default: ``True``.
    create_namespace: bool = True
    #: namespaces the operator watches (``--namespace``); empty: every namespace. With namespaces, the grants
    #: on namespaced objects are one Role per namespace instead of a ClusterRole. Default: none.
    watch_namespaces: tuple[str, ...] = ()
    #: off: one replica reconciles without a Lease (then ``replicas`` must be 1 and no Lease Role exists).
    #: Default: ``True``.
    leader_election: bool = True
    #: DEBUG, INFO, WARNING or ERROR. Default: ``"INFO"``.
    log_level: str = "INFO"
    #: the operator container's resources: {"requests": {...}, "limits": {...}}. Default: ``{"requests":
    #: {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}``.
    resources: Mapping[str, Mapping[str, str]] = dataclasses.field(
        default_factory=lambda: {"requests": {"cpu": "100m", "memory": "256Mi"}, "limits": {"memory": "1Gi"}}
    )
    #: Secrets the operator Pods pull their image with. Default: none.
    image_pull_secrets: tuple[str, ...] = ()


def labels() -> dict[str, str]:
    return {
        "app.kubernetes.io/name": NAME,
        "app.kubernetes.io/component": COMPONENT,
        "app.kubernetes.io/part-of": "noctaya",
        "app.kubernetes.io/managed-by": "noctaya",
    }


def rules(scope: access.Scope) -> list[dict[str, list[str]]]:
    """The PolicyRules of one scope of :data:`noctaya.api.access.GRANTS`, in the table's order."""
    return [
        {"apiGroups": [g.group], "resources": [g.resource], "verbs": list(g.verbs)}
        for g in access.grants(scope)
    ]


def _policy(scope: access.Scope) -> list[k8s.PolicyRule]:
    return [
        k8s.PolicyRule(api_groups=r["apiGroups"], resources=r["resources"], verbs=r["verbs"])
        for r in rules(scope)
    ]


class OperatorInstall(constructs.Construct):
    """Children: ``Crd<Kind>``, ``Namespace``, ``ServiceAccount``, ``ClusterRole``, ``ClusterRoleBinding``,
    ``WatchedRole``/``WatchedRoleBinding`` (every namespace) or ``WatchedRole-<ns>`` and
    ``WatchedRoleBinding-<ns>`` (watched namespaces), ``LeaseRole``, ``LeaseRoleBinding`` (leader
    election), ``Resource`` (Deployment), ``Budget`` (2 replicas or more)."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: OperatorInstallProps) -> None:
        super().__init__(scope, id)
        if props.replicas < 1:
            raise ValueError(f"operator replicas: must be >= 1, got {props.replicas}")
        if props.replicas > 1 and not props.leader_election:
            raise ValueError("operator replicas: more than 1 needs leader election")
        if props.log_level not in LOG_LEVELS:
            raise ValueError(
                f"operator log level: must be one of {', '.join(LOG_LEVELS)}, got {props.log_level!r}"
            )
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
        subject = [k8s.Subject(kind="ServiceAccount", name=NAME, namespace=ns)]
        cluster_role = k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=NAME)
        k8s.KubeClusterRole(
            self,
            "ClusterRole",
            metadata=k8s.ObjectMeta(name=NAME, labels=meta),
            rules=_policy(access.Scope.CLUSTER)
            + (_policy(access.Scope.SCAN) if props.watch_namespaces else []),
        )
        k8s.KubeClusterRoleBinding(
            self,
            "ClusterRoleBinding",
            metadata=k8s.ObjectMeta(name=NAME, labels=meta),
            role_ref=cluster_role,
            subjects=subject,
        )
        watched = f"{NAME}-watched"
        if not props.watch_namespaces:
            k8s.KubeClusterRole(
                self,
                "WatchedRole",
                metadata=k8s.ObjectMeta(name=watched, labels=meta),
                rules=_policy(access.Scope.WATCHED),
            )
            k8s.KubeClusterRoleBinding(
                self,
                "WatchedRoleBinding",
                metadata=k8s.ObjectMeta(name=watched, labels=meta),
                role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=watched),
                subjects=subject,
            )
        for watch in props.watch_namespaces:
            k8s.KubeRole(
                self,
                f"WatchedRole-{watch}",
                metadata=k8s.ObjectMeta(name=watched, namespace=watch, labels=meta),
                rules=_policy(access.Scope.WATCHED),
            )
            k8s.KubeRoleBinding(
                self,
                f"WatchedRoleBinding-{watch}",
                metadata=k8s.ObjectMeta(name=watched, namespace=watch, labels=meta),
                role_ref=k8s.RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name=watched),
                subjects=subject,
            )
        if props.leader_election:
            lease_name = f"{NAME}-leader-election"
            k8s.KubeRole(
                self,
                "LeaseRole",
                metadata=k8s.ObjectMeta(name=lease_name, namespace=ns, labels=meta),
                rules=_policy(access.Scope.LEASE),
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
            *(
                k8s.EnvVar(name=variable, value=str(getattr(props.gateway_bounds, key)))
                for key, variable in GATEWAY_BOUND_VARIABLES.items()
            ),
            # comma-separated; empty: every namespace
            k8s.EnvVar(name="NOCTAYA_NAMESPACE", value=",".join(props.watch_namespaces)),
            k8s.EnvVar(name="NOCTAYA_LEADER_ELECTION", value=str(props.leader_election).lower()),
            k8s.EnvVar(name="NOCTAYA_LOG_LEVEL", value=props.log_level),
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
                        security_context=process.pod_security_context(),
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
