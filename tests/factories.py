"""Small LLMService and InferenceRuntime objects for tests, built from the spec fields a test is about.

``service(**spec)`` and ``runtime(name, **spec)`` start from a minimal valid object and deep-merge the
given spec fields (camelCase, as in YAML; lists replace), so each test states only what it is about.
The runtime and construct tests share them through their ``make_service`` / ``make_runtime`` fixtures.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from noctaya.api import inferenceruntime, llmservice


def merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` merged in: mappings recursively, everything else replaced."""
    out = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def service(name: str = "qwen", namespace: str = "ai", **spec: Any) -> llmservice.LLMService:
    """A Hugging Face model served by the best NVIDIA runtime, plus ``spec``."""
    base = {
        "model": {"source": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct"}},
        "runtime": {"selector": {"vendor": ["nvidia"]}},
    }
    return llmservice.LLMService.model_validate(
        {"metadata": {"name": name, "namespace": namespace}, "spec": merge(base, spec)}
    )


def runtime(name: str = "vllm-nvidia", **spec: Any) -> inferenceruntime.InferenceRuntime:
    """A vLLM runtime on one NVIDIA GPU, plus ``spec`` (``vendor="cpu"`` drops the accelerator)."""
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
