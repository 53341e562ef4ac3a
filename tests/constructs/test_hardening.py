"""The optional security and observability constructs.

Aspects: with mTLS the TriggerAuthentication maps exactly caCert, tlsClientCert and tlsClientKey from
the client Secret (and refuses to exist without one); NetworkPolicies let only KEDA's namespace reach
gRPC 9090, only the service's gateways reach the reports port, and only gateways and monitoring reach
the backend; the ServiceMonitor selects every LLMService Service by label on ports ``http`` and
``reports`` (the aggregate scaler's metrics) with the
LLMService as target label; every alert rule has a severity, a summary and uses our own metrics.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import constructs
import pytest

from noctaya.constructs import naming, observability, security

Synth = Callable[[Callable[[constructs.Construct], object]], list[dict[str, Any]]]
IDENTITY = naming.ServiceIdentity(name="m", namespace="ns")


def test_trigger_authentication(synth: Synth) -> None:
    manifests = synth(
        lambda c: security.ScalerSecurity(
            c,
            "s",
            props=security.ScalerSecurityProps(
                identity=IDENTITY,
                authentication_name="m-keda",
                client_secret="m-client",
                network_policies=False,
            ),
        )
    )
    (auth,) = manifests
    assert (auth["kind"], auth["metadata"]["name"]) == ("TriggerAuthentication", "m-keda")
    assert auth["spec"]["secretTargetRef"] == [
        {"parameter": "caCert", "name": "m-client", "key": "ca.crt"},
        {"parameter": "tlsClientCert", "name": "m-client", "key": "tls.crt"},
        {"parameter": "tlsClientKey", "name": "m-client", "key": "tls.key"},
    ]
    with pytest.raises(ValueError, match="client_secret"):
        synth(
            lambda c: security.ScalerSecurity(
                c, "s", props=security.ScalerSecurityProps(identity=IDENTITY, authentication_name="m-keda")
            )
        )


def test_network_policies(synth: Synth) -> None:
    policies = {
        m["metadata"]["name"]: m["spec"]
        for m in synth(
            lambda c: security.ScalerSecurity(c, "s", props=security.ScalerSecurityProps(identity=IDENTITY))
        )
    }
    keda = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "keda"}}}
    gateways = {"podSelector": {"matchLabels": IDENTITY.selector_labels("gateway")}}
    monitoring = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}
    gateway = policies["m-gateway-ingress"]
    assert gateway["podSelector"]["matchLabels"] == IDENTITY.selector_labels("gateway")
    assert gateway["ingress"] == [
        {"ports": [{"port": 8080, "protocol": "TCP"}]},
        {"from": [keda], "ports": [{"port": 9090, "protocol": "TCP"}]},
    ]
    assert policies["m-scaler-ingress"]["ingress"] == [
        {"from": [keda], "ports": [{"port": 9090, "protocol": "TCP"}]},
        # demand reports from the gateways; /metrics (same port) from the monitoring namespace
        {"from": [gateways, monitoring], "ports": [{"port": 9091, "protocol": "TCP"}]},
    ]
    backend = policies["m-backend-ingress"]["ingress"][0]
    assert backend["from"][0] == gateways and backend["ports"] == [{"port": 8000, "protocol": "TCP"}]


def test_monitoring(synth: Synth) -> None:
    monitor, rules = synth(
        lambda c: observability.Observability(
            c, "o", props=observability.ObservabilityProps(watch_namespaces=("llm",))
        )
    )
    spec = monitor["spec"]
    assert spec["selector"] == {"matchExpressions": [{"key": naming.LLMSERVICE_LABEL, "operator": "Exists"}]}
    assert spec["namespaceSelector"] == {"matchNames": ["llm"]}
    assert spec["targetLabels"] == [naming.LLMSERVICE_LABEL]
    assert spec["endpoints"] == [  # backends and gateways on http; the aggregate scaler beside its intake
        {"port": "http", "path": "/metrics", "interval": "15s"},
        {"port": "reports", "path": "/metrics", "interval": "15s"},
    ]
    alerts = rules["spec"]["groups"][0]["rules"]
    assert len(alerts) == 8
    for alert in alerts:
        assert alert["labels"]["severity"] in {"info", "warning"}
        assert alert["annotations"]["summary"] and alert["alert"].startswith("Noctaya")
    assert sum("noctaya_gateway_" in a["expr"] for a in alerts) == 5
    assert sum("noctaya_scaler_" in a["expr"] for a in alerts) == 1
    assert sum("noctaya_engine_" in a["expr"] for a in alerts) == 1
