"""Engine families.

Aspects: the four families exist with their port and readiness conventions and queue metrics; vllm is
the default; an unknown family is an error naming spec.family and the known ones.
"""

from __future__ import annotations

import pytest

from noctaya.runtime import engines


def test_families() -> None:
    assert set(engines.FAMILIES) == {"vllm", "sglang", "tgi", "llamacpp"}
    assert engines.family_for(None).name == "vllm"
    assert {name: f.port for name, f in engines.FAMILIES.items()} == {
        "vllm": 8000,
        "sglang": 30000,
        "tgi": 80,
        "llamacpp": 8080,
    }
    for family in engines.FAMILIES.values():
        assert family.readiness_path.startswith("/") and family.metrics_path == "/metrics"
        assert family.queue_depth_metric
    assert engines.family_for("vllm").queue_depth_metric == "vllm:num_requests_waiting"


def test_unknown_family() -> None:
    with pytest.raises(
        engines.EngineError, match=r"spec\.family: unknown engine family 'onnx'.*vllm, sglang"
    ):
        engines.family_for("onnx")
