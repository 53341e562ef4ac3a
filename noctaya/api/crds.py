"""The CustomResourceDefinitions, generated from the pydantic models.

How a model becomes a structural OpenAPI v3 schema (what the API server requires of a CRD):

1. pydantic writes a JSON schema of the spec and status models, with ``_SchemaGenerator`` adjusting
   three things at the source: an optional field (``X | None``) is just ``X`` (no ``anyOf [X, null]``:
   an absent field is how Kubernetes says "unset"); no titles; defaults are written in their wire
   form (``Duration``/``Quantity`` as canonical strings, enums as values), a nested block whose
   default is "all its own defaults" gets ``default: {}`` (the API server then fills in the nested
   defaults, as pydantic does), and null or empty-collection defaults are left out.
2. ``structural()`` inlines every ``$ref`` (siblings such as a field's default or description are
   kept over the referenced model's own), drops ``additionalProperties: false`` (pydantic's
   ``extra="forbid"``; a structural schema may not combine it with ``properties`` and the API server
   prunes unknown fields instead) and checks that what is left is structural: every node has a
   ``type``, except int-or-string nodes (``x-kubernetes-int-or-string`` with the canonical
   ``anyOf [integer, string]``); no ``oneOf``/``allOf``/``not``/``const``/``$ref`` remains. Anything it
   cannot express is an error at generation time, never a silently wrong CRD.
3. CEL rules come from the models: a model's ``cross_field_rules`` land on its object node, a field's
   rules (``json_schema_extra=meta.cel(...)``: durations, URIs, templates, ports) on the field's node;
   the root of an LLMService also checks ``metadata.name``. The same rule objects drive the pydantic
   checks, so the messages are the same offline and in the cluster.
4. The wrapper adds group, names (short names ``llms``/``irt``, category ``noctaya``), scope, the
   status subresource and the printer columns listed in docs/api-reference.md.
"""

from __future__ import annotations

import copy
import enum
import json
import pathlib
from collections.abc import Mapping
from typing import Any, Final

import pydantic
import yaml
from pydantic import json_schema
from pydantic_core import core_schema

from noctaya.api import durations, inferenceruntime, llmservice, meta, quantities

CATEGORIES: Final = ["noctaya"]
_DROP: Final = frozenset({"title", "$defs", "definitions"})
_FORBIDDEN: Final = frozenset({"oneOf", "allOf", "not", "const", "$ref", "$schema", "prefixItems"})


class CRDError(Exception):
    """A model uses something a structural schema cannot express."""


class _SchemaGenerator(json_schema.GenerateJsonSchema):
    """pydantic's JSON schema generator, adjusted at the source for Kubernetes (see the module doc)."""

    def nullable_schema(self, schema: core_schema.NullableSchema) -> json_schema.JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> json_schema.JsonSchemaValue:
        generated = self.generate_inner(schema["schema"])
        if "default" in schema:
            value = schema["default"]
        elif "default_factory" in schema and not schema.get("default_factory_takes_data"):
            value = schema["default_factory"]()  # type: ignore[call-arg]
        else:
            return generated
        encoded = _wire_default(value)
        if encoded is not None:
            generated["default"] = encoded
        return generated


def _wire_default(value: Any) -> Any:
    """A default as the API server should store it, or None to write no default."""
    if value is None or value in ([], {}, ""):
        return None
    if isinstance(value, pydantic.BaseModel):
        return {}
    if isinstance(value, durations.Duration | quantities.Quantity):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, bool | int | str | float):
        return value
    if isinstance(value, list) and all(isinstance(item, pydantic.BaseModel) for item in value):
        return [item.model_dump(mode="json", by_alias=True) for item in value]  # a list with items
    raise CRDError(f"cannot write default {value!r} into a CRD")


