"""Fixtures of the construct tests.

- ``examples`` / ``rendered``: every LLMService of ``examples/`` with the runtime it selects, and its
  rendered manifests (rendered once per session: jsii is slow to start, rendering is not).
- ``make_service`` / ``make_runtime``: small LLMService / InferenceRuntime objects, deep-merged from
  the spec fields a test is about (``tests/factories.py``, shared with the runtime tests).
- ``synth``: render one construct in a fresh chart and return its manifests.
- ``schema_check``: validate a manifest the way a cluster would: built-in kinds against Kubernetes'
  own schemas (kubernetes-validate, strict, 1.28), KEDA / Prometheus Operator kinds against the CRD
  subsets in ``scripts/crds/``, our kinds against the CRDs ``noctaya.api.crds`` generates.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable
from typing import Any

import cdk8s
import constructs
import jsonschema  # type: ignore[import-untyped]
import kubernetes_validate
import pytest
import yaml

from noctaya.api import crds, inferenceruntime, llmservice
from noctaya.constructs import command, settings, synthesis
from noctaya.runtime import selection

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the shared helpers are imported as tests.<module>
    sys.path.insert(0, str(ROOT))

from tests import factories  # noqa: E402

EXAMPLES = ROOT / "examples"
KUBERNETES_VERSION = "1.28.0"

Manifest = dict[str, Any]
Rendered = dict[str, list[Manifest]]


@pytest.fixture
def make_service() -> Callable[..., llmservice.LLMService]:
    return factories.service


@pytest.fixture
def make_runtime() -> Callable[..., inferenceruntime.InferenceRuntime]:
    return factories.runtime


@pytest.fixture
def synth() -> Callable[[Callable[[constructs.Construct], object]], list[Manifest]]:
    """``synth(lambda chart: Backend(chart, "b", props=...))`` -> the chart's manifests."""

    def run(build: Callable[[constructs.Construct], object]) -> list[Manifest]:
        chart = cdk8s.Chart(cdk8s.App(), "test", disable_resource_name_hashes=True)
        build(chart)
        result: list[Manifest] = chart.to_json()
        return result

    return run


@pytest.fixture(scope="session")
def examples() -> dict[str, tuple[llmservice.LLMService, inferenceruntime.InferenceRuntime]]:
    loaded = command.load([str(EXAMPLES)])
    assert not loaded.problems, loaded.problems
    runtimes = [r for _, r in loaded.runtimes]
    return {s.name: (s, selection.select_runtime(service=s, runtimes=runtimes)) for _, s in loaded.services}


@pytest.fixture(scope="session")
def rendered(
    examples: dict[str, tuple[llmservice.LLMService, inferenceruntime.InferenceRuntime]],
) -> Rendered:
    render = settings.RenderSettings()
    return {
        name: synthesis.render_llmservice(service=s, runtime=r, settings=render)
        for name, (s, r) in examples.items()
    }


def _crd_schemas() -> dict[tuple[str, str], Any]:
    documents = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "scripts" / "crds").glob("*.yaml"))]
    documents += crds.crds()
    schemas = {}
    for crd in documents:
        for version in crd["spec"]["versions"]:
            api_version = f"{crd['spec']['group']}/{version['name']}"
            schemas[(api_version, crd["spec"]["names"]["kind"])] = version["schema"]["openAPIV3Schema"]
    return schemas


def _strict(schema: Any) -> Any:
    """Refuse unknown fields where properties are listed (the API server prunes them silently)."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if (
            "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


@pytest.fixture(scope="session")
def schema_check() -> Callable[[Manifest], None]:
    schemas = {key: _strict(value) for key, value in _crd_schemas().items()}
    for schema in schemas.values():  # metadata is the API server's, not the CRD's
        schema["properties"]["metadata"] = {"type": "object"}

    def check(manifest: Manifest) -> None:
        key = (manifest["apiVersion"], manifest["kind"])
        if key in schemas:
            jsonschema.validate(manifest, schemas[key])
            return
        kubernetes_validate.validate(manifest, KUBERNETES_VERSION, strict=True)

    return check
