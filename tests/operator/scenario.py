"""Object builders and status readers shared by the operator scenarios."""

from __future__ import annotations

import re
from typing import Any

from tests.operator.apiserver import ApiServer

NS = "ai"
LLMSERVICES = "serving.noctaya.io/v1alpha1/llmservices"
RUNTIMES = "serving.noctaya.io/v1alpha1/inferenceruntimes"
SCALEDOBJECTS = "keda.sh/v1alpha1/scaledobjects"


def runtime_body(
    name: str = "vllm", *, vendor: str = "nvidia", priority: int = 0, image: str = "vllm/vllm-openai:v0.6.0"
) -> dict[str, Any]:
    return {
        "apiVersion": "serving.noctaya.io/v1alpha1",
        "kind": "InferenceRuntime",
        "metadata": {"name": name},
        "spec": {
            "vendor": vendor,
            "priority": priority,
            "container": {"image": image, "args": ["--model", "{{ .Model.Path }}"]},
            "accelerator": {"resourceName": "nvidia.com/gpu"},
        },
    }


def service_body(name: str = "qwen", *, runtime: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    body_spec: dict[str, Any] = {
        "model": {"source": {"uri": "hf://Qwen/Qwen2.5-0.5B-Instruct"}},
        "runtime": runtime or {"name": "vllm"},
        # one replica from the start (a service with min 0 starts none before its first request)
        "scaling": {"min": 1},
    }
    body_spec.update(spec)
    return {
        "apiVersion": "serving.noctaya.io/v1alpha1",
        "kind": "LLMService",
        "metadata": {"name": name, "namespace": NS},
        "spec": body_spec,
    }


def status_of(server: ApiServer, name: str = "qwen") -> dict[str, Any]:
    obj = server.obj(LLMSERVICES, NS, name)
    return (obj or {}).get("status") or {}


def condition(server: ApiServer, type_: str, name: str = "qwen") -> dict[str, Any]:
    for cond in status_of(server, name).get("conditions") or []:
        if cond.get("type") == type_:
            return dict(cond)
    return {}


def max_queue(server: ApiServer, name: str = "qwen") -> int | None:
    """``maxQueue`` of the rendered gateway configuration of ``name``."""
    cm = server.obj("v1/configmaps", NS, f"{name}-gateway")
    match = re.search(r"^maxQueue: (\d+)$", str((cm or {}).get("data", {}).get("config.yaml", "")), re.M)
    return int(match.group(1)) if match else None
