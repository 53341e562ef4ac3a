"""Loading hostile YAML and checking documents.

Aspects:
- bounds, each refused with a clear problem and quickly: stream size, document size (a 10 MB document),
  document count, nesting depth (deep flow and block nesting), alias count and alias expansion
  ("billion laughs"), binary input, invalid UTF-8, invalid YAML with its line;
- YAML semantics as the API server sees them: timestamps stay strings, YAML 1.1 booleans, merge keys,
  duplicate keys refused, complex keys refused, unsupported tags refused, non-string keys stringified,
  UTF-16 and BOM input, empty documents skipped but counted;
- documents that are not objects of ours: lists, scalars, missing kind, unknown kinds and apiVersions;
- strict types (``"5"`` is not an integer), unknown fields, every problem of a document reported
  with kind, namespace/name, path and line; cross-field rules report on the object's path;
- metadata: names required, LLMService names DNS-1035 <= 55, InferenceRuntime cluster-scoped;
- ``load_resources`` returns objects or raises ``DocumentError`` carrying every problem;
- fuzz (hypothesis): arbitrary bytes, YAML-ish text and arbitrary JSON-like values never raise
  anything out of ``check_stream``.
"""

from __future__ import annotations

import time
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


def _load(text: str) -> list[Any]:
    docs, problems = documents.load_yaml(text, source="in.yaml")
    assert problems == [], problems
    return [d.data for d in docs]


# ------------------------------------------------------------------------------------------- bounds
def test_stream_size_is_bounded_before_parsing() -> None:
    limits = documents.Limits(max_stream_bytes=1000)
    assert _problems(b"a: 1\n" * 300, limits) == ["in.yaml: input larger than 1000 bytes"]


def test_a_10_mb_document_is_refused_quickly() -> None:
    start = time.perf_counter()
    text = "a: " + "x" * 10_000_000 + "\n"  # 10 MB, under a raised stream limit
    limits = documents.Limits(max_stream_bytes=32 * 1024 * 1024)
    [problem] = _problems(text, limits)
    assert "document larger than 1572864 characters" in problem
    assert time.perf_counter() - start < 5
    [problem] = _problems("a: " + "x" * 10_000_000)
    assert "input larger than 8388608 bytes" in problem


def test_document_count_is_bounded() -> None:
    limits = documents.Limits(max_documents=3)
    assert "more than 3 documents" in _problems("---\na: 1\n" * 5, limits)[-1]


@pytest.mark.parametrize(
    "text", ["[" * 10_000, "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 200))]
)
def test_nesting_depth_is_bounded(text: str) -> None:
    [problem] = _problems(text)
    assert "nesting deeper than 64 levels" in problem


def test_billion_laughs_is_refused_without_expanding() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    start = time.perf_counter()
    [problem] = _problems("\n".join(lines))
    assert "expands to more than 100000 values" in problem
    assert time.perf_counter() - start < 1


def test_alias_count_is_bounded() -> None:
    text = "a: &a x\nb: [" + ", ".join(["*a"] * 100) + "]\n"
    [problem] = _problems(text)
    assert "more than 64 aliases" in problem


def test_small_aliases_and_merge_keys_work() -> None:
    [data] = _load("base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  y: 3\nlist: [*b]\n")
    assert data == {"base": {"x": 1, "y": 2}, "other": {"x": 1, "y": 3}, "list": [{"x": 1, "y": 2}]}
    [data] = _load("a: &a {x: 1}\nb: &b {y: 2}\nc: {<<: [*a, *b]}\n")
    assert data["c"] == {"x": 1, "y": 2}


def test_recursive_and_unknown_aliases_are_refused() -> None:
    assert "refers to no (complete) anchor" in _problems("a: &a [*a]\n")[0]
    assert (
        "refers to no (complete) anchor" in _problems("a: *nope\n")[0]
        or "invalid YAML" in _problems("a: *nope\n")[0]
    )


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"\x00\x01\x02binary", "binary data (NUL bytes)"),
        (b"a: \xff\xfe\xfd", "not UTF-8 text"),
        (b"\x7fELF\x02\x01\x01", "invalid YAML"),
        ("a: [1, 2\n", "invalid YAML: did not find expected ',' or ']'"),
        ("a: b: c\n", "invalid YAML: mapping values are not allowed"),
        ("\tkey: value\n", "invalid YAML"),
        ("a: !!binary aGVsbG8=\n", "unsupported tag tag:yaml.org,2002:binary"),
        ("a: !!python/object:os.system x\n", "unsupported tag"),
        ("a: !custom {x: 1}\n", "unsupported tag !custom on a mapping"),
        ("a: !!set {x, y}\n", "unsupported tag"),
        ("a: 1\na: 2\n", "duplicate key 'a'"),
        ("? [a, b]\n: c\n", "mapping keys must be scalars"),
        ("a: !!int nope\n", "invalid int 'nope'"),
    ],
)
def test_garbage_gets_a_clear_problem(data: bytes | str, fragment: str) -> None:
    problems = _problems(data)
    assert problems and fragment in problems[0], problems


