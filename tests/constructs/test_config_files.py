"""The config files the constructs render are accepted by the processes that read them.

Aspects: every gateway ConfigMap of every example parses with ``noctaya.contract.gateway`` and every
aggregate scaler ConfigMap with ``noctaya.contract.scaler`` (the models the processes read them with);
the parsed values are the ones the LLMService asked for (queue bound, mode, activation timeout, API
key file, report target, member bound); a value the CRD accepts but the contract would refuse is
refused at render time naming the LLMService field.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import yaml

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import process, settings, synthesis
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract

Rendered = dict[str, list[dict[str, Any]]]


def _config(manifests: list[dict[str, Any]], name: str) -> dict[str, Any]:
    (config_map,) = [m for m in manifests if m["kind"] == "ConfigMap" and m["metadata"]["name"] == name]
    document: dict[str, Any] = yaml.safe_load(config_map["data"]["config.yaml"])
    return document


def test_every_gateway_config_parses(rendered: Rendered) -> None:
    """Each rendered file is read back by the gateway's own model into the same document: every key
    the renderer wrote is one the gateway understands, with the value it meant."""
    for name, manifests in rendered.items():
        document = _config(manifests, f"{name}-gateway")
        parsed = gateway_contract.build_config(document)
        assert parsed.service is not None and parsed.service.name == name
        assert parsed.model_dump(mode="json", by_alias=True) == document, name


def test_values_reach_the_gateway(rendered: Rendered) -> None:
    sglang = _config(rendered["deepseek-sglang"], "deepseek-sglang-gateway")
    assert (sglang["maxQueue"], sglang["heartbeatInterval"]) == (200, "5s")
    parsed = gateway_contract.build_config(sglang)
    assert (parsed.max_queue, parsed.heartbeat_interval) == (200, 5.0)
    cpu = _config(rendered["qwen-cpu"], "qwen-cpu-gateway")
    assert cpu["coldStartMode"] == "reject" and cpu["backendUrl"] == "http://qwen-cpu-backend.llm.svc:8080"
    ha = _config(rendered["qwen-ha"], "qwen-ha-gateway")
    assert ha["apiKeyFile"] == "/etc/noctaya/api-key/key" and ha["scaler"] is None
    assert ha["report"]["url"] == "http://qwen-ha-scaler.llm.svc:9091"


def test_aggregate_scaler_config_parses(rendered: Rendered) -> None:
    document = _config(rendered["qwen-ha"], "qwen-ha-scaler")
    parsed = scaler_contract.build_config(document)
    assert document["maxMemberDemand"] == parsed.max_member_demand == 100 + 1000
    assert document["service"] == {"name": "qwen-ha", "namespace": "llm"}
    assert (parsed.service.name, parsed.service.namespace) == ("qwen-ha", "llm")


@pytest.mark.parametrize(
    ("spec", "runtime_spec", "fragment"),
    [
        ({"endpoint": {"maxQueue": 1_000_001}}, {}, "spec.endpoint.maxQueue"),
        ({"endpoint": {"maxQueue": 20_000_000, "replicas": 2}}, {}, "spec.endpoint.maxQueue"),
        ({"scaling": {"target": 1_000_001}}, {}, "spec.scaling.target"),
        (
            {},
            {"health": {"readiness": {"httpGet": {"path": "/health?full=1", "port": "http"}}}},
            "readiness.httpGet.path",
        ),
    ],
)
def test_values_a_process_would_refuse_are_refused_at_render_time(
    make_service: Callable[..., llmservice.LLMService],
    make_runtime: Callable[..., inferenceruntime.InferenceRuntime],
    spec: dict[str, Any],
    runtime_spec: dict[str, Any],
    fragment: str,
) -> None:
    service, runtime = make_service(**spec), make_runtime(**runtime_spec)  # the CRD accepts both
    with pytest.raises(ValueError, match=re.escape(fragment)):
        synthesis.render_llmservice(service=service, runtime=runtime, settings=settings.RenderSettings())


def test_the_warm_until_annotation_reaches_every_gateway_as_warm_until(
    make_runtime: Callable[..., inferenceruntime.InferenceRuntime],
) -> None:
    """The annotation becomes ``warmUntil`` in UTC; without it the field is null; a malformed one is
    refused when the document is read, naming the annotation. ``warmUntil`` is live: the gateway
    Deployment's config hash is the same whatever its value (a change rolls no gateway), while a
    change of any other field changes the hash."""

    def service(annotations: dict[str, str]) -> llmservice.LLMService:
        return llmservice.LLMService.model_validate(
            {
                "metadata": {"name": "qwen", "namespace": "ai", "annotations": annotations},
                "spec": {
                    "model": {"source": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct"}},
                    "runtime": {"selector": {"vendor": ["nvidia"]}},
                },
            }
        )

    def manifests(annotations: dict[str, str], **spec: Any) -> list[dict[str, Any]]:
        llm = service(annotations)
        if spec:
            llm = llm.model_copy(update={"spec": llm.spec.model_copy(update=spec)})
        return synthesis.render_llmservice(
            service=llm, runtime=make_runtime(), settings=settings.RenderSettings()
        )

    def rendered(annotations: dict[str, str]) -> dict[str, Any]:
        return _config(manifests(annotations), "qwen-gateway")

    def config_hash(annotations: dict[str, str], **spec: Any) -> str:
        (deployment,) = [
            m
            for m in manifests(annotations, **spec)
            if m["kind"] == "Deployment" and m["metadata"]["name"] == "qwen-gateway"
        ]
        value: str = deployment["spec"]["template"]["metadata"]["annotations"][process.CONFIG_HASH_ANNOTATION]
        return value

    warm = rendered({llmservice.WARM_UNTIL_ANNOTATION: "2026-12-01T19:30:00+01:00"})
    assert warm["warmUntil"] == "2026-12-01T18:30:00Z"
    assert gateway_contract.build_config(warm).warm_until == "2026-12-01T18:30:00Z"
    assert rendered({})["warmUntil"] is None
    with pytest.raises(ValueError, match=r"serving.noctaya.io/warm-until\]: 'tonight' is not an RFC 3339"):
        service({llmservice.WARM_UNTIL_ANNOTATION: "tonight"})
    assert gateway_contract.LIVE_FIELDS == ("warm_until",)
    unwarmed = config_hash({})
    assert config_hash({llmservice.WARM_UNTIL_ANNOTATION: "2026-12-01T19:30:00+01:00"}) == unwarmed
    assert config_hash({llmservice.WARM_UNTIL_ANNOTATION: "2027-01-01T00:00:00Z"}) == unwarmed
    endpoint = service({}).spec.endpoint.model_copy(update={"max_queue": 7})
    assert (
        config_hash({llmservice.WARM_UNTIL_ANNOTATION: "2027-01-01T00:00:00Z"}, endpoint=endpoint) != unwarmed
    )
