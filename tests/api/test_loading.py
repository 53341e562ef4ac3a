"""The bounded YAML reader (``noctaya.api.loading``) as ``load_yaml`` / ``check_stream`` use it.

Aspects:
- bounds, each refused with a clear problem and quickly: stream size, document size (a 10 MB
  document), document count, nesting depth (deep flow and block nesting), alias count and alias
  expansion ("billion laughs"), recursive and unknown aliases;
- garbage: binary input, invalid UTF-8, invalid YAML with its line, unsupported tags (binary, python
  objects, custom, sets), duplicate keys, complex keys, malformed tagged scalars;
- YAML semantics as the API server sees them: timestamps stay strings, YAML 1.1 booleans, merge keys,
  non-string keys stringified, UTF-16 and BOM input, empty documents skipped but counted, the line of
  a document is the line of its first node;
- fuzz (hypothesis): arbitrary bytes and YAML-ish text never raise anything out of ``check_stream``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noctaya.api import documents


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


# ------------------------------------------------------------------------------------------- fuzzing
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
