"""The valid document suite (``data/valid``) and the reserved-field documents (``data/reserved``).

Aspects:
- every valid document is accepted by ``noctaya validate`` and by the library, into the right model;
- each round-trips: parse -> ``model_dump(by_alias=True)`` -> parse gives the same object, and so does
  the wire form (``to_manifest()``, re-read with strict JSON types); defaults are filled in;
- the generated CRD accepts every valid document (schema and CEL, after defaulting), and its defaults
  agree with the models' (a document defaulted by the CRD parses to the same object);
- every CEL rule of both CRDs evaluates to true on at least one valid document (the passing side of
  each rule; the failing side is in ``test_invalid_documents``);
- the documented defaults (docs/api-reference.md), read from the minimal documents;
- together the documents use every field of both models (status included);
- reserved fields parse and pass the CRD, and ``noctaya validate`` reports each as
  "reserved, not implemented".
"""

from __future__ import annotations

import io
import json
import pathlib
import types
import typing
from collections.abc import Iterator
from typing import Any

import pydantic
import pytest
import yaml

from noctaya.api import command, documents, durations, inferenceruntime, llmservice, meta, quantities, sources

DATA = pathlib.Path(__file__).parent / "data"
VALID_FILES = sorted((DATA / "valid").glob("*.yaml"))
RESERVED_FILES = sorted((DATA / "reserved").glob("*.yaml"))


def _raw(files: list[pathlib.Path]) -> list[dict[str, Any]]:
    return [d for f in files for d in yaml.safe_load_all(f.read_text(encoding="utf-8")) if d is not None]


VALID = _raw(VALID_FILES)
RESERVED = _raw(RESERVED_FILES)


def _id(doc: dict[str, Any]) -> str:
    return f"{doc['kind']}-{doc['metadata']['name']}"


def _parse(doc: dict[str, Any]) -> documents.Resource:
    checked, problems = documents.check_stream(yaml.safe_dump(doc), source="doc.yaml")
    assert problems == []
    [result] = checked
    assert result.problems == (), [str(p) for p in result.problems]
    assert result.obj is not None
    return result.obj


def test_the_suite_has_both_kinds_and_several_documents() -> None:
    kinds = [d["kind"] for d in VALID]
    assert kinds.count("LLMService") >= 5 and kinds.count("InferenceRuntime") >= 4


def test_noctaya_validate_accepts_the_whole_suite() -> None:
    out = io.StringIO()
    assert command.validate_main([str(DATA / "valid")], stdout=out) == 0
    summary = out.getvalue().strip()
    assert (
        summary
        == f"{len(VALID)} document(s) valid (5 InferenceRuntime, 6 LLMService) in {len(VALID_FILES)} file(s)"
    )


@pytest.mark.parametrize("doc", VALID, ids=_id)
def test_round_trip(doc: dict[str, Any]) -> None:
    obj = _parse(doc)
    model = type(obj)
    assert model is documents.KINDS[doc["kind"]]
    again = model.model_validate(obj.model_dump(by_alias=True))
    assert again == obj
    wire = obj.to_manifest()
    assert model.model_validate_json(json.dumps(wire), strict=True) == obj
    # the wire form is stable: printing it again gives the same
    assert again.to_manifest() == wire


@pytest.mark.parametrize("doc", VALID, ids=_id)
def test_the_crd_accepts_it_with_the_same_defaults(doc: dict[str, Any], crd_checks: dict[str, Any]) -> None:
    check = crd_checks[doc["kind"]]
    assert check.errors(doc) == []
    model = documents.KINDS[doc["kind"]]
    assert model.model_validate(check.defaulted(doc)) == model.model_validate(doc)
    # and what pydantic fills in is what the API server would store: the defaulted wire form passes too
    assert check.errors(model.model_validate(doc).to_manifest()) == []


def test_api_md_defaults_of_an_llmservice() -> None:
    [doc] = _raw([DATA / "valid" / "llmservice-minimal.yaml"])
    obj = _parse(doc)
    assert isinstance(obj, llmservice.LLMService)
    spec = obj.spec
    assert spec.resources.accelerators == 1 and spec.resources.cpu is None and spec.resources.memory is None
    assert (spec.scaling.min, spec.scaling.max, spec.scaling.target) == (0, 1, 10)
    assert spec.scaling.metric is llmservice.ScalingMetric.QUEUE_DEPTH
    assert spec.scaling.activation_timeout == durations.Duration.parse("5m")
    assert spec.scaling.scale_down_stabilization == durations.Duration.parse("5m")
    assert spec.scaling.drain_timeout == durations.Duration.parse("2m")
    assert spec.scaling.external_scaler is None
    assert spec.cache.strategy is llmservice.CacheStrategy.NODE_LOCAL_PVC
    assert spec.cache.prewarm is False and spec.cache.storage_class_name is None
    assert spec.cache.effective_size == quantities.Quantity.parse("50Gi")
    assert spec.endpoint.open_ai_compatible is True and spec.endpoint.max_queue == 100
    assert spec.endpoint.cold_start.mode is llmservice.ColdStartMode.KEEPALIVE
    assert spec.endpoint.cold_start.heartbeat_interval.total_seconds == 10
    assert spec.endpoint.replicas is None and spec.endpoint.authentication is None
    assert spec.image_pull_secrets == [] and spec.runtime.args_override == []
    assert spec.model.source is not None
    assert spec.model.source.parsed == sources.HubSource(
        hub="huggingface", org="Qwen", name="Qwen2.5-7B-Instruct"
    )
    assert obj.namespace == "ai" and obj.name == "qwen"


