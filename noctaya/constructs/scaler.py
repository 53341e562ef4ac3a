"""The aggregate scaler (``endpoint.replicas > 1``): Deployment, config, Service and token Secret.

One lightweight ``noctaya scaler`` Pod sums the demand reports of every gateway and serves the single
KEDA ExternalScaler endpoint. Its Service ``<name>-scaler`` exposes gRPC 9090 (KEDA) and HTTP 9091
``reports`` (gateways); neither is ever on the public gateway Service.

The per-service token Secret ``<name>-scaler-token`` (key ``token``) is rendered only when the caller
passes the token (``RenderSettings.scaler_token``): the operator generates it once and passes the same
value on every reconcile, so re-rendering never rotates it. Without a token (offline synth) the Secret
is left out and must exist in the cluster — create it once, e.g. ``kubectl create secret generic
<name>-scaler-token --from-literal=token="$(openssl rand -hex 32)"`` — which keeps rendered output free
of secrets and byte-identical between runs. The Secret is create-once: its spec hash covers its type
and keys, never the value.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

import constructs
import pydantic
from cdk8s_plus_28 import k8s

from noctaya.constructs import gateway, kube, naming, process
from noctaya.contract import fields
from noctaya.contract import scaler as scaler_contract

COMPONENT: Final = "scaler"
#: fewest members the scaler counts, and the most its config accepts
MIN_MEMBERS: Final = 32
MAX_MEMBERS: Final = scaler_contract.MAX_MEMBERS


def member_bound(gateways: int) -> int:
    """How many members the scaler must count for ``gateways`` replicas: each of them, plus as many
    again for the surge gateway of a rolling update and for replaced ones that have not expired yet
    (a member beyond the bound is refused, and its demand would never reach KEDA)."""
    return min(MAX_MEMBERS, max(MIN_MEMBERS, 2 * gateways))


@dataclasses.dataclass(frozen=True, kw_only=True)
class AggregateScalerProps:
    """The aggregate scaler of one LLMService."""

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: the noctaya image the aggregate scaler runs. Required.
    image: str
    #: what it serves KEDA (per-replica target, metric name, stream bound); ``tls`` is taken from
    #: ``tls_secret``. Default: ``scaler_contract.ExternalScalerSettings()``, the contract's defaults.
    scaler: scaler_contract.ExternalScalerSettings = dataclasses.field(
        default_factory=scaler_contract.ExternalScalerSettings
    )
    #: gateways counted at most (bounds the membership table).
    #: Default: ``MIN_MEMBERS``.
    max_members: int = MIN_MEMBERS
    #: the largest demand one gateway may report. Default: ``1100``.
    max_member_demand: int = 1100
    #: seconds after which a silent gateway no longer counts. Default: ``10.0``.
    member_ttl: float = 10.0
    #: demand reports handled at once. Default: ``64``.
    max_concurrent_reports: int = 64
    #: server credentials for KEDA mTLS (tls.crt, tls.key, ca.crt). Default: ``None``.
    tls_secret: str | None = None
    #: the shared token; ``None`` leaves the Secret out (it must already exist). Default: ``None``.
    token: str | None = None
    #: the scaler container's resources: {"requests": {...}, "limits": {...}}. Default: ``{"requests": {"cpu":
    #: "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}``.
    resources: Mapping[str, Mapping[str, str]] = dataclasses.field(
        default_factory=lambda: {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}
    )
    #: Secrets the scaler Pods pull their image with. Default: none.
    image_pull_secrets: tuple[str, ...] = ()


def scaler_config(props: AggregateScalerProps) -> scaler_contract.ScalerConfig:
    """The aggregate scaler's config, validated by the model the scaler reads it with."""
    ident = props.identity
    try:
        return scaler_contract.ScalerConfig.wire(
            settings=props.scaler,
            tls=gateway.tls_files(props.tls_secret),
            service=fields.ServiceRef(name=ident.name, namespace=ident.namespace or "default"),
            grpc_listen=f":{gateway.GRPC_PORT}",
            report_listen=f":{gateway.REPORT_PORT}",
            token_file=f"{gateway.TOKEN_DIR}/{gateway.TOKEN_KEY}",
            max_members=props.max_members,
            max_member_demand=props.max_member_demand,
            member_ttl=props.member_ttl,
            max_concurrent_reports=props.max_concurrent_reports,
        )
    except pydantic.ValidationError as exc:
        raise gateway.refusal(exc) from None


class AggregateScaler(constructs.Construct):
    """Children: ``Resource`` (Deployment), ``Config``, ``Service`` and, with a token, ``Token``."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: AggregateScalerProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = props.identity
        selector = ident.selector_labels(COMPONENT)
        pod = process.Process(
            workload=props, command=COMPONENT, name=ident.scaler, config=scaler_config(props)
        )
        self.config_map = pod.config_map(self)
        self.token_secret: k8s.KubeSecret | None = None
        if props.token is not None:
            if not props.token.strip():
                raise ValueError("scaler token: must not be empty")
            self.token_secret = k8s.KubeSecret(
                self,
                "Token",
                metadata=ident.metadata(
                    name=ident.scaler_token,
                    component=COMPONENT,
                    annotations={
                        naming.SPEC_HASH_ANNOTATION: naming.spec_hash(
                            {"type": "Opaque", "keys": [gateway.TOKEN_KEY]}
                        )
                    },
                ),
                type="Opaque",
                string_data={gateway.TOKEN_KEY: props.token},
            )

        gateway.add_token(pod.files, identity=ident)
        if props.tls_secret:
            gateway.add_tls(pod.files, secret=props.tls_secret)
        container = pod.container(
            ports=[
                k8s.ContainerPort(name="grpc", container_port=gateway.GRPC_PORT, protocol="TCP"),
                k8s.ContainerPort(name="reports", container_port=gateway.REPORT_PORT, protocol="TCP"),
            ],
            readiness_probe=k8s.Probe(
                tcp_socket=k8s.TcpSocketAction(port=kube.int_or_string("grpc")), period_seconds=5
            ),
            liveness_port="grpc",
        )
        # one replica by design: the aggregate is memory-only and rebuilt by gateway heartbeats
        self.deployment = pod.deployment(
            self, replicas=1, strategy=k8s.DeploymentStrategy(type="Recreate"), container=container
        )
        self.service = k8s.KubeService(
            self,
            "Service",
            metadata=ident.metadata(name=ident.scaler, component=COMPONENT),
            spec=k8s.ServiceSpec(
                selector=selector,
                ports=[
                    gateway.scaler_service_port(),
                    k8s.ServicePort(
                        name="reports",
                        port=gateway.REPORT_PORT,
                        protocol="TCP",
                        target_port=kube.int_or_string("reports"),
                    ),
                ],
            ),
        )
