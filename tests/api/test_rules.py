"""Cross-field rules: one definition, checked by pydantic and carried into the CRD.

Aspects:
- a failing rule is reported at the model's path with the rule's message, whether the model is built
  from a document, from keyword arguments, or nested;
- a rule is still checked when another field of the same model is invalid (both problems reported);
  a rule reading an invalid field is skipped (that field's own error is reported instead);
- absent fields take their defaults for the rule (``min: 3`` alone fails ``min <= max`` with max 1);
- every model with rules writes each of them into its JSON schema as ``x-kubernetes-validations``,
  exactly once, also for subclasses (``TemplatedEnvVar``);
- timestamps: RFC 3339 strings with a zone parse, anything else is refused with a message.
"""

from __future__ import annotations

import datetime

import pydantic
import pytest

from noctaya.api import core, inferenceruntime, llmservice, meta, rules


def _errors(model: type[pydantic.BaseModel], data: object) -> list[tuple[str, str]]:
    with pytest.raises(pydantic.ValidationError) as info:
        model.model_validate(data)
    return [(".".join(str(p) for p in e["loc"]), e["msg"]) for e in info.value.errors(include_url=False)]


def test_failing_rule_reports_the_model_path() -> None:
    assert _errors(llmservice.Scaling, {"min": 3}) == [("", "min must not exceed max")]
    with pytest.raises(pydantic.ValidationError, match="min must not exceed max"):
        llmservice.Scaling(min=2, max=1)
    spec = {
        "model": {"source": {"uri": "hf://a/b"}},
        "runtime": {"name": "x"},
        "scaling": {"min": 5, "max": 4},
    }
    assert _errors(llmservice.LLMServiceSpec, spec) == [("scaling", "min must not exceed max")]


def test_rule_is_checked_beside_an_invalid_other_field() -> None:
    errors = _errors(llmservice.Scaling, {"min": 3, "max": 2, "target": 0, "drainTimeout": "soon"})
    assert ("", "min must not exceed max") in errors
    assert any(path == "target" for path, _ in errors)
    assert any(path == "drainTimeout" and "invalid duration 'soon'" in msg for path, msg in errors)


def test_rule_reading_an_invalid_field_is_skipped() -> None:
    errors = _errors(llmservice.Scaling, {"min": "lots", "max": 2})
    assert [path for path, _ in errors] == ["min"]
    # presence rules still decide: an invalid source is still "set"
    errors = _errors(llmservice.ModelSpec, {"source": {"uri": 5}, "catalogRef": "x"})
    assert ("", "exactly one of source or catalogRef must be set") in errors
    assert any(path == "source.uri" for path, _ in errors)


def test_every_rule_is_in_the_json_schema_once() -> None:
    models: list[type[meta.ApiModel]] = [
        llmservice.Scaling, llmservice.ModelSpec, llmservice.RuntimeRef, llmservice.ModelSourceRef,
        inferenceruntime.Scheduler, inferenceruntime.InferenceRuntimeSpec, core.EnvVar, core.EnvVarSource,
        core.Toleration, core.Probe, inferenceruntime.TemplatedEnvVar,
    ]  # fmt: skip
    for model in models:
        assert model.cross_field_rules, model
        schema = model.model_json_schema(by_alias=True)
        assert schema["x-kubernetes-validations"] == [r.cel.schema() for r in model.cross_field_rules], model


def test_failing_lists_every_false_rule() -> None:
    class Two(meta.ApiModel):
        cross_field_rules = (
            rules.CrossFieldRule(
                cel=meta.Rule("self.a < self.b", "a < b"), fields=("a", "b"), holds=lambda a, b: a < b
            ),
            rules.CrossFieldRule(cel=meta.Rule("self.a > 0", "a > 0"), fields=("a",), holds=lambda a: a > 0),
        )
        a: int = 0
        b: int = 0

    assert _errors(Two, {"a": 0, "b": 0}) == [("", "a < b"), ("", "a > 0")]
    assert Two(a=1, b=2).a == 1


def test_timestamps() -> None:
    condition = {"type": "Ready", "status": "True", "reason": "Available"}
    parsed = meta.Condition.model_validate({**condition, "lastTransitionTime": "2025-01-02T03:04:05Z"})
    assert parsed.last_transition_time == datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC)
    assert parsed.to_manifest()["lastTransitionTime"] == "2025-01-02T03:04:05Z"
    for bad, fragment in [
        ("yesterday", "invalid timestamp 'yesterday'"),
        ("2025-01-02T03:04:05", "has no time zone"),
        (1735787045, "expected an RFC 3339 timestamp string, got int"),
    ]:
        [(path, message)] = _errors(meta.Condition, {**condition, "lastTransitionTime": bad})
        assert path == "lastTransitionTime" and fragment in message
