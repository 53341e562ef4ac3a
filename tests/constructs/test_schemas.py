"""Every rendered object is valid for the cluster that receives it.

Aspects: each example LLMService and InferenceRuntime validates against our CRDs; each object of each
example LLMService, of the operator installation and of the security and
observability examples validates against Kubernetes' own schemas (1.28, strict: unknown fields are
errors) or against its CRD's schema (KEDA, Prometheus Operator, ours); the checker itself refuses a
broken object of each family (so the check is real).
"""

from __future__ import annotations

import pathlib
import runpy
from collections.abc import Callable
from typing import Any

import cdk8s
import jsonschema  # type: ignore[import-untyped]
import kubernetes_validate
import pytest
import yaml

from noctaya.api import crds
from noctaya.constructs import install, synthesis

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
Manifest = dict[str, Any]
Rendered = dict[str, list[Manifest]]
Check = Callable[[Manifest], None]


def test_every_example_object_validates(rendered: Rendered, schema_check: Check) -> None:
    kinds = set()
    for manifests in rendered.values():
        for manifest in manifests:
            schema_check(manifest)
            kinds.add(manifest["kind"])
    assert {
        "Deployment",
        "Service",
        "ConfigMap",
        "ScaledObject",
        "PersistentVolumeClaim",
        "Job",
        "PodDisruptionBudget",
    } <= kinds


def test_install_validates(schema_check: Check) -> None:
    manifests = synthesis.render_install(
        props=install.OperatorInstallProps(image="noctaya:test", crds=crds.crds())
    )
    for manifest in manifests:
        schema_check(manifest)
    assert [m["kind"] for m in manifests][:2] == ["CustomResourceDefinition", "CustomResourceDefinition"]


@pytest.mark.parametrize("extra", ["security", "observability"])
def test_security_and_observability_examples_validate(
    extra: str, schema_check: Check, tmp_path: pathlib.Path
) -> None:
    module: dict[str, Any] = runpy.run_path(str(EXAMPLES / extra / "app.py"))
    app = cdk8s.App()
    built = module["charts"](app).values() if extra == "security" else [module["chart"](app)]
    manifests = [m for chart in built for m in chart.to_json()]
    assert manifests
    for manifest in manifests:
        schema_check(manifest)
    written = module["synth"](tmp_path)
    assert all(path.read_text().startswith("apiVersion:") for path in written)


def test_the_checker_refuses_broken_objects(rendered: Rendered, schema_check: Check) -> None:
    manifests = rendered["qwen-ha"]
    deployment = next(m for m in manifests if m["kind"] == "Deployment")
    broken = {**deployment, "spec": {**deployment["spec"], "replicas": "two"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        schema_check(broken)
    scaled = next(m for m in manifests if m["kind"] == "ScaledObject")
    with pytest.raises(jsonschema.ValidationError):
        schema_check({**scaled, "spec": {**scaled["spec"], "triggers": []}})
    with pytest.raises(jsonschema.ValidationError):
        schema_check({**scaled, "spec": {**scaled["spec"], "unknownField": 1}})


def test_example_inputs_validate_against_our_crds(schema_check: Check) -> None:
    documents = [d for p in sorted(EXAMPLES.rglob("*.yaml")) for d in yaml.safe_load_all(p.read_text())]
    assert {d["kind"] for d in documents} == {"LLMService", "InferenceRuntime"}
    for document in documents:
        schema_check(document)
