"""Engine families: the conventions of each OpenAI-compatible serving engine Noctaya knows.

A family is data, not code that runs an engine: the readiness path and port the engine uses when the
InferenceRuntime does not say otherwise, the metric names it exports (for ``spec.metrics`` defaults and
the observability examples), and the environment that makes its hub client read from ModelScope
instead of Hugging Face. ``vllm`` is the default family (``spec.family`` in docs/api-reference.md);
``sglang``, ``tgi`` and ``llamacpp`` are extensions.

The InferenceRuntime stays authoritative: its ``container.port`` and ``health`` probes, when given,
win over these conventions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Final

from noctaya.api import inferenceruntime

DEFAULT_FAMILY: Final = "vllm"


class EngineError(ValueError):
    """An unknown engine family (the message names the field and the known families)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class EngineFamily:
    """Conventions of one serving engine.

    - ``port``: the container port the engine listens on by default in Noctaya's runtimes.
    - ``readiness_path`` / ``startup_path``: HTTP GET paths that answer 200 once the model is loaded.
    - ``metrics_path``: Prometheus exposition path on the same port.
    - ``queue_depth_metric`` (and friends): engine metric names, for scrape metadata, alerts and the
      engine signal (``spec.scaling.engineQueueTarget``, ``metric: kvCacheUtil``).
    - ``kv_cache_util_metrics``: KV-cache use gauges (0..1), tried in order: vLLM v1's name first,
      then v0's. TGI exports none; nor does the llama.cpp server Noctaya builds (its
      ``kv_cache_usage_ratio`` gauge is gone from current llama.cpp): ``kvCacheUtil`` with those
      families needs InferenceRuntime ``spec.metrics.kvCacheUtil``.
    - ``modelscope_env``: environment that switches the engine's hub client to ModelScope.
    """

    name: str
    port: int
    readiness_path: str = "/health"
    startup_path: str = "/health"
    metrics_path: str = "/metrics"
    queue_depth_metric: str | None = None
    running_metric: str | None = None
    kv_cache_util_metrics: tuple[str, ...] = ()
    modelscope_env: Mapping[str, str] = dataclasses.field(default_factory=dict)


FAMILIES: Final[Mapping[str, EngineFamily]] = {
    family.name: family
    for family in (
        EngineFamily(
            name="vllm",
            port=inferenceruntime.FAMILY_PORTS[inferenceruntime.Family("vllm")],
            queue_depth_metric="vllm:num_requests_waiting",
            running_metric="vllm:num_requests_running",
            kv_cache_util_metrics=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
            modelscope_env={"VLLM_USE_MODELSCOPE": "True"},
        ),
        EngineFamily(
            name="sglang",
            port=inferenceruntime.FAMILY_PORTS[inferenceruntime.Family("sglang")],
            queue_depth_metric="sglang:num_queue_reqs",
            running_metric="sglang:num_running_reqs",
            kv_cache_util_metrics=("sglang:token_usage",),
            modelscope_env={"SGLANG_USE_MODELSCOPE": "true"},
        ),
        EngineFamily(
            name="tgi",
            port=inferenceruntime.FAMILY_PORTS[inferenceruntime.Family("tgi")],
            queue_depth_metric="tgi_queue_size",
            running_metric="tgi_batch_current_size",
        ),
        EngineFamily(
            name="llamacpp",
            port=inferenceruntime.FAMILY_PORTS[inferenceruntime.Family("llamacpp")],
            queue_depth_metric="llamacpp:requests_deferred",
            running_metric="llamacpp:requests_processing",
        ),
    )
}


def family_for(name: str | None) -> EngineFamily:
    """The family called ``name`` (``None`` means the default, vllm)."""
    try:
        return FAMILIES[name or DEFAULT_FAMILY]
    except KeyError:
        known = ", ".join(FAMILIES)
        raise EngineError(f"spec.family: unknown engine family {name!r} (known: {known})") from None
