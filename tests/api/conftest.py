"""Fixtures of the API tests: the API server's view of our own CRDs, offline.

``CrdCheck`` applies one generated CRD the way the API server does, for the parts that decide
acceptance: structural defaulting (``default`` values, nested defaults of defaulted blocks), the
openAPIV3Schema (jsonschema, with unknown fields refused as ``kubectl --validate=strict`` does) and
every ``x-kubernetes-validations`` rule, evaluated with a real CEL implementation (cel-python).
Paths are written as ``noctaya validate`` writes them (``spec.container.args[2]``).
"""

from __future__ import annotations

import copy
import pathlib
from collections.abc import Iterator
from typing import Any

import celpy
import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml
from celpy import adapter

from noctaya.api import crds

DATA = pathlib.Path(__file__).parent / "data"


def render_path(parts: Any) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _strict(schema: Any) -> Any:
    """A copy of the schema refusing unknown fields wherever properties are listed."""
    if isinstance(schema, dict):
        out = {k: _strict(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema:
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_strict(v) for v in schema]
    return schema


class CrdCheck:
    """One CRD's schema, defaults and CEL rules, applied to plain documents."""

    def __init__(self, crd: dict[str, Any]) -> None:
        self.crd = crd
        self.schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        self._validator = jsonschema.Draft4Validator(_strict(self.schema))
        self._env = celpy.Environment()
        self._programs: dict[str, Any] = {}
        #: Rules that have evaluated to true on some object (passing side of each rule).
        self.passed: set[str] = set()

    # ------------------------------------------------------------------ walking
    def rules(self) -> Iterator[tuple[str, dict[str, str]]]:
        """Every (schema path, rule) of the CRD."""

        def walk(node: dict[str, Any], path: str) -> Iterator[tuple[str, dict[str, str]]]:
            for rule in node.get("x-kubernetes-validations", []):
                yield path, rule
            for name, sub in node.get("properties", {}).items():
                yield from walk(sub, f"{path}.{name}" if path else name)
            if isinstance(node.get("items"), dict):
                yield from walk(node["items"], f"{path}[]")
            if isinstance(node.get("additionalProperties"), dict):
                yield from walk(node["additionalProperties"], f"{path}{{}}")

        yield from walk(self.schema, "")

    def program(self, rule: str) -> Any:
        if rule not in self._programs:
            self._programs[rule] = self._env.program(self._env.compile(rule))
        return self._programs[rule]

    # ------------------------------------------------------------------ the API server's steps
    def defaulted(self, obj: Any) -> Any:
        obj = copy.deepcopy(obj)
        self.default_into(self.schema, obj)
        return obj

    def default_into(self, node: dict[str, Any], value: Any) -> None:
        if isinstance(value, dict):
            for name, sub in node.get("properties", {}).items():
                if name not in value and "default" in sub:
                    value[name] = copy.deepcopy(sub["default"])
                if name in value:
                    self.default_into(sub, value[name])
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                for item in value.values():
                    self.default_into(extra, item)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for item in value:
                self.default_into(node["items"], item)

    def schema_errors(self, obj: Any) -> list[tuple[str, str]]:
        return [(render_path(e.absolute_path), e.message) for e in self._validator.iter_errors(obj)]

    def cel_errors(self, obj: Any) -> list[tuple[str, str]]:
        errors: list[tuple[str, str]] = []
        self._cel(self.schema, obj, (), errors)
        return errors

    def _cel(
        self, node: dict[str, Any], value: Any, path: tuple[Any, ...], errors: list[tuple[str, str]]
    ) -> None:
        for rule in node.get("x-kubernetes-validations", []):
            try:
                ok = bool(self.program(rule["rule"]).evaluate({"self": adapter.json_to_cel(value)}))
            except Exception as exc:  # a CEL evaluation error refuses the object, as in the API server
                ok, rule = False, {"message": f"evaluation error: {exc}"}
            if ok:
                self.passed.add(rule["rule"])
            else:
                errors.append((render_path(path), rule["message"]))
        if isinstance(value, dict):
            for name, sub in node.get("properties", {}).items():
                if name in value:
                    self._cel(sub, value[name], (*path, name), errors)
        elif isinstance(value, list) and isinstance(node.get("items"), dict):
            for i, item in enumerate(value):
                self._cel(node["items"], item, (*path, i), errors)

    def errors(self, obj: Any) -> list[tuple[str, str]]:
        """Everything the API server would refuse the object for (after defaulting)."""
        defaulted = self.defaulted(obj)
        return self.schema_errors(defaulted) + self.cel_errors(defaulted)


@pytest.fixture(scope="session")
def crd_checks() -> dict[str, CrdCheck]:
    return {crd["spec"]["names"]["kind"]: CrdCheck(crd) for crd in crds.crds()}


def load_all(path: pathlib.Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
