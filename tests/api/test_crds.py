"""The generated CustomResourceDefinitions.

Aspects:
- both CRDs are valid ``apiextensions.k8s.io/v1`` objects (kubernetes-validate, strict);
- their schemas are structural: every node typed (or the canonical int-or-string), no ``$ref``,
  ``anyOf`` other than int-or-string, ``oneOf``/``allOf``/``not``/``const``/``nullable``, no
  ``additionalProperties`` beside ``properties``; only the root lists apiVersion/kind/metadata;
- every default validates against its own node and passes the node's CEL rules as written (the API
  server does not default a default); every enum is typed string;
- every CEL rule compiles (cel-python) and has a message; the strings and lists a rule reads are
  bounded (``maxLength``/``maxItems``) so the API server's cost estimate stays finite;
- names, short names (``llms``, ``irt``), category ``noctaya``, scope, status subresource and the
  printer columns of docs/api-reference.md;
- the committed ``dist/crds`` files are exactly what the generator writes today;
- the generator refuses what a structural schema cannot express (a union of two models) instead of
  writing a wrong CRD.
"""

from __future__ import annotations

import copy
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import kubernetes_validate
import pydantic
import pytest
import yaml
from celpy import adapter

from noctaya.api import crds, meta

ROOT = pathlib.Path(__file__).resolve().parents[2]
CRDS = crds.crds()
ALLOWED_KEYS = {
    "type", "description", "properties", "items", "additionalProperties", "required", "default", "enum",
    "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "format", "anyOf",
    "x-kubernetes-int-or-string", "x-kubernetes-validations", "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys", "x-kubernetes-preserve-unknown-fields",
}  # fmt: skip


def _kind(crd: dict[str, Any]) -> str:
    return str(crd["spec"]["names"]["kind"])


