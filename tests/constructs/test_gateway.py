"""The Gateway construct on its own.

Aspects: the config file holds every documented key in order, with ``scaler`` (one replica) or
``report`` (several) and never both; durations are passed through canonically; the API key is a
projected Secret file and the config points at it; the Pod has no service account token, runs
non-root, tolerates a single failed readiness probe, and its config hash changes with the config; the
grace period covers the drain timeout; zero replicas are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import constructs
import pytest
import yaml

from noctaya.constructs import gateway, naming, process
from noctaya.contract import gateway as gateway_contract

Synth = Callable[[Callable[[constructs.Construct], object]], list[dict[str, Any]]]
IDENTITY = naming.ServiceIdentity(name="m", namespace="ns")
KEYS = [field.alias for field in gateway_contract.GatewayConfig.model_fields.values()]


def _props(**overrides: Any) -> gateway.GatewayProps:
    return gateway.GatewayProps(
        identity=IDENTITY, image="noctaya:1", backend_url="http://m.ns.svc:8000", **overrides
    )


def test_single_gateway_config() -> None:
    settings = gateway_contract.GatewaySettings(max_queue=7, cold_start_mode="reject")
    model = gateway.gateway_config(_props(settings=settings))
    config = model.document()
    assert set(config) == set(KEYS)
    assert config["scaler"] == {
        "target": 10,
        "metricName": "queueDepth",
        "maxStreams": 16,
        "maxStreamsPerPeer": 4,
        "tls": None,
        "listen": ":9090",
    }
    assert config["report"] is None and config["apiKeyFile"] is None
    assert (config["maxQueue"], config["coldStartMode"]) == (7, "reject")
    assert config["service"] == {"name": "m", "namespace": "ns"}
    assert yaml.safe_load(process.render_config(model)) == config
    assert gateway_contract.build_config(config) == model


def test_aggregate_config_and_api_key(synth: Synth) -> None:
    props = _props(replicas=3, api_key=gateway.SecretKeyRef(name="keys", key="k1"))
    config = gateway.gateway_config(props).document()
    assert config["scaler"] is None
    assert config["report"] == {
        "url": "http://m-scaler.ns.svc:9091",
        "tokenFile": "/etc/noctaya/scaler-token/token",
        "interval": "2s",
    }
    assert config["apiKeyFile"] == "/etc/noctaya/api-key/key"
    manifests = synth(lambda c: gateway.Gateway(c, "g", props=props))
    deployment = next(m for m in manifests if m["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["api-key"]["projected"]["sources"][0]["secret"] == {
        "name": "keys",
        "items": [{"key": "k1", "path": "key"}],
    }
    assert volumes["scaler-token"]["projected"]["sources"][0]["secret"]["name"] == "m-scaler-token"
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    assert container["command"] + container["args"] == [
        "noctaya",
        "gateway",
        "--config",
        "/etc/noctaya/gateway/config.yaml",
    ]
    assert "env" not in container
    # a single slow /healthz must not empty the public Service
    assert container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["failureThreshold"] > 1


def test_config_hash_follows_the_config(synth: Synth) -> None:
    def config_hash(props: gateway.GatewayProps) -> str:
        manifests = synth(lambda c: gateway.Gateway(c, "g", props=props))
        deployment = next(m for m in manifests if m["kind"] == "Deployment")
        value: str = deployment["spec"]["template"]["metadata"]["annotations"][process.CONFIG_HASH_ANNOTATION]
        return value

    assert config_hash(_props()) == config_hash(_props())
    fewer = gateway_contract.GatewaySettings(max_queue=5)
    assert config_hash(_props()) != config_hash(_props(settings=fewer))


def test_grace_period_covers_the_drain(synth: Synth) -> None:
    props = _props(settings=gateway_contract.GatewaySettings(drain_timeout="5m30s"))
    assert gateway.gateway_config(props).document()["drainTimeout"] == "5m30s"
    manifests = synth(lambda c: gateway.Gateway(c, "g", props=props))
    deployment = next(m for m in manifests if m["kind"] == "Deployment")
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 330 + 10


def test_zero_replicas_refused(synth: Synth) -> None:
    with pytest.raises(ValueError, match=r"spec\.endpoint\.replicas"):
        synth(lambda c: gateway.Gateway(c, "g", props=_props(replicas=0)))


def test_pinned_bounds_whose_worst_case_exceeds_the_memory_limit_are_refused() -> None:
    """The renderer refuses what the gateway would be OOM-killed for under the load its bounds admit,
    when the bounds are pinned (set by the LLMService) and cannot be lowered to fit."""
    fits = gateway_contract.GatewaySettings()
    assert fits.worst_case_memory_bytes() == 864 << 20  # the defaults fit the default 1Gi limit
    gateway.gateway_config(_props(settings=fits, resources={"limits": {"memory": "1Gi"}}))
    too_much = gateway_contract.GatewaySettings(max_queued_body_bytes=1 << 30)
    pinned = frozenset({"max_queued_body_bytes"})
    with pytest.raises(ValueError, match=r"memory limit 1Gi.*maxQueuedBodyBytes 1024 MiB"):
        gateway.gateway_config(
            _props(settings=too_much, resources={"limits": {"memory": "1Gi"}}, pinned_bounds=pinned)
        )
    with pytest.raises(ValueError, match="maxConnections 4096 x 384 KiB"):
        gateway.gateway_config(
            _props(
                settings=gateway_contract.GatewaySettings(max_connections=4096),
                resources={"limits": {"memory": "512Mi"}},
                pinned_bounds=frozenset({"max_connections"}),
            )
        )
    # every open WebSocket may hold whole messages both ways: the two bounds multiply
    sockets = gateway_contract.GatewaySettings(websocket_max_open=64, websocket_max_message_bytes=16 << 20)
    added = sockets.worst_case_memory_bytes() - fits.worst_case_memory_bytes()
    assert added == 4 * (64 * (16 << 20) - 16 * (4 << 20))  # 4 messages a socket, over the defaults
    with pytest.raises(ValueError, match=r"websocketMaxOpen 64 x 4 x websocketMaxMessageBytes 16 MiB"):
        gateway.gateway_config(
            _props(
                settings=sockets,
                resources={"limits": {"memory": "1Gi"}},
                pinned_bounds=frozenset({"websocket_max_open", "websocket_max_message_bytes"}),
            )
        )


def test_a_limit_below_the_worst_case_derives_bounds_that_fit_and_says_so(synth: Synth) -> None:
    props = _props(resources={"limits": {"memory": "256Mi"}})
    config = gateway.gateway_config(props)
    assert config.worst_case_memory_bytes() <= 256 << 20
    assert (config.max_connections, config.websocket_max_open) == (213, 3)
    assert config.websocket_max_message_bytes == 4 << 20  # a message size is kept; fewer sockets
    assert config.max_connections_per_peer == 213  # within the lowered maxConnections
    manifests = synth(lambda c: gateway.Gateway(c, "g", props=props))
    text = next(m for m in manifests if m["kind"] == "ConfigMap")["data"]["config.yaml"]
    first = text.partition("\n")[0]
    assert first.startswith("# bounds derived to fit the gateway memory limit 256Mi")
    assert "maxConnections 213" in first and "websocketMaxOpen 3" in first
    assert yaml.safe_load(text)["maxConnections"] == 213
    # what fits is used as it is, without a statement
    roomy = synth(lambda c: gateway.Gateway(c, "g", props=_props(resources={"limits": {"memory": "1Gi"}})))
    assert not next(m for m in roomy if m["kind"] == "ConfigMap")["data"]["config.yaml"].startswith("#")
