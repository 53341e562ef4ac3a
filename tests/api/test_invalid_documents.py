"""Invalid documents, one per rule of docs/api-reference.md (``data/invalid.yaml``), refused offline
and by the CRD.

Aspects:
- every case is refused by ``noctaya validate`` (the command itself, on the document written to a
  file), with exactly the expected field path and message fragment, and exit status 1;
- the same problem comes from the library (``documents.check_stream``) with kind and namespace/name;
- for every case the CRD carries, the generated CRD refuses it too: its openAPIV3Schema (jsonschema,
  after structural defaulting) for ``schema`` cases, one of its CEL rules (cel-python) for ``cel``
  cases, at the expected path and, for CEL, with the rule's message;
- the base documents the cases start from are accepted by both, so each case fails for its one edit;
- the table is big enough: at least 40 cases, both kinds, every CEL rule of both CRDs exercised.
"""

from __future__ import annotations

import copy
import io
import pathlib
import re
from typing import Any

import pytest
import yaml

from noctaya.api import command, documents

DATA = pathlib.Path(__file__).parent / "data"
TABLE = yaml.safe_load((DATA / "invalid.yaml").read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = TABLE["cases"]
_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _parts(path: str) -> list[str | int]:
    return [name if name else int(index) for name, index in _SEGMENT.findall(path)]


def build(case: dict[str, Any]) -> dict[str, Any]:
    doc: dict[str, Any] = copy.deepcopy(TABLE["bases"][case["base"]])
    for path in case.get("unset", []):
        *parents, last = _parts(path)
        node: Any = doc
        for part in parents:
            node = node[part]
        del node[last]
    for path, value in case.get("set", {}).items():
        *parents, last = _parts(path)
        node = doc
        for part in parents:
            if isinstance(part, str) and part not in node:
                node[part] = {}
            node = node[part]
        node[last] = copy.deepcopy(value)
    return doc


def _ids(case: dict[str, Any]) -> str:
    return str(case["name"])


def test_the_table_covers_enough_rules(crd_checks: dict[str, Any]) -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names)), "case names must be unique"
    assert len(CASES) >= 40
    assert {c["base"] for c in CASES} == {"llmservice", "inferenceruntime"}
    kinds = {"llmservice": "LLMService", "inferenceruntime": "InferenceRuntime"}
    # every CEL message of both CRDs is produced by at least one case
    produced: set[str] = set()
    for case in CASES:
        if case["crd"] == "cel":
            produced.update(m for _, m in crd_checks[kinds[case["base"]]].errors(build(case)))
    for kind, check in crd_checks.items():
        for path, rule in check.rules():
            assert rule["message"] in produced, f"no invalid case exercises {kind} {path}: {rule['rule']}"


@pytest.mark.parametrize("base", ["llmservice", "inferenceruntime"])
def test_bases_are_valid_offline_and_in_the_crd(base: str, crd_checks: dict[str, Any]) -> None:
    doc = TABLE["bases"][base]
    checked, problems = documents.check_stream(yaml.safe_dump(doc), source="base.yaml")
    assert problems == []
    assert [c.problems for c in checked] == [()]
    assert crd_checks[doc["kind"]].errors(doc) == []


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_noctaya_validate_reports_the_field_and_message(case: dict[str, Any], tmp_path: pathlib.Path) -> None:
    doc = build(case)
    target = tmp_path / f"{case['name']}.yaml"
    target.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    out = io.StringIO()
    assert command.validate_main([str(target)], stdout=out) == 1
    lines = out.getvalue().splitlines()
    expect = case["expect"]
    wanted = f": {expect['path']}: " if expect["path"] else ": "
    matching = [line for line in lines if wanted in line and expect["message"] in line]
    assert matching, f"expected {expect} in:\n" + "\n".join(lines)
    # the line names the object
    name = doc.get("metadata", {}).get("name")
    assert f"{doc['kind']} " in matching[0]
    if name and "name" not in expect["path"]:
        assert name in matching[0]


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_library_reports_the_problem_with_its_object(case: dict[str, Any]) -> None:
    doc = build(case)
    checked, stream_problems = documents.check_stream(yaml.safe_dump(doc), source="case.yaml")
    assert stream_problems == []
    [result] = checked
    assert result.obj is None and not result.ok
    expect = case["expect"]
    found = [p for p in result.problems if p.path == expect["path"] and expect["message"] in p.message]
    assert found, [str(p) for p in result.problems]
    assert found[0].kind == doc["kind"]
    assert found[0].line is not None and found[0].line >= 1


CRD_CASES = [c for c in CASES if c["crd"] != "none"]


@pytest.mark.parametrize("case", CRD_CASES, ids=_ids)
def test_the_crd_refuses_it_too(case: dict[str, Any], crd_checks: dict[str, Any]) -> None:
    doc = build(case)
    check = crd_checks[doc["kind"]]
    path = case.get("crdPath", case["expect"]["path"])
    defaulted = check.defaulted(doc)
    if case["crd"] == "schema":
        errors = check.schema_errors(defaulted)
        assert any(p == path for p, _ in errors), f"schema errors at {path!r} expected, got {errors}"
        if "crdMessage" in case:
            assert any(case["crdMessage"] in m for p, m in errors if p == path), errors
    else:
        assert check.schema_errors(defaulted) == [], "a CEL case must pass the schema"
        errors = check.cel_errors(defaulted)
        message = case.get("crdMessage", case["expect"]["message"])
        assert any(p == path and message in m for p, m in errors), (
            f"CEL {path!r}: {message!r} expected, got {errors}"
        )
