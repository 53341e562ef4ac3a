"""The gateway: Deployment, config ConfigMap, public Service, scaler Service and (N > 1) a PDB.

- The config file (``noctaya.gateway.config.GatewayConfig``, camelCase YAML) is rendered into the
  ConfigMap ``<name>-gateway`` and mounted at ``/etc/noctaya/gateway/config.yaml``; its hash is a Pod
  annotation, so a changed config rolls the gateways.
- The client API key (``spec.endpoint.authentication.secretRef``) is a projected Secret volume: the
  gateway rereads the file for every request, so rotation needs no restart. It never enters env or args.
- The public Service ``<name>`` (the name clients use, as in the Go implementation) carries HTTP only
  (80 -> ``http``, 8080). gRPC 9090 is never on it. The backend is ``<name>-backend``.
- With one replica the ExternalScaler runs in the gateway; the internal Service ``<name>-scaler``
  (9090) selects the gateway Pods. With more, the aggregate scaler owns ``<name>-scaler``; gateways
  ``report`` to it with the token Secret, get preferred hostname anti-affinity and a PDB
  ``minAvailable: 1``.
- The gateway has no Kubernetes credentials: the service account token is not mounted.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Final, Literal

import constructs
import yaml
from cdk8s_plus_28 import k8s

from noctaya.api import durations
from noctaya.constructs import kube, naming, volumes

COMPONENT: Final = "gateway"
HTTP_PORT: Final = 8080
GRPC_PORT: Final = 9090
REPORT_PORT: Final = 9091
CONFIG_DIR: Final = "/etc/noctaya/gateway"
CONFIG_FILE: Final = "config.yaml"
API_KEY_DIR: Final = "/etc/noctaya/api-key"
API_KEY_FILE: Final = "key"
TOKEN_DIR: Final = "/etc/noctaya/scaler-token"
TOKEN_KEY: Final = "token"
TLS_DIR: Final = "/etc/noctaya/scaler-tls"
CONFIG_HASH_ANNOTATION: Final = "serving.noctaya.io/config-hash"
DRAIN_GRACE_MARGIN_SECONDS: Final = 10
#: bounds the gateway's config accepts (``noctaya.gateway.config``); the CRD has none, so a value
#: beyond them is refused here, as a status condition, not by a gateway that cannot start
MAX_QUEUE: Final = 1_000_000
MAX_IN_FLIGHT: Final = 1_000_000
MAX_TARGET: Final = 1_000_000
READINESS_PATH: Final = re.compile(r"/[^\s?#]*")


@dataclasses.dataclass(frozen=True, kw_only=True)
class SecretKeyRef:
    """One key of a Secret in the LLMService's namespace."""

    name: str
    key: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class GatewayProps:
    """The gateway of one LLMService. Durations are canonical Go duration strings (``5m0s``)."""

    identity: naming.ServiceIdentity
    image: str
    backend_url: str
    #: gateway replicas; > 1 switches to the aggregate scaler
    replicas: int = 1
    readiness_path: str = "/health"
    max_queue: int = 100
    max_in_flight: int = 1000
    cold_start_mode: Literal["keepalive", "reject"] = "keepalive"
    heartbeat_interval: str = "10s"
    activation_timeout: str = "5m0s"
    retry_after: str = "10s"
    retry_grace: str = "10s"
    #: in-flight requests finish within it; the Pod's grace period is this plus 10 s
    drain_timeout: str = "2m0s"
    max_body_bytes: int = 16 * 1024 * 1024
    api_key: SecretKeyRef | None = None
    #: per-backend-replica queue target and the metric name KEDA sees
    scaler_target: int = 10
    metric_name: str = "queueDepth"
    #: server credentials (tls.crt, tls.key, ca.crt) for the co-located ExternalScaler
    scaler_tls_secret: str | None = None
    report_interval: str = "2s"
    #: container resources: {"requests": {...}, "limits": {...}}
    resources: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    image_pull_secrets: tuple[str, ...] = ()

    @property
    def aggregate(self) -> bool:
        return self.replicas > 1

    @property
    def termination_grace_period_seconds(self) -> int:
        """Long enough for the whole drain, plus a margin for the exit itself."""
        return int(durations.parse(self.drain_timeout).total_seconds) + DRAIN_GRACE_MARGIN_SECONDS


def tls_files(secret: str | None) -> dict[str, Any] | None:
    """The ``tls`` block of a gateway or scaler config for a mounted server Secret."""
    if not secret:
        return None
    return {"certFile": f"{TLS_DIR}/tls.crt", "keyFile": f"{TLS_DIR}/tls.key", "caFile": f"{TLS_DIR}/ca.crt"}


