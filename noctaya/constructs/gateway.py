"""The gateway: Deployment, config ConfigMap, public Service, scaler Service and (N > 1) a PDB.

- The config file (``noctaya.contract.gateway.GatewayConfig``, camelCase YAML, every field written) is
  built from the props' ``GatewaySettings`` and validated by the same model the gateway reads it with,
  then rendered into the ConfigMap ``<name>-gateway`` and mounted at
  ``/etc/noctaya/gateway/config.yaml``; its hash is a Pod annotation, so a changed config rolls the
  gateways, except for the live fields (``warmUntil``), which the hash leaves out and the running
  gateways take from the updated file themselves. A value the gateway would refuse is refused here,
  naming the LLMService field.
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
from collections.abc import Mapping
from typing import Any, Final, TypeVar

import constructs
import pydantic
from cdk8s_plus_28 import k8s

from noctaya.api import gatewaymemory, quantities
from noctaya.constructs import kube, naming, process, volumes
from noctaya.contract import documents, fields
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract

COMPONENT: Final = "gateway"
HTTP_PORT: Final = 8080
GRPC_PORT: Final = 9090
REPORT_PORT: Final = 9091
API_KEY_DIR: Final = "/etc/noctaya/api-key"
API_KEY_FILE: Final = "key"
TOKEN_DIR: Final = "/etc/noctaya/scaler-token"
TOKEN_KEY: Final = "token"
TLS_DIR: Final = "/etc/noctaya/scaler-tls"
DRAIN_GRACE_MARGIN_SECONDS: Final = 10
#: where a config key comes from, for messages that name the field the user wrote
FIELD_SOURCES: Final[Mapping[str, str]] = {
    "maxQueue": "spec.endpoint.maxQueue",
    "coldStartMode": "spec.endpoint.coldStart.mode",
    "heartbeatInterval": "spec.endpoint.coldStart.heartbeatInterval",
    "activationTimeout": "spec.scaling.activationTimeout",
    "drainTimeout": "spec.scaling.drainTimeout",
    "readinessPath": "InferenceRuntime spec.health.readiness.httpGet.path",
    "scaler.target": "spec.scaling.target",
    "scaler.metricName": "spec.scaling.metric",
    "target": "spec.scaling.target",
    "metricName": "spec.scaling.metric",
    "maxMemberDemand": "spec.endpoint.maxQueue",
    "coldRoutes": "spec.endpoint.coldRoutes",
    "servedModel": "spec.endpoint.servedModelName",
    "forwardAuthorization": "spec.endpoint.forwardAuthorization",
    "warmUntil": "metadata.annotations[serving.noctaya.io/warm-until]",
    **{key: f"spec.endpoint.{key}" for key in gatewaymemory.KEYS.values()},
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class SecretKeyRef:
    """One key of a Secret in the LLMService's namespace."""

    name: str
    key: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class GatewayProps:
    """The gateway of one LLMService."""

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: the noctaya image the gateway runs. Required.
    image: str
    #: the backend Service URL the gateway forwards to. Required.
    backend_url: str
    #: gateway replicas; > 1 switches to the aggregate scaler. Default: ``1``.
    replicas: int = 1
    #: the gateway's tunables (queue and in-flight bounds, cold-start mode, timeouts, probe periods); the
    #: defaults are the contract's and suit production. Default: ``gateway_contract.GatewaySettings()``, the
    #: contract's defaults.
    settings: gateway_contract.GatewaySettings = dataclasses.field(
        default_factory=gateway_contract.GatewaySettings
    )
    #: the Secret key holding the client API keys; ``None``: no client authentication. Default: ``None``.
    api_key: SecretKeyRef | None = None
    #: what the co-located ExternalScaler serves KEDA (per-replica target, metric name, stream bound); ``tls``
    #: is taken from ``scaler_tls_secret``. Default: ``scaler_contract.ExternalScalerSettings()``, the
    #: contract's defaults.
    scaler: scaler_contract.ExternalScalerSettings = dataclasses.field(
        default_factory=scaler_contract.ExternalScalerSettings
    )
    #: server credentials (tls.crt, tls.key, ca.crt) for the co-located ExternalScaler. Default: ``None``.
    scaler_tls_secret: str | None = None
    #: seconds between a reporting gateway's heartbeats to the aggregate scaler. Default: ``2.0``.
    report_interval: float = 2.0
    #: container resources: {"requests": {...}, "limits": {...}}. Default: none.
    resources: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    #: Secrets the Pods pull their images with. Default: none.
    image_pull_secrets: tuple[str, ...] = ()
    #: the memory bounds of ``settings`` that must be kept as they are (set by the LLMService); the
    #: others are lowered to fit the memory limit in ``resources`` (``noctaya.api.gatewaymemory``).
    #: Default: none.
    pinned_bounds: frozenset[str] = frozenset()

    @property
    def aggregate(self) -> bool:
        return self.replicas > 1

    @property
    def termination_grace_period_seconds(self) -> int:
        """Long enough for the whole drain, plus a margin for the exit itself."""
        return int(self.settings.drain_timeout) + DRAIN_GRACE_MARGIN_SECONDS


