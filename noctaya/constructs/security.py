"""Optional hardening of one LLMService: KEDA client credentials for mTLS and NetworkPolicies.

Certificate issuance and rotation stay cluster responsibilities (cert-manager or your PKI); these
constructs only wire what exists:

- ``TriggerAuthentication`` (named as ``spec.scaling.externalScaler.tls.authenticationRef``): maps
  ``caCert``, ``tlsClientCert`` and ``tlsClientKey`` — PEM contents, as KEDA reads them — from the keys
  ``ca.crt``, ``tls.crt``, ``tls.key`` of a client-certificate Secret in the LLMService's namespace.
- ``NetworkPolicy`` objects (the scaler Service is cluster-internal, and the gateway's health and
  metrics routes are unauthenticated, so isolation is the network's job):
  - gateway Pods: HTTP 8080 from anywhere in the cluster; gRPC 9090 only from KEDA's namespace;
  - aggregate scaler Pods: gRPC 9090 from KEDA's namespace; reports 9091 from this service's gateways
    (demand reports, which carry the service's token) and the monitoring namespace (``/metrics`` is
    on the same port and the ServiceMonitor scrapes it);
  - backend Pods: the serving port only from this service's gateways, its aggregate scaler (which
    reads the engines' metrics when scaling on them) and the monitoring namespace.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import constructs
from cdk8s_plus_28 import k8s

from noctaya.constructs import gateway, kube, naming
from noctaya.imports import keda

NAMESPACE_LABEL: Final = "kubernetes.io/metadata.name"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScalerSecurityProps:
    """Hardening of the LLMService ``identity``."""

    #: the LLMService's name, namespace and the names derived from them. Required.
    identity: naming.ServiceIdentity
    #: TriggerAuthentication name (``externalScaler.tls.authenticationRef.name``); ``None`` = no mTLS.
    #: Default: ``None``.
    authentication_name: str | None = None
    #: Secret with the KEDA client certificate (``tls.crt``, ``tls.key``) and the server CA (``ca.crt``).
    #: Default: ``None``.
    client_secret: str | None = None
    #: the namespace KEDA runs in (the only peer of the scaler's gRPC port). Default: ``"keda"``.
    keda_namespace: str = "keda"
    #: the namespace Prometheus scrapes from. Default: ``"monitoring"``.
    monitoring_namespace: str = "monitoring"
    #: the backend port the gateways reach. Default: ``8000``.
    backend_port: int = 8000
    #: render the NetworkPolicies (off: the TriggerAuthentication alone). Default: ``True``.
    network_policies: bool = True


def _from_namespace(namespace: str) -> k8s.NetworkPolicyPeer:
    return k8s.NetworkPolicyPeer(
        namespace_selector=k8s.LabelSelector(match_labels={NAMESPACE_LABEL: namespace})
    )


def _port(number: int) -> k8s.NetworkPolicyPort:
    return k8s.NetworkPolicyPort(port=kube.int_or_string(number), protocol="TCP")


class ScalerSecurity(constructs.Construct):
    """Children: ``TriggerAuthentication`` (with mTLS), ``GatewayPolicy``, ``ScalerPolicy``,
    ``BackendPolicy``."""

    def __init__(self, scope: constructs.Construct, id: str, *, props: ScalerSecurityProps) -> None:
        super().__init__(scope, id)
        self.props = props
        ident = props.identity
        if props.authentication_name:
            if not props.client_secret:
                raise ValueError(
                    "client_secret: required with authentication_name (KEDA's client certificate)"
                )
            secret = props.client_secret
            keda.TriggerAuthentication(
                self,
                "TriggerAuthentication",
                metadata=ident.api_metadata(name=props.authentication_name, component="autoscaling"),
                spec=keda.TriggerAuthenticationSpec(
                    secret_target_ref=[
                        keda.TriggerAuthenticationSpecSecretTargetRef(
                            parameter="caCert", name=secret, key="ca.crt"
                        ),
                        keda.TriggerAuthenticationSpecSecretTargetRef(
                            parameter="tlsClientCert", name=secret, key="tls.crt"
                        ),
                        keda.TriggerAuthenticationSpecSecretTargetRef(
                            parameter="tlsClientKey", name=secret, key="tls.key"
                        ),
                    ]
                ),
            )
        if not props.network_policies:
            return
        keda_peer = _from_namespace(props.keda_namespace)
        gateways = k8s.NetworkPolicyPeer(
            pod_selector=k8s.LabelSelector(match_labels=ident.selector_labels("gateway"))
        )
        scalers = k8s.NetworkPolicyPeer(
            pod_selector=k8s.LabelSelector(match_labels=ident.selector_labels("scaler"))
        )
        self._policy(
            "GatewayPolicy",
            f"{ident.gateway}-ingress",
            "gateway",
            [
                k8s.NetworkPolicyIngressRule(ports=[_port(gateway.HTTP_PORT)]),
                k8s.NetworkPolicyIngressRule(ports=[_port(gateway.GRPC_PORT)], from_=[keda_peer]),
            ],
        )
        self._policy(
            "ScalerPolicy",
            f"{ident.scaler}-ingress",
            "scaler",
            [
                k8s.NetworkPolicyIngressRule(ports=[_port(gateway.GRPC_PORT)], from_=[keda_peer]),
                k8s.NetworkPolicyIngressRule(
                    ports=[_port(gateway.REPORT_PORT)],
                    from_=[gateways, _from_namespace(props.monitoring_namespace)],
                ),
            ],
        )
        self._policy(
            "BackendPolicy",
            f"{ident.backend}-ingress",
            "backend",
            [
                k8s.NetworkPolicyIngressRule(
                    ports=[_port(props.backend_port)],
                    from_=[gateways, scalers, _from_namespace(props.monitoring_namespace)],
                ),
            ],
        )

    def _policy(
        self, id: str, name: str, component: str, rules: list[k8s.NetworkPolicyIngressRule]
    ) -> k8s.KubeNetworkPolicy:
        """Ingress to one component's Pods: only what ``rules`` allow."""
        ident = self.props.identity
        return k8s.KubeNetworkPolicy(
            self,
            id,
            metadata=ident.metadata(name=name, component=component),
            spec=k8s.NetworkPolicySpec(
                pod_selector=k8s.LabelSelector(match_labels=ident.selector_labels(component)),
                policy_types=["Ingress"],
                ingress=rules,
            ),
        )