def test_api_md_defaults_of_an_inferenceruntime() -> None:
    doc = next(d for d in VALID if d["metadata"]["name"] == "sglang-amd")
    obj = _parse(doc)
    assert isinstance(obj, inferenceruntime.InferenceRuntime)
    spec = obj.spec
    assert spec.priority == 0 and spec.container.args == [] and spec.container.env == []
    assert (spec.container.port.name, spec.container.port.container_port) == ("http", None)
    assert spec.serving_port == 30000  # the sglang family's port when containerPort is unset
    assert spec.accelerator is not None and spec.accelerator.sharing.supported is False
    assert spec.accelerator.node_selector == {} and spec.accelerator.tolerations == []
    assert spec.lifecycle.pre_stop_drain is False and spec.lifecycle.termination_grace_period_seconds is None
    assert spec.metrics is None
    assert spec.health.liveness is None
    readiness = spec.health.effective_readiness(port="http")
    assert readiness.http_get is not None and readiness.http_get.path == "/health"
    startup = spec.health.effective_startup(port="http")
    assert (startup.period_seconds, startup.failure_threshold) == (10, 60)
    family_default = next(d for d in VALID if d["metadata"]["name"] == "vllm-ascend")
    ascend = _parse(family_default)
    assert isinstance(ascend, inferenceruntime.InferenceRuntime)
    assert ascend.spec.family is inferenceruntime.Family.VLLM
    assert ascend.spec.metrics is not None
    assert (ascend.spec.metrics.path, ascend.spec.metrics.port) == ("/metrics", 9100)


def test_every_cel_rule_passes_on_some_valid_document(crd_checks: dict[str, Any]) -> None:
    for doc in VALID + RESERVED:
        assert crd_checks[doc["kind"]].errors(doc) == []
    for kind, check in crd_checks.items():
        for path, rule in check.rules():
            assert rule["rule"] in check.passed, f"no valid {kind} passes the rule at {path}: {rule['rule']}"


# ------------------------------------------------------------------------------------------- coverage
def _nested(annotation: Any, in_list: bool = False) -> Iterator[tuple[type[pydantic.BaseModel], bool]]:
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        yield from _nested(typing.get_args(annotation)[0], in_list)
    elif origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            yield from _nested(arg, in_list)
    elif origin is list:
        yield from _nested(typing.get_args(annotation)[0], True)
    elif isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        yield annotation, in_list


Field = tuple[str, str]  # (model name, wire name)


def _fields(model: type[pydantic.BaseModel], seen: set[type[pydantic.BaseModel]]) -> Iterator[Field]:
    """Every field of every model reachable from ``model`` (each model once, wherever it is used)."""
    if model in seen or model is meta.ObjectMeta:
        return
    seen.add(model)
    for name, field in model.model_fields.items():
        yield model.__name__, field.alias or name
        for sub, _ in _nested(field.annotation):
            yield from _fields(sub, seen)


def _used(model: type[pydantic.BaseModel], value: Any) -> Iterator[Field]:
    """The fields a document sets, by the model they belong to."""
    if not isinstance(value, dict) or model is meta.ObjectMeta:
        return
    for name, field in model.model_fields.items():
        key = field.alias or name
        if key not in value:
            continue
        yield model.__name__, key
        for sub, in_list in _nested(field.annotation):
            items = value[key] if in_list and isinstance(value[key], list) else [value[key]]
            for item in items:
                yield from _used(sub, item)


@pytest.mark.parametrize("model", [llmservice.LLMService, inferenceruntime.InferenceRuntime])
def test_the_documents_use_every_field(model: type[pydantic.BaseModel]) -> None:
    wanted = set(_fields(model, set()))
    used = {f for d in VALID + RESERVED if d["kind"] == model.__name__ for f in _used(model, d)}
    assert sorted(wanted - used) == [], "fields no test document uses"
    assert len(wanted) > 40


# ------------------------------------------------------------------------------------------- reserved
@pytest.mark.parametrize("doc", RESERVED, ids=_id)
def test_reserved_fields_parse_and_pass_the_crd(doc: dict[str, Any], crd_checks: dict[str, Any]) -> None:
    model = documents.KINDS[doc["kind"]]
    obj = model.model_validate(doc)
    assert obj.reserved_field_problems()
    assert model.model_validate(obj.model_dump(by_alias=True)) == obj
    assert crd_checks[doc["kind"]].errors(doc) == []


def test_noctaya_validate_reports_every_reserved_field() -> None:
    out = io.StringIO()
    assert command.validate_main([str(DATA / "reserved")], stdout=out) == 1
    text = out.getvalue()
    for path in [
        "spec.model.catalogRef",
        "spec.resources.fraction",
        "spec.cache.strategy",
        "spec.accelerator.sharing.supported",
    ]:
        [line] = [line for line in text.splitlines() if f": {path}: " in line]
        assert "reserved, not implemented" in line
    assert "LLMService ai/reserved: spec.cache.strategy: cache strategy BakedImage is reserved" in text