def check_bounds(props: GatewayProps) -> None:
    """Refuse, naming the field, what the gateway would refuse to start with."""
    if props.replicas < 1:
        raise ValueError(f"spec.endpoint.replicas: must be >= 1, got {props.replicas}")
    if not 1 <= props.max_queue <= MAX_QUEUE:
        raise ValueError(f"spec.endpoint.maxQueue: the gateway takes 1..{MAX_QUEUE}, got {props.max_queue}")
    if not 1 <= props.max_in_flight <= MAX_IN_FLIGHT:
        raise ValueError(f"max_in_flight: the gateway takes 1..{MAX_IN_FLIGHT}, got {props.max_in_flight}")
    if not 1 <= props.scaler_target <= MAX_TARGET:
        raise ValueError(f"spec.scaling.target: the scaler takes 1..{MAX_TARGET}, got {props.scaler_target}")
    if not READINESS_PATH.fullmatch(props.readiness_path):
        raise ValueError(
            "InferenceRuntime spec.health.readiness.httpGet.path: the gateway probes a plain path "
            f"(a '/', then no spaces, '?' or '#'), got {props.readiness_path!r}"
        )


def gateway_config(props: GatewayProps) -> dict[str, Any]:
    """The gateway config file, keys in the documented order."""
    ident = props.identity
    config: dict[str, Any] = {
        "listen": f":{HTTP_PORT}",
        "backendUrl": props.backend_url,
        "readinessPath": props.readiness_path,
        "maxQueue": props.max_queue,
        "maxInFlight": props.max_in_flight,
        "coldStartMode": props.cold_start_mode,
        "heartbeatInterval": props.heartbeat_interval,
        "activationTimeout": props.activation_timeout,
        "retryAfter": props.retry_after,
        "retryGrace": props.retry_grace,
        "drainTimeout": props.drain_timeout,
        "maxBodyBytes": props.max_body_bytes,
        "apiKeyFile": f"{API_KEY_DIR}/{API_KEY_FILE}" if props.api_key else None,
        "service": {"name": ident.name, "namespace": ident.namespace or "default"},
        "scaler": None,
        "report": None,
    }
    if props.aggregate:
        config["report"] = {
            "url": f"http://{ident.service_host(ident.scaler)}:{REPORT_PORT}",
            "tokenFile": f"{TOKEN_DIR}/{TOKEN_KEY}",
            "interval": props.report_interval,
        }
    else:
        config["scaler"] = {
            "listen": f":{GRPC_PORT}",
            "target": props.scaler_target,
            "metricName": props.metric_name,
            "tls": tls_files(props.scaler_tls_secret),
        }
    return config


def render_config(config: Mapping[str, Any]) -> str:
    """Deterministic YAML for a config file (documented key order, no aliases)."""
    return yaml.safe_dump(dict(config), sort_keys=False, default_flow_style=False, width=1000)


def scaler_service_port() -> k8s.ServicePort:
    """The ExternalScaler port of the ``<name>-scaler`` Service, the same whichever process serves it
    (the ScaledObject's ``scalerAddress`` points at it)."""
    return k8s.ServicePort(
        name="grpc",
        port=GRPC_PORT,
        target_port=kube.int_or_string("grpc"),
        protocol="TCP",
        app_protocol="grpc",
    )


def anti_affinity(selector: Mapping[str, str]) -> k8s.Affinity:
    """Preferred (never required) spreading of a component's Pods across nodes."""
    return k8s.Affinity(
        pod_anti_affinity=k8s.PodAntiAffinity(
            preferred_during_scheduling_ignored_during_execution=[
                k8s.WeightedPodAffinityTerm(
                    weight=100,
                    pod_affinity_term=k8s.PodAffinityTerm(
                        topology_key="kubernetes.io/hostname",
                        label_selector=k8s.LabelSelector(match_labels=dict(selector)),
                    ),
                )
            ]
        )
    )


def pod_security_context() -> k8s.PodSecurityContext:
    """Non-root Pods whose projected Secret files (mode 0440) belong to the containers' group."""
    return k8s.PodSecurityContext(
        run_as_non_root=True,
        fs_group=volumes.NONROOT_UID,
        seccomp_profile=k8s.SeccompProfile(type="RuntimeDefault"),
    )


def pod_disruption_budget(
    scope: constructs.Construct, id: str, *, identity: naming.ServiceIdentity, name: str, component: str
) -> k8s.KubePodDisruptionBudget:
    """``minAvailable: 1`` over one component's Pods."""
    return k8s.KubePodDisruptionBudget(
        scope,
        id,
        metadata=identity.metadata(name=name, component=component),
        spec=k8s.PodDisruptionBudgetSpec(
            min_available=kube.int_or_string(1),
            selector=k8s.LabelSelector(match_labels=identity.selector_labels(component)),
        ),
    )


