"""Checking documents: from plain YAML data to LLMService / InferenceRuntime objects or problems.

Aspects:
- documents that are not objects of ours: lists, scalars, missing kind, unknown kinds and
  apiVersions, each reported with its line, never ignored;
- strict types (``"2"`` is not an integer), unknown fields, every problem of a document reported
  with kind, namespace/name, path and line; a cross-field rule reports on its object's path, also
  next to errors of other fields;
- metadata: names required, LLMService names DNS-1035 <= 55, InferenceRuntime names DNS subdomains and
  cluster-scoped;
- NaN / Infinity refused; ``load_resources`` returns objects or raises ``DocumentError`` with every
  problem;
- fuzz (hypothesis): arbitrary JSON-like values (also under our apiVersion and kinds) never raise;
- ``input_files``: directories expand to their YAML files in sorted order, ``-`` is stdin only when
  asked for, missing and empty inputs are errors naming the input.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noctaya.api import documents, inferenceruntime, llmservice

LLMS = """apiVersion: serving.noctaya.io/v1alpha1
kind: LLMService
metadata: {name: qwen, namespace: ai}
spec:
  model: {source: {uri: "hf://Qwen/Qwen2.5-7B"}}
  runtime: {name: vllm}
"""


def _problems(data: bytes | str, limits: documents.Limits = documents.DEFAULT_LIMITS) -> list[str]:
    checked, problems = documents.check_stream(data, source="in.yaml", limits=limits)
    return [str(p) for c in checked for p in c.problems] + [str(p) for p in problems]


# ------------------------------------------------------------------------------------- dispatching
def test_not_our_documents_are_reported_not_ignored() -> None:
    text = "\n---\n".join(
        [
            "- a\n- b",
            "just a string",
            "metadata: {name: x}",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, namespace: ns}",
            "apiVersion: serving.noctaya.io/v1beta1\nkind: LLMService\nmetadata: {name: x}\nspec: {}",
            "apiVersion: serving.noctaya.io/v1alpha1\nkind: Widget\nmetadata: {name: w}",
        ]
    )
    problems = _problems(text)
    assert problems == [
        "in.yaml:1: document 1: a document must be a mapping with apiVersion and kind, got a list",
        "in.yaml:4: document 2: a document must be a mapping with apiVersion and kind, got a string",
        "in.yaml:6: document 3: kind: kind is required (LLMService or InferenceRuntime)",
        "in.yaml:9: ConfigMap ns/cm: kind: unknown kind 'ConfigMap' (apiVersion 'v1'): "
        "expected LLMService or InferenceRuntime in serving.noctaya.io/v1alpha1",
        "in.yaml:12: LLMService x: apiVersion: unsupported apiVersion 'serving.noctaya.io/v1beta1' for "
        "LLMService: expected 'serving.noctaya.io/v1alpha1'",
        "in.yaml:18: Widget w: kind: unknown kind 'Widget' (apiVersion 'serving.noctaya.io/v1alpha1'): "
        "expected LLMService or InferenceRuntime in serving.noctaya.io/v1alpha1",
    ]


def test_every_problem_of_a_document_is_reported_with_its_line() -> None:
    text = LLMS.replace("runtime: {name: vllm}", "runtime: {name: vllm, nme: x}") + (
        '  resources: {accelerators: "2", memory: 1x}\n  cache: {strategy: Local}\n'
    )
    problems = _problems(text)
    assert problems == [
        "in.yaml:6: LLMService ai/qwen: spec.runtime.nme: unknown field (did you mean 'name'?)",
        "in.yaml:7: LLMService ai/qwen: spec.resources.accelerators: Input should be a valid integer",
        "in.yaml:7: LLMService ai/qwen: spec.resources.memory: invalid quantity '1x': use a number with an "
        "optional suffix, e.g. 500m, 2, 32Gi, 1e3",
        "in.yaml:8: LLMService ai/qwen: spec.cache.strategy: Input should be 'NodeLocalPVC', 'SharedPVC', "
        "'HostPath', 'BakedImage' or 'None'",
    ]


def test_cross_field_rule_reports_the_object_path() -> None:
    [problem] = _problems(LLMS + "  scaling: {min: 3, max: 2}\n")
    assert problem == "in.yaml:7: LLMService ai/qwen: spec.scaling: min must not exceed max"
    problems = _problems(LLMS + "  scaling: {min: 3, max: 2, target: 0}\n  resources: {memory: 1x}\n")
    assert problems == [  # in line order
        "in.yaml:7: LLMService ai/qwen: spec.scaling.target: Input should be greater than or equal to 1",
        "in.yaml:7: LLMService ai/qwen: spec.scaling: min must not exceed max",
        "in.yaml:8: LLMService ai/qwen: spec.resources.memory: invalid quantity '1x': use a number with an "
        "optional suffix, e.g. 500m, 2, 32Gi, 1e3",
    ]


@pytest.mark.parametrize(
    ("metadata", "fragment"),
    [
        ("{namespace: ai}", "metadata.name: metadata.name is required"),
        ("{name: Qwen}", "metadata.name: metadata.name must be a DNS-1035 label"),
        ("{name: 7b}", "must be a DNS-1035 label"),
        ("{name: " + "a" * 56 + "}", "of at most 55 characters"),
        ("{name: qwen, namespace: Bad_NS}", "metadata.namespace: String should match pattern"),
        ("[1]", "metadata: Input should be an object"),
    ],
)
def test_metadata_of_an_llmservice(metadata: str, fragment: str) -> None:
    text = LLMS.replace("metadata: {name: qwen, namespace: ai}", f"metadata: {metadata}")
    problems = _problems(text)
    assert any(fragment in p for p in problems), problems


def test_inferenceruntime_is_cluster_scoped_with_a_subdomain_name() -> None:
    text = (
        "apiVersion: serving.noctaya.io/v1alpha1\nkind: InferenceRuntime\n"
        "metadata: {name: vllm.v1, namespace: x}\n"
        "spec: {vendor: cpu, container: {image: img}}\n"
    )
    assert _problems(text) == [
        "in.yaml:3: InferenceRuntime vllm.v1: metadata.namespace: InferenceRuntime is cluster-scoped: "
        "metadata.namespace must not be set"
    ]
    assert _problems(text.replace("vllm.v1", "Vllm")) == [
        "in.yaml:3: InferenceRuntime Vllm: metadata.name: metadata.name must be a DNS subdomain (lowercase "
        "letters, digits, '-' and '.')",
        "in.yaml:3: InferenceRuntime Vllm: metadata.namespace: InferenceRuntime is cluster-scoped: "
        "metadata.namespace must not be set",
    ]


def test_load_resources() -> None:
    runtime = "apiVersion: serving.noctaya.io/v1alpha1\nkind: InferenceRuntime\nmetadata: {name: vllm}\n"
    runtime += "spec: {vendor: cpu, container: {image: img}}\n"
    objs = documents.load_resources(LLMS + "---\n" + runtime, source="x.yaml")
    assert [type(o) for o in objs] == [llmservice.LLMService, inferenceruntime.InferenceRuntime]
    with pytest.raises(documents.DocumentError) as info:
        documents.load_resources(LLMS + "  scaling: {min: 2, max: 1}\n---\n[1]\n---\na: [", source="x.yaml")
    assert len(info.value.problems) == 3
    assert "min must not exceed max" in str(info.value)


def test_nan_and_infinity_are_refused() -> None:
    problems = _problems(LLMS + "  scaling: {target: .nan}\n")
    assert problems and "not representable as JSON" in problems[0]


# ------------------------------------------------------------------------------------------- fuzzing
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(
    st.fixed_dictionaries(
        {
            "apiVersion": st.just("serving.noctaya.io/v1alpha1"),
            "kind": st.sampled_from(["LLMService", "InferenceRuntime"]),
        },
        optional={"metadata": _JSON, "spec": _JSON, "status": _JSON},
    )
    | _JSON
)
def test_fuzz_values_never_raise(value: Any) -> None:
    text = yaml.safe_dump(value, allow_unicode=True)
    checked, problems = documents.check_stream(text, source="fuzz")
    assert problems == [] or all(str(p) for p in problems)
    for result in checked:
        assert all(str(p) for p in result.problems)


def test_input_files(tmp_path: pathlib.Path) -> None:
    (tmp_path / "b.yaml").write_text("{}")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.yml").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    (tmp_path / "empty").mkdir()
    found = list(documents.input_files([str(tmp_path), "-"], stdin=True))
    assert found == [
        (str(tmp_path / "b.yaml"), tmp_path / "b.yaml", None),
        (str(tmp_path / "sub" / "a.yml"), tmp_path / "sub" / "a.yml", None),
        ("<stdin>", None, None),
    ]
    refused = list(documents.input_files(["-", str(tmp_path / "empty"), str(tmp_path / "nope")], stdin=False))
    assert refused == [
        ("-", None, "no such file or directory"),
        (str(tmp_path / "empty"), None, "directory holds no *.yaml or *.yml files"),
        (str(tmp_path / "nope"), None, "no such file or directory"),
    ]


def test_an_unknown_field_names_the_closest_known_one_at_its_depth() -> None:
    text = (
        LLMS
        + "  endpoint:\n    maxQeue: 5\n    coldStart: {mdoe: reject}\n"
        + "    resources: {limits: {memroy: 1Gi}}\n  scalng: {}\n"
    )
    assert _problems(text) == [
        "in.yaml:8: LLMService ai/qwen: spec.endpoint.maxQeue: unknown field (did you mean 'maxQueue'?)",
        "in.yaml:9: LLMService ai/qwen: spec.endpoint.coldStart.mdoe: unknown field (did you mean 'mode'?)",
        "in.yaml:10: LLMService ai/qwen: spec.endpoint.resources.limits.memroy: unknown field (did you mean "
        "'memory'?)",
        "in.yaml:11: LLMService ai/qwen: spec.scalng: unknown field (did you mean 'scaling'?)",
    ]
    far = _problems(LLMS + "  surprise: 1\n")
    assert far == ["in.yaml:7: LLMService ai/qwen: spec.surprise: unknown field"]


def test_an_unknown_kind_of_our_group_is_a_problem_never_another_apis_document() -> None:
    text = LLMS.replace("kind: LLMService", "kind: LLMServce")
    [checked], _ = documents.check_stream(text, source="in.yaml")
    assert not checked.foreign and [str(p) for p in checked.problems] == [
        "in.yaml:2: LLMServce ai/qwen: kind: unknown kind 'LLMServce' (apiVersion "
        "'serving.noctaya.io/v1alpha1'): expected LLMService or InferenceRuntime in "
        "serving.noctaya.io/v1alpha1 (did you mean 'LLMService'?)"
    ]
    [widget], _ = documents.check_stream(LLMS.replace("kind: LLMService", "kind: Widget"), source="in.yaml")
    assert not widget.foreign  # of our group: a mistake, whatever its name
    [theirs], _ = documents.check_stream(
        LLMS.replace("serving.noctaya.io/v1alpha1", "apps/v1").replace(
            "kind: LLMService", "kind: Deployment"
        ),
        source="in.yaml",
    )
    assert theirs.foreign
