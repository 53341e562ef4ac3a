"""The engine signal's rendering: the headless Service of the Ready backend Pods and the scaler's section.

Aspects: nothing new is rendered unless scaling reads the engines (``metric: kvCacheUtil`` or
``engineQueueTarget``); then a headless Service ``<name>-engines`` (clusterIP None, Ready Pods
only, the backend's selector, the metrics port) passes Kubernetes' schema, the co-located scaler's
config (one gateway) or the aggregate scaler's (several) carries the ``engine`` section with the
family's names (vLLM v1 then v0 KV gauge) or the InferenceRuntime's overrides, and the ScaledObject's
trigger the served target (``kvCacheTarget`` as a fraction, ``AverageValue``); a family without a
KV-cache gauge (llama.cpp, TGI) and no override is refused naming the field; the longest LLMService
name still gives a DNS-label Service name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import yaml

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import settings, synthesis
from noctaya.runtime import rendering

Manifest = dict[str, Any]
MakeService = Callable[..., llmservice.LLMService]
MakeRuntime = Callable[..., inferenceruntime.InferenceRuntime]


def render(service: llmservice.LLMService, runtime: inferenceruntime.InferenceRuntime) -> list[Manifest]:
    return synthesis.render_llmservice(service=service, runtime=runtime, settings=settings.RenderSettings())


def one(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    found = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(found) == 1, (kind, name)
    return found[0]


def config(manifests: list[Manifest], name: str) -> dict[str, Any]:
    data = one(manifests, "ConfigMap", name)["data"]
    loaded: dict[str, Any] = yaml.safe_load(next(iter(data.values())))
    return loaded


def test_nothing_new_without_the_engine_signal(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    manifests = render(make_service(), make_runtime())
    assert not [m for m in manifests if m["metadata"]["name"].endswith("-engines")]
    assert "engine" not in config(manifests, "qwen-gateway")["scaler"]


def test_kv_cache_util_renders_the_headless_service_section_and_target(
    make_service: MakeService,
    make_runtime: MakeRuntime,
    schema_check: Callable[[Manifest], None],
) -> None:
    manifests = render(make_service(scaling={"metric": "kvCacheUtil", "kvCacheTarget": 75}), make_runtime())
    headless = one(manifests, "Service", "qwen-engines")
    schema_check(headless)
    backend = one(manifests, "Service", "qwen-backend")
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is False
    assert headless["spec"]["selector"] == backend["spec"]["selector"]
    assert [p["port"] for p in headless["spec"]["ports"]] == [8000]
    engine = config(manifests, "qwen-gateway")["scaler"]["engine"]
    assert engine["host"] == "qwen-engines.ai.svc"
    assert (engine["port"], engine["path"]) == (8000, "/metrics")
    assert engine["kvCacheMetrics"] == ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]
    assert (engine["kvCacheTarget"], engine["queueTarget"], engine["queueMetrics"]) == (0.75, None, [])
    trigger = one(manifests, "ScaledObject", "qwen")["spec"]["triggers"][0]
    assert trigger["metricType"] == "AverageValue"
    assert trigger["metadata"]["metricName"] == "kvCacheUtil"
    assert trigger["metadata"]["target"] == "0.75"


def test_the_engine_queue_with_several_gateways_goes_to_the_aggregate_scaler(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    runtime = make_runtime(metrics={"queueDepth": "my:waiting", "port": 9100, "path": "/stats"})
    manifests = render(make_service(scaling={"engineQueueTarget": 3}, endpoint={"replicas": 2}), runtime)
    assert one(manifests, "Service", "qwen-engines")["spec"]["ports"][0]["targetPort"] == 9100
    engine = config(manifests, "qwen-scaler")["engine"]
    assert (engine["port"], engine["path"], engine["queueMetrics"], engine["queueTarget"]) == (
        9100,
        "/stats",
        ["my:waiting"],
        3.0,
    )
    assert (
        "scaler" not in config(manifests, "qwen-gateway") or not config(manifests, "qwen-gateway")["scaler"]
    )
    trigger = one(manifests, "ScaledObject", "qwen")["spec"]["triggers"][0]
    assert (trigger["metadata"]["metricName"], trigger["metadata"]["target"]) == ("queueDepth", "10")


@pytest.mark.parametrize("family", ["llamacpp", "tgi"])
def test_a_family_without_a_kv_cache_gauge_is_refused(
    make_service: MakeService, make_runtime: MakeRuntime, family: str
) -> None:
    runtime = make_runtime(family=family, container={"port": {"name": "http", "containerPort": 8080}})
    with pytest.raises(rendering.RenderError, match=r"spec\.scaling\.metric: kvCacheUtil.*spec\.metrics"):
        render(make_service(scaling={"metric": "kvCacheUtil"}), runtime)
    overridden = make_runtime(
        family=family,
        container={"port": {"name": "http", "containerPort": 8080}},
        metrics={"queueDepth": "q", "kvCacheUtil": "my:kv"},
    )
    engine = config(render(make_service(scaling={"metric": "kvCacheUtil"}), overridden), "qwen-gateway")
    assert engine["scaler"]["engine"]["kvCacheMetrics"] == ["my:kv"]


def test_the_longest_name_gives_a_dns_label(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    name = "a" * 55
    manifests = render(make_service(name=name, scaling={"engineQueueTarget": 1}), make_runtime())
    assert len(one(manifests, "Service", f"{name}-engines")["metadata"]["name"]) == 63