class Gateway(constructs.Construct):
    """Children: ``Resource`` (Deployment), ``Config``, ``Service``, ``ScalerService`` (one replica),
    ``Budget`` (several)."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: GatewayProps) -> None:
        super().__init__(scope, id)
        check_bounds(props)
        self.props = props
        ident = props.identity
        selector = ident.selector_labels(COMPONENT)
        self.config = gateway_config(props)
        text = render_config(self.config)
        self.config_map = k8s.KubeConfigMap(
            self,
            "Config",
            metadata=ident.metadata(name=ident.gateway, component=COMPONENT),
            data={CONFIG_FILE: text},
        )

        vols = [k8s.Volume(name="config", config_map=k8s.ConfigMapVolumeSource(name=ident.gateway))]
        mounts = [k8s.VolumeMount(name="config", mount_path=CONFIG_DIR, read_only=True)]
        if props.api_key:
            vols.append(
                volumes.secret_volume(
                    name="api-key", secret=props.api_key.name, items={props.api_key.key: API_KEY_FILE}
                )
            )
            mounts.append(k8s.VolumeMount(name="api-key", mount_path=API_KEY_DIR, read_only=True))
        if props.aggregate:
            vols.append(
                volumes.secret_volume(
                    name="scaler-token", secret=ident.scaler_token, items={TOKEN_KEY: TOKEN_KEY}
                )
            )
            mounts.append(k8s.VolumeMount(name="scaler-token", mount_path=TOKEN_DIR, read_only=True))
        elif props.scaler_tls_secret:
            vols.append(volumes.secret_volume(name="scaler-tls", secret=props.scaler_tls_secret))
            mounts.append(k8s.VolumeMount(name="scaler-tls", mount_path=TLS_DIR, read_only=True))

        ports = [k8s.ContainerPort(name="http", container_port=HTTP_PORT, protocol="TCP")]
        if not props.aggregate:
            ports.append(k8s.ContainerPort(name="grpc", container_port=GRPC_PORT, protocol="TCP"))
        container = k8s.Container(
            name="gateway",
            image=props.image,
            args=["gateway", "--config", f"{CONFIG_DIR}/{CONFIG_FILE}"],
            command=["noctaya"],
            ports=ports,
            # one slow answer must not take the (often only) gateway out of its Service; a terminating
            # Pod leaves the endpoints at once anyway, whatever the probe says
            readiness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/healthz", port=kube.int_or_string("http")),
                period_seconds=2,
                failure_threshold=3,
            ),
            liveness_probe=k8s.Probe(
                tcp_socket=k8s.TcpSocketAction(port=kube.int_or_string("http")),
                period_seconds=10,
                failure_threshold=3,
            ),
            resources=kube.resources(props.resources),
            volume_mounts=mounts,
            security_context=volumes.restricted_security_context(),
        )
        self.deployment = k8s.KubeDeployment(
            self,
            "Resource",
            metadata=ident.metadata(name=ident.gateway, component=COMPONENT),
            spec=k8s.DeploymentSpec(
                replicas=props.replicas,
                selector=k8s.LabelSelector(match_labels=selector),
                strategy=k8s.DeploymentStrategy(
                    type="RollingUpdate",
                    rolling_update=k8s.RollingUpdateDeployment(
                        max_unavailable=kube.int_or_string(0), max_surge=kube.int_or_string(1)
                    ),
                ),
                template=k8s.PodTemplateSpec(
                    metadata=k8s.ObjectMeta(
                        labels=ident.labels(COMPONENT),
                        annotations={CONFIG_HASH_ANNOTATION: naming.spec_hash(text)},
                    ),
                    spec=k8s.PodSpec(
                        containers=[container],
                        volumes=vols,
                        affinity=anti_affinity(selector) if props.aggregate else None,
                        automount_service_account_token=False,
                        enable_service_links=False,
                        image_pull_secrets=kube.pull_secrets(props.image_pull_secrets),
                        security_context=pod_security_context(),
                        termination_grace_period_seconds=props.termination_grace_period_seconds,
                    ),
                ),
            ),
        )
        self.service = k8s.KubeService(
            self,
            "Service",
            metadata=ident.metadata(name=ident.endpoint, component=COMPONENT),
            spec=k8s.ServiceSpec(
                selector=selector,
                ports=[
                    k8s.ServicePort(
                        name="http", port=80, target_port=kube.int_or_string("http"), protocol="TCP"
                    )
                ],
            ),
        )
        self.scaler_service: k8s.KubeService | None = None
        self.budget: k8s.KubePodDisruptionBudget | None = None
        if props.aggregate:
            self.budget = pod_disruption_budget(
                self, "Budget", identity=ident, name=ident.gateway, component=COMPONENT
            )
        else:
            self.scaler_service = k8s.KubeService(
                self,
                "ScalerService",
                metadata=ident.metadata(name=ident.scaler, component=COMPONENT),
                spec=k8s.ServiceSpec(
                    selector=selector,
                    ports=[scaler_service_port()],
                ),
            )
