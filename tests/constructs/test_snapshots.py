"""Rendered output held in syrupy snapshots, and the committed ``dist/`` kept in step with it.

Aspects: the YAML of every example LLMService (as ``noctaya synth`` writes it) matches its snapshot;
``dist/examples/<namespace>/<name>.yaml`` holds exactly that YAML (re-render with
``python -m noctaya.constructs`` after a change). Update snapshots with ``pytest --snapshot-update``.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from noctaya.constructs import output

DIST = pathlib.Path(__file__).resolve().parents[2] / "dist" / "examples"
EXAMPLES = [
    "qwen-nvidia",
    "qwen-ascend",
    "llama-rocm",
    "qwen-cpu",
    "deepseek-sglang",
    "qwen-shared",
    "mistral-oci",
    "qwen-prestaged",
    "qwen-ha",
    "qwen-mtls",
]


def test_the_examples_are_all_covered(rendered: dict[str, Any]) -> None:
    assert sorted(rendered) == sorted(EXAMPLES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_rendered_example(name: str, rendered: dict[str, Any], snapshot: SnapshotAssertion) -> None:
    text = output.to_yaml(rendered[name])
    assert text == snapshot
    committed = (DIST / "llm" / f"{name}.yaml").read_text(encoding="utf-8")
    assert committed == text, (
        "dist/examples is stale: re-render with `.venv/bin/python -m noctaya.constructs`"
    )
