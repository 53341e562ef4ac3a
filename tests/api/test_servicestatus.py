"""The LLMService status models.

Aspects: every status name is also importable from ``noctaya.api.llmservice`` (the operator and
others use that spelling); a status parses from and dumps to its camelCase API form (``endpointURL``,
``lastActivation`` with phase timings as Go durations); failure and progress reasons do not overlap.
"""

from __future__ import annotations

import pytest

from noctaya.api import llmservice, servicestatus

NAMES = [
    "Phase",
    "ConditionType",
    "Reason",
    "FAILURE_REASONS",
    "PROGRESS_REASONS",
    "PhaseTiming",
    "Activation",
    "LLMServiceStatus",
]


@pytest.mark.parametrize("name", NAMES)
def test_reexported_from_llmservice(name: str) -> None:
    assert getattr(llmservice, name) is getattr(servicestatus, name)


def test_round_trip_in_api_form() -> None:
    document = {
        "phase": "Ready",
        "resolvedRuntime": "vllm-nvidia",
        "replicas": 1,
        "endpointURL": "http://qwen-gateway.ai.svc/v1",
        "lastActivation": {
            "startedAt": "2026-01-01T00:00:00Z",
            "readyAt": "2026-01-01T00:01:32Z",
            "phases": [{"name": "ModelLoaded", "duration": "92s"}],
        },
    }
    status = servicestatus.LLMServiceStatus.model_validate(document)
    assert status.phase is servicestatus.Phase.READY
    assert status.last_activation is not None
    assert status.last_activation.phases[0].duration.total_seconds == 92
    dumped = status.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert dumped["endpointURL"] == document["endpointURL"]
    assert dumped["lastActivation"]["phases"] == [{"name": "ModelLoaded", "duration": "1m32s"}]


def test_failure_and_progress_reasons_are_disjoint() -> None:
    assert not servicestatus.FAILURE_REASONS & servicestatus.PROGRESS_REASONS