def test_yaml_semantics_as_the_api_server_sees_them() -> None:
    [data] = _load(
        "t: 2024-01-01\nb: yes\nn: ~\ni: 0x10\nf: 1.5\n"
        "k: {1: x, true: y, null: z}\ns: !!str 5\ne: !!float 1\n"
    )
    assert data == {
        "t": "2024-01-01",
        "b": True,
        "n": None,
        "i": 16,
        "f": 1.5,
        "k": {"1": "x", "true": "y", "null": "z"},
        "s": "5",
        "e": 1.0,
    }
    assert _load("\ufeffa: 1\n") == [{"a": 1}]
    assert _load("---\n---\n# only a comment\n---\na: 1\n") == [{"a": 1}]
    docs, _ = documents.load_yaml("a: 1\n".encode("utf-16"), source="x")
    assert [d.data for d in docs] == [{"a": 1}]
    docs, _ = documents.load_yaml("---\n---\nx: 1\n", source="x")
    assert docs[0].index == 2 and docs[0].line == 3


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
        "in.yaml:6: LLMService ai/qwen: spec.runtime.nme: unknown field",
        "in.yaml:7: LLMService ai/qwen: spec.resources.accelerators: Input should be a valid integer",
        "in.yaml:7: LLMService ai/qwen: spec.resources.memory: invalid quantity '1x': use a number with an "
        "optional suffix, e.g. 500m, 2, 32Gi, 1e3",
        "in.yaml:8: LLMService ai/qwen: spec.cache.strategy: Input should be 'NodeLocalPVC', 'SharedPVC', "
        "'HostPath', 'BakedImage' or 'None'",
    ]


def test_cross_field_rule_reports_the_object_path() -> None:
    [problem] = _problems(LLMS + "  scaling: {min: 3, max: 2}\n")
    assert problem == "in.yaml:7: LLMService ai/qwen: spec.scaling: min must not exceed max"


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
_YAMLISH = st.lists(
    st.sampled_from(
        [
            "apiVersion: serving.noctaya.io/v1alpha1\n", "kind: LLMService\n", "kind: InferenceRuntime\n",
            "spec:\n", "  model:\n", "    source: {uri: hf://a/b}\n", "  runtime: {name: x}\n",
            "metadata: {name: a}\n", "---\n", "&a ", "*a", "<<: ", "[", "]", "{", "}", ": ", "- ", "  ", "\t",
            "'", '"', "!!int ", "!x ",
            "? ", "|\n", ">\n", "#", "\n", "%YAML 1.1\n", "...\n", "\x00", "\ufeff", "é", "1e9", "~",
        ]
    ),
    max_size=30,
).map("".join)  # fmt: skip


@settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.binary(max_size=300) | _YAMLISH.map(str.encode) | _YAMLISH)
def test_fuzz_text_never_raises(data: bytes | str) -> None:
    checked, problems = documents.check_stream(data, source="fuzz")
    for result in checked:
        assert result.ok == (result.obj is not None)
        for problem in result.problems:
            assert str(problem)
    for problem in problems:
        assert str(problem)


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
