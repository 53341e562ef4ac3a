"""Reading config files.

Aspects: YAML and JSON mappings are read; a file that is too large, not a mapping, not valid, or
nested deeper than the bound is refused with a ``ConfigError`` that names the file and the problem —
never a RecursionError; brackets inside JSON strings do not count as nesting; every problem of a
model is one line naming its field by its file key.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from noctaya.contract import documents
from noctaya.contract import gateway as gateway_contract


def test_yaml_and_json_mappings(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.yaml").write_text("maxQueue: 5\nservice: {name: q, namespace: ai}\n")
    (tmp_path / "b.json").write_text(json.dumps({"maxQueue": 5, "note": "[[[[{{{{" * 100}))
    assert documents.read_document(tmp_path / "a.yaml")["service"] == {"name": "q", "namespace": "ai"}
    assert documents.read_document(tmp_path / "b.json")["maxQueue"] == 5
    (tmp_path / "empty.yaml").write_text("")
    assert documents.read_document(tmp_path / "empty.yaml") == {}


@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [
        ("deep.yaml", "a: " + "[" * 100_000 + "]" * 100_000, "nested deeper than 32"),
        ("deep.json", '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 32"),
        ("block.yaml", "".join(f"{'  ' * i}k{i}:\n" for i in range(40)) + "  " * 40 + "v: 1\n", "deeper"),
        ("list.yaml", "- 1\n- 2\n", "expected a mapping"),
        ("bad.json", "{", "not valid YAML/JSON"),
        ("bad.yaml", "a: [\n", "not valid YAML/JSON"),
        ("big.yaml", "a: " + "x" * (documents.MAX_CONFIG_BYTES + 1), "larger than"),
    ],
)
def test_unusable_files(tmp_path: pathlib.Path, name: str, content: str, problem: str) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(documents.ConfigError, match=problem) as caught:
        documents.read_document(path)
    assert str(path) in str(caught.value)


def test_missing_file(tmp_path: pathlib.Path) -> None:
    with pytest.raises(documents.ConfigError, match="cannot read"):
        documents.read_document(tmp_path / "absent.yaml")


def test_one_line_per_problem_named_by_file_key() -> None:
    with pytest.raises(documents.ConfigError) as caught:
        gateway_contract.build_config({"backendUrl": "ftp://b", "maxQueue": 0, "coldStartMode": "hold"})
    lines = str(caught.value).splitlines()
    assert [line.split(":")[0] for line in lines] == ["maxQueue", "coldStartMode", "backendUrl"]
