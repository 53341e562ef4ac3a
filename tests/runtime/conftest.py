"""Fixtures of the runtime tests: LLMService and InferenceRuntime objects built from small dicts.

``make_service(**spec)`` and ``make_runtime(name, **spec)`` start from a minimal valid object and
deep-merge the given spec fields (camelCase, as in YAML), so each test states only what it is about.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from noctaya.api import inferenceruntime, llmservice

ServiceFactory = Callable[..., llmservice.LLMService]
RuntimeFactory = Callable[..., inferenceruntime.InferenceRuntime]


def merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def service(name: str = "qwen", namespace: str = "ai", **spec: Any) -> llmservice.LLMService:
    base = {
        "model": {"source": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct"}},
        "runtime": {"selector": {"vendor": ["nvidia"]}},
    }
    return llmservice.LLMService.model_validate(
        {"metadata": {"name": name, "namespace": namespace}, "spec": merge(base, spec)}
    )


def runtime(name: str = "vllm-nvidia", **spec: Any) -> inferenceruntime.InferenceRuntime:
    base: dict[str, Any] = {
        "vendor": "nvidia",
        "container": {
            "image": "vllm/vllm-openai:v0.9.2",
            "args": ["--model", "{{ .Model.Path }}", "--served-model-name", "{{.Service.Name}}"],
        },
        "accelerator": {"resourceName": "nvidia.com/gpu"},
    }
    merged = merge(base, spec)
    if merged.get("vendor") == "cpu" and "accelerator" not in spec:
        merged.pop("accelerator")
    return inferenceruntime.InferenceRuntime.model_validate({"metadata": {"name": name}, "spec": merged})


@pytest.fixture
def make_service() -> ServiceFactory:
    return service


@pytest.fixture
def make_runtime() -> RuntimeFactory:
    return runtime
