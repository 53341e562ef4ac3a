"""The config files the constructs render are accepted by the processes that read them.

Aspects: every gateway ConfigMap of every example parses with ``noctaya.gateway.config`` and every
aggregate scaler ConfigMap with ``noctaya.scaler.config`` (the real models, not a copy of their
schema); the parsed values are the ones the LLMService asked for (queue bound, mode, activation
timeout, API key file, report target, member bound).
"""

from __future__ import annotations

from typing import Any

import yaml

from noctaya.gateway import config as gateway_config
from noctaya.scaler import config as scaler_config

Rendered = dict[str, list[dict[str, Any]]]


def _config(manifests: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (config_map,) = [m for m in manifests if m["kind"] == "ConfigMap" and m["metadata"]["name"] == name]
    document: dict[str, Any] = yaml.safe_load(config_map["data"]["config.yaml"])
    return document


def test_every_gateway_config_parses(rendered: Rendered) -> None:
    for name, manifests in rendered.items():
        parsed = gateway_config.build_config(_config(manifests, f"{name}-gateway"))
        assert parsed is not None


def test_values_reach_the_gateway(rendered: Rendered) -> None:
    sglang = _config(rendered["deepseek-sglang"], "deepseek-sglang-gateway")
    assert (sglang["maxQueue"], sglang["heartbeatInterval"]) == (200, "5s")
    assert gateway_config.build_config(sglang) is not None
    cpu = _config(rendered["qwen-cpu"], "qwen-cpu-gateway")
    assert cpu["coldStartMode"] == "reject" and cpu["backendUrl"] == "http://qwen-cpu.llm.svc:8080"
    ha = _config(rendered["qwen-ha"], "qwen-ha-gateway")
    assert ha["apiKeyFile"] == "/etc/noctaya/api-key/key" and ha["scaler"] is None
    assert ha["report"]["url"] == "http://qwen-ha-scaler.llm.svc:9091"


def test_aggregate_scaler_config_parses(rendered: Rendered) -> None:
    document = _config(rendered["qwen-ha"], "qwen-ha-scaler")
    parsed = scaler_config.build_config(document)
    assert parsed is not None
    assert document["maxMemberDemand"] == 100 + 1000
    assert document["service"] == {"name": "qwen-ha", "namespace": "llm"}