def model_schema(model: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The structural OpenAPI v3 schema of one model (spec or status)."""
    raw = model.model_json_schema(by_alias=True, mode="validation", schema_generator=_SchemaGenerator)
    return complete_defaults(structural(raw, defs=raw.get("$defs", {}), path=model.__name__))


def complete_defaults(node: dict[str, Any]) -> dict[str, Any]:
    """Write every object default with the defaults of its fields filled in, recursively.

    The API server checks a CRD's defaults against the schema, CEL rules included, as written: it does
    not default a default. A rule reading a field of a defaulted object (``self.min <= self.max`` on
    ``scaling: {}``) would find the field missing and the CRD would be refused. Filled in, the default
    is what the server stores anyway (nested defaults apply after the parent's).
    """
    for sub in node.get("properties", {}).values():
        complete_defaults(sub)
    if isinstance(node.get("items"), dict):
        complete_defaults(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        complete_defaults(node["additionalProperties"])
    if isinstance(node.get("default"), dict):
        node["default"] = _defaulted(node, node["default"])
    return node


def _defaulted(node: Mapping[str, Any], value: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(value)
    for name, sub in node.get("properties", {}).items():
        if name not in out and "default" in sub:
            out[name] = copy.deepcopy(sub["default"])
        if isinstance(out.get(name), dict):
            out[name] = _defaulted(sub, out[name])
    return out


def structural(node: Mapping[str, Any], *, defs: Mapping[str, Any], path: str) -> dict[str, Any]:
    """Inline references and check a JSON-schema node is structural; see the module docstring."""
    out: dict[str, Any] = {}
    if "$ref" in node:
        name = str(node["$ref"]).rsplit("/", 1)[-1]
        if name not in defs:
            raise CRDError(f"{path}: unresolved reference {node['$ref']}")
        out.update(structural(defs[name], defs=defs, path=path))
    for key, value in node.items():
        if key not in _DROP and key != "$ref":
            _add_key(out=out, key=key, value=value, node=node, defs=defs, path=path)
    if "enum" in out and "type" not in out:
        out["type"] = "string"
    _say_default(out)
    _check_structural(out=out, path=path)
    return {k: out[k] for k in sorted(out, key=_key_order)}


def _add_key(
    *, out: dict[str, Any], key: str, value: Any, node: Mapping[str, Any], defs: Mapping[str, Any], path: str
) -> None:
    """Put one key of a JSON-schema node into its structural form ``out``, or refuse it."""
    if key == "properties":
        out[key] = {prop: structural(sub, defs=defs, path=f"{path}.{prop}") for prop, sub in value.items()}
    elif key == "items":
        out[key] = structural(value, defs=defs, path=f"{path}[]")
    elif key == "additionalProperties":
        if value is not False and value is not True:
            out[key] = structural(value, defs=defs, path=f"{path}{{}}")
    elif key == "anyOf":
        if not node.get("x-kubernetes-int-or-string"):
            raise CRDError(f"{path}: a union is not structural (only int-or-string is)")
        out[key] = [{"type": "integer"}, {"type": "string"}]
    elif key == "exclusiveMinimum" and not isinstance(value, bool):
        out["minimum"], out["exclusiveMinimum"] = value, True
    elif key == "exclusiveMaximum" and not isinstance(value, bool):
        out["maximum"], out["exclusiveMaximum"] = value, True
    elif key in _FORBIDDEN:
        raise CRDError(f"{path}: {key!r} is not allowed in a structural schema")
    elif key == "x-kubernetes-validations" and key in out:
        out[key] = [*out[key], *value]
    elif key == "description":
        out[key] = " ".join(str(value).replace("``", "`").split())
    else:
        out[key] = copy.deepcopy(value)


def _check_structural(*, out: Mapping[str, Any], path: str) -> None:
    """Refuse a node that is still not structural once its keys are in."""
    if out.get("type") == "object" and "properties" in out and "additionalProperties" in out:
        raise CRDError(f"{path}: properties and additionalProperties together are not structural")
    if "type" not in out and not out.get("x-kubernetes-int-or-string"):
        raise CRDError(f"{path}: node has no type")


_FIRST_KEYS: Final = ("type", "description")


def _key_order(key: str) -> tuple[int, str]:
    """``type`` and ``description`` first, then the rest alphabetically (stable, diff-friendly output)."""
    return (_FIRST_KEYS.index(key), "") if key in _FIRST_KEYS else (len(_FIRST_KEYS), key)


# ------------------------------------------------------------------------------------------------ CRDs
def _root(*, spec: dict[str, Any], status: dict[str, Any], rules: list[meta.Rule]) -> dict[str, Any]:
    root: dict[str, Any] = {
        "type": "object",
        "description": spec.pop("description", None),
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
        "required": ["spec"],
    }
    if root["description"] is None:
        del root["description"]
    if rules:
        root["x-kubernetes-validations"] = [r.schema() for r in rules]
    return root


def _crd(
    *,
    kind: str,
    plural: str,
    short_names: list[str],
    scope: str,
    schema: dict[str, Any],
    columns: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{plural}.{meta.GROUP}",
            "labels": {"app.kubernetes.io/name": "noctaya", "app.kubernetes.io/component": "crd"},
        },
        "spec": {
            "group": meta.GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
                "shortNames": short_names,
                "categories": CATEGORIES,
            },
            "scope": scope,
            "versions": [
                {
                    "name": meta.VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def _say_default(node: dict[str, Any]) -> None:
    """``kubectl explain`` shows a field's description, not its default: a scalar default is said there."""
    default, description = node.get("default"), node.get("description")
    if not isinstance(default, str | int | float | bool) or not isinstance(description, str):
        return
    if "default" in description.lower():
        return
    shown = json.dumps(default) if not isinstance(default, str) else default or '""'
    node["description"] = f"{description.rstrip()} Defaults to {shown}."


_AGE: Final = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
_READY: Final = '.status.conditions[?(@.type=="Ready")]'


def llmservice_crd() -> dict[str, Any]:
    status = model_schema(llmservice.LLMServiceStatus)
    spec = model_schema(llmservice.LLMServiceSpec)
    spec["description"] = (
        "LLMService declares a model, how to select its runtime, and how it scales and is served."
    )
    return _crd(
        kind=llmservice.KIND,
        plural=llmservice.PLURAL,
        short_names=["llms"],
        scope="Namespaced",
        schema=_root(spec=spec, status=status, rules=[llmservice.NAME_RULE]),
        columns=[
            {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
            {"name": "Ready", "type": "string", "jsonPath": f"{_READY}.status"},
            {"name": "Reason", "type": "string", "jsonPath": f"{_READY}.reason"},
            {"name": "Runtime", "type": "string", "jsonPath": ".status.resolvedRuntime"},
            {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"},
            {"name": "Warm-Window", "type": "string", "jsonPath": ".status.nextWarmWindow.window"},
            _AGE,
        ],
    )


def inferenceruntime_crd() -> dict[str, Any]:
    status = model_schema(inferenceruntime.InferenceRuntimeStatus)
    spec = model_schema(inferenceruntime.InferenceRuntimeSpec)
    spec["description"] = "InferenceRuntime is a reusable serving image with its arguments and accelerator."
    return _crd(
        kind=inferenceruntime.KIND,
        plural=inferenceruntime.PLURAL,
        short_names=["irt"],
        scope="Cluster",
        schema=_root(spec=spec, status=status, rules=[]),
        columns=[
            {"name": "Family", "type": "string", "jsonPath": ".spec.family"},
            {"name": "Vendor", "type": "string", "jsonPath": ".spec.vendor"},
            {"name": "Image", "type": "string", "jsonPath": ".spec.container.image", "priority": 1},
            _AGE,
        ],
    )


def crds() -> list[dict[str, Any]]:
    """Both CRDs, LLMService first."""
    return [llmservice_crd(), inferenceruntime_crd()]


def filename(crd: Mapping[str, Any]) -> str:
    """``<plural>.<group>.yaml``."""
    return f"{crd['metadata']['name']}.yaml"


class _Dumper(yaml.SafeDumper):
    """Writes repeated sub-objects out in full (no YAML anchors in a manifest)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(documents: list[dict[str, Any]]) -> str:
    """Multi-document YAML, keys in definition order, long CEL rules kept on one line."""
    return yaml.dump_all(documents, Dumper=_Dumper, sort_keys=False, width=1 << 16, allow_unicode=True)


def write(directory: pathlib.Path) -> list[pathlib.Path]:
    """Write each CRD to ``directory/<plural>.<group>.yaml``; returns the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for crd in crds():
        target = directory / filename(crd)
        target.write_text(to_yaml([crd]), encoding="utf-8")
        written.append(target)
    return written