def tls_files(secret: str | None) -> fields.TlsFiles | None:
    """The ``tls`` block of a gateway or scaler config for a mounted server Secret."""
    if not secret:
        return None
    return fields.TlsFiles(
        cert_file=f"{TLS_DIR}/tls.crt", key_file=f"{TLS_DIR}/tls.key", ca_file=f"{TLS_DIR}/ca.crt"
    )


def add_tls(files: process.PodFiles, *, secret: str) -> None:
    """The ExternalScaler's server Secret (tls.crt, tls.key, ca.crt), where ``tls_files`` names them."""
    files.add(volumes.secret_volume(name="scaler-tls", secret=secret), path=TLS_DIR)


def add_token(files: process.PodFiles, *, identity: naming.ServiceIdentity) -> None:
    """The report token Secret ``<name>-scaler-token``, at the path both configs' ``tokenFile`` name."""
    files.add(
        volumes.secret_volume(
            name="scaler-token", secret=identity.scaler_token, items={TOKEN_KEY: TOKEN_KEY}
        ),
        path=TOKEN_DIR,
    )


SettingsT = TypeVar("SettingsT", bound=fields.Model)


def overlay(base: SettingsT, **values: Any) -> SettingsT:
    """``base`` with ``values`` laid over it, validated by the contract; a value the data plane would
    refuse raises ``ValueError`` naming the LLMService field it came from."""
    try:
        return type(base).wire(settings=base, **values)
    except pydantic.ValidationError as exc:
        raise refusal(exc) from None


def refusal(error: pydantic.ValidationError) -> ValueError:
    """A config the data plane would refuse, as one message naming the LLMService fields."""
    lines = []
    for line in documents.describe_errors(error).splitlines():
        key, _, message = line.partition(": ")
        lines.append(f"{FIELD_SOURCES.get(key, key)}: the data plane refuses it: {message}")
    return ValueError("; ".join(lines))


def gateway_config(props: GatewayProps) -> gateway_contract.GatewayConfig:
    """The gateway's config, validated by the model the gateway reads it with."""
    if props.replicas < 1:
        raise ValueError(f"spec.endpoint.replicas: must be >= 1, got {props.replicas}")
    ident = props.identity
    service = fields.ServiceRef(name=ident.name, namespace=ident.namespace or "default")
    try:
        scaler: gateway_contract.ScalerSection | None = None
        report: gateway_contract.ReportSection | None = None
        if props.aggregate:
            report = gateway_contract.ReportSection(
                url=f"http://{ident.service_host(ident.scaler)}:{REPORT_PORT}",
                token_file=f"{TOKEN_DIR}/{TOKEN_KEY}",
                interval=props.report_interval,
            )
        else:
            scaler = gateway_contract.ScalerSection.wire(
                settings=props.scaler, listen=f":{GRPC_PORT}", tls=tls_files(props.scaler_tls_secret)
            )
        return gateway_contract.GatewayConfig.wire(
            settings=fitted_settings(props)[0],
            listen=f":{HTTP_PORT}",
            backend_url=props.backend_url,
            api_key_file=f"{API_KEY_DIR}/{API_KEY_FILE}" if props.api_key else None,
            service=service,
            scaler=scaler,
            report=report,
        )
    except pydantic.ValidationError as exc:
        raise refusal(exc) from None