def _schema(crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _nodes(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for name, sub in node.get("properties", {}).items():
        yield from _nodes(sub, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _nodes(node["additionalProperties"], f"{path}{{}}")


@pytest.mark.parametrize("crd", CRDS, ids=_kind)
@pytest.mark.parametrize("version", ["1.28", "1.31", kubernetes_validate.latest_version()])
def test_is_a_valid_apiextensions_v1_object(crd: dict[str, Any], version: str) -> None:
    kubernetes_validate.validate(crd, version, strict=True)


@pytest.mark.parametrize("crd", CRDS, ids=_kind)
def test_schema_is_structural(crd: dict[str, Any]) -> None:
    schema = _schema(crd)
    assert set(schema["properties"]) == {"apiVersion", "kind", "metadata", "spec", "status"}
    assert schema["properties"]["metadata"] == {"type": "object"}
    count = defaults = 0
    for path, node in _nodes(schema):
        count += 1
        assert set(node) <= ALLOWED_KEYS, f"{path}: unexpected keys {set(node) - ALLOWED_KEYS}"
        if node.get("x-kubernetes-int-or-string"):
            assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], path
            assert "type" not in node, path
        else:
            assert node.get("type") in {"object", "array", "string", "integer", "number", "boolean"}, path
            assert "anyOf" not in node, path
        if "properties" in node:
            assert node["type"] == "object" and "additionalProperties" not in node, path
        if node.get("type") == "array":
            assert isinstance(node["items"], dict), path
        if "enum" in node:
            assert node["type"] == "string" and node["enum"], path
        for required in node.get("required", []):
            assert required in node["properties"], f"{path}: required {required} is not a property"
        assert "x-kubernetes-preserve-unknown-fields" not in node, f"{path}: everything is typed"
        if "default" in node:
            sub = {k: v for k, v in node.items() if k not in ("default", "x-kubernetes-validations")}
            jsonschema.Draft4Validator(sub).validate(node["default"])
            defaults += 1
    assert count > 50 and defaults > 5


@pytest.mark.parametrize("crd", CRDS, ids=_kind)
def test_cel_rules_compile_and_read_bounded_values(crd: dict[str, Any], crd_checks: dict[str, Any]) -> None:
    check = crd_checks[_kind(crd)]
    rules = list(check.rules())
    assert rules
    for path, rule in rules:
        assert set(rule) == {"rule", "message"} and rule["message"], path
        check.program(rule["rule"])  # compiles
    # every string node with a rule is bounded; every list holding ruled items is bounded
    for path, node in _nodes(_schema(crd)):
        is_string = node.get("type") == "string" or node.get("x-kubernetes-int-or-string")
        if is_string and "x-kubernetes-validations" in node:
            assert "maxLength" in node, f"{path}: a CEL rule on an unbounded string"
        if node.get("type") == "array" and any(
            "x-kubernetes-validations" in n for _, n in _nodes(node["items"])
        ):
            assert "maxItems" in node, f"{path}: CEL rules inside an unbounded list"


@pytest.mark.parametrize("crd", CRDS, ids=_kind)
def test_defaults_pass_their_own_cel_rules(crd: dict[str, Any], crd_checks: dict[str, Any]) -> None:
    check = crd_checks[_kind(crd)]
    for path, node in _nodes(_schema(crd)):
        if "default" in node and "x-kubernetes-validations" in node:
            # as written: the API server checks a default without defaulting it (a rule reading a field
            # the default leaves out fails there, and the CRD is refused)
            default = copy.deepcopy(node["default"])
            for rule in node["x-kubernetes-validations"]:
                assert check.program(rule["rule"]).evaluate({"self": adapter.json_to_cel(default)}), (
                    path,
                    rule,
                )


def test_names_scope_subresources_and_columns() -> None:
    llms, irt = crds.llmservice_crd(), crds.inferenceruntime_crd()
    assert llms["metadata"]["name"] == "llmservices.serving.noctaya.io"
    assert irt["metadata"]["name"] == "inferenceruntimes.serving.noctaya.io"
    for crd in (llms, irt):
        assert crd["spec"]["group"] == meta.GROUP
        [version] = crd["spec"]["versions"]
        assert version["name"] == meta.VERSION and version["served"] and version["storage"]
        assert version["subresources"] == {"status": {}}
        assert crd["spec"]["names"]["categories"] == ["noctaya"]
    assert llms["spec"]["scope"] == "Namespaced" and irt["spec"]["scope"] == "Cluster"
    assert llms["spec"]["names"]["shortNames"] == ["llms"] and irt["spec"]["names"]["shortNames"] == ["irt"]
    columns = {c["name"]: c for c in llms["spec"]["versions"][0]["additionalPrinterColumns"]}
    assert list(columns) == ["Phase", "Ready", "Reason", "Runtime", "Replicas", "Warm-Window", "Age"]
    assert columns["Ready"]["jsonPath"] == '.status.conditions[?(@.type=="Ready")].status'
    assert columns["Reason"]["jsonPath"] == '.status.conditions[?(@.type=="Ready")].reason'
    assert columns["Warm-Window"]["jsonPath"] == ".status.nextWarmWindow.window"  # extension
    assert columns["Phase"]["jsonPath"] == ".status.phase"
    assert columns["Runtime"]["jsonPath"] == ".status.resolvedRuntime"
    assert columns["Replicas"] == {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"}
    assert columns["Age"]["type"] == "date"
    columns = {c["name"]: c for c in irt["spec"]["versions"][0]["additionalPrinterColumns"]}
    assert list(columns) == ["Family", "Vendor", "Image", "Age"]
    assert columns["Image"] == {
        "name": "Image",
        "type": "string",
        "jsonPath": ".spec.container.image",
        "priority": 1,
    }
    conditions = _schema(llms)["properties"]["status"]["properties"]["conditions"]
    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]


def test_printer_column_paths_exist_in_the_schema() -> None:
    for crd in CRDS:
        schema = _schema(crd)
        for column in crd["spec"]["versions"][0]["additionalPrinterColumns"]:
            node: dict[str, Any] = schema
            path = re.sub(r"\[\?\(@\.(\w+)==\"[^\"]*\"\)\]", r"[]", column["jsonPath"])  # a filter: its items
            for part in path.strip(".").split("."):
                if part == "creationTimestamp":
                    break
                node = node["properties"][part.removesuffix("[]")]
                if part.endswith("[]"):
                    node = node["items"]


@pytest.mark.parametrize("crd", CRDS, ids=_kind)
def test_committed_files_are_current(crd: dict[str, Any]) -> None:
    committed = ROOT / "dist" / "crds" / crds.filename(crd)
    assert committed.read_text(encoding="utf-8") == crds.to_yaml([crd]), (
        "regenerate with: noctaya crds -o dist/crds"
    )
    assert yaml.safe_load(committed.read_text(encoding="utf-8")) == crd


def test_generation_is_deterministic() -> None:
    assert crds.to_yaml(crds.crds()) == crds.to_yaml(CRDS)


class _Left(pydantic.BaseModel):
    a: int


class _Right(pydantic.BaseModel):
    b: str


class _Union(meta.ApiModel):
    either: _Left | _Right


class _Const(meta.ApiModel):
    anything: Any


def test_unstructural_models_are_refused() -> None:
    with pytest.raises(crds.CRDError, match="union is not structural"):
        crds.model_schema(_Union)
    with pytest.raises(crds.CRDError, match="no type"):
        crds.model_schema(_Const)