def memory_fit(props: GatewayProps) -> gatewaymemory.Fit:
    """The bounds the gateway runs with under the memory limit it is rendered with: the one rule of
    ``noctaya.api.gatewaymemory`` (a limit that cannot hold the pinned bounds raises ``ValueError``)."""
    limit = props.resources.get("limits", {}).get("memory")
    settings = props.settings
    unknown = props.pinned_bounds - set(gatewaymemory.KEYS)
    if unknown:
        raise ValueError(f"pinned_bounds: unknown bounds {sorted(unknown)}")
    return gatewaymemory.fit(
        limit_bytes=None if limit is None else int(quantities.parse(limit)),
        limit=limit,
        base=settings.memory_bounds,
        pinned={name: getattr(settings, name) for name in props.pinned_bounds},
    )


def fitted_settings(props: GatewayProps) -> tuple[gateway_contract.GatewaySettings, gatewaymemory.Fit]:
    """``props.settings`` with the memory bounds fitted to the limit (the per-peer connection bound
    kept within a lowered ``maxConnections``), and the fit."""
    fit = memory_fit(props)
    bounds = dataclasses.asdict(fit.bounds)
    per_peer = min(props.settings.max_connections_per_peer, fit.bounds.max_connections)
    return props.settings.model_copy(update={**bounds, "max_connections_per_peer": per_peer}), fit


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
        self.props = props
        ident = props.identity
        selector = ident.selector_labels(COMPONENT)
        self.config = gateway_config(props)
        #: which bounds were lowered to fit the memory limit, stated at the top of the config file
        self.memory_statement = memory_fit(props).statement()
        pod = process.Process(
            workload=props,
            command=COMPONENT,
            name=ident.gateway,
            config=self.config,
            comment=self.memory_statement,
        )
        self.config_map = pod.config_map(self)
        if props.api_key:
            key = {props.api_key.key: API_KEY_FILE}
            pod.files.add(
                volumes.secret_volume(name="api-key", secret=props.api_key.name, items=key), path=API_KEY_DIR
            )
        if props.aggregate:
            add_token(pod.files, identity=ident)
        elif props.scaler_tls_secret:
            add_tls(pod.files, secret=props.scaler_tls_secret)

        ports = [k8s.ContainerPort(name="http", container_port=HTTP_PORT, protocol="TCP")]
        if not props.aggregate:
            ports.append(k8s.ContainerPort(name="grpc", container_port=GRPC_PORT, protocol="TCP"))
        container = pod.container(
            ports=ports,
            # one slow answer must not take the (often only) gateway out of its Service; a terminating
            # Pod leaves the endpoints at once anyway, whatever the probe says
            readiness_probe=k8s.Probe(
                http_get=k8s.HttpGetAction(path="/healthz", port=kube.int_or_string("http")),
                period_seconds=2,
                failure_threshold=3,
            ),
            liveness_port="http",
        )
        rolling = k8s.RollingUpdateDeployment(
            max_unavailable=kube.int_or_string(0), max_surge=kube.int_or_string(1)
        )
        self.deployment = pod.deployment(
            self,
            replicas=props.replicas,
            strategy=k8s.DeploymentStrategy(type="RollingUpdate", rolling_update=rolling),
            container=container,
            affinity=anti_affinity(selector) if props.aggregate else None,
            termination_grace_period_seconds=props.termination_grace_period_seconds,
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
