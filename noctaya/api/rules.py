"""Validation rules that exist twice: as a pydantic check and as a CEL rule of the CRD.

A ``Rule`` is a CEL expression and the message the API server gives when it is false. A
``CrossFieldRule`` adds the same rule in Python: the fields it reads and a predicate over their typed
values. A model lists its cross-field rules in ``cross_field_rules``; ``meta.ApiModel`` then

- checks them after its fields parse, reporting every failing rule (not only the first) at the
  model's path, with the rule's message — the path and words the API server uses for the CEL rule;
- also checks them when some *other* field of the model is invalid: each field a rule reads is parsed
  on its own (an invalid one becomes a value only ``is None`` can look at), so a document with a bad
  quantity and ``min > max`` gets both problems at once, as from the API server;
- writes them into the model's JSON schema as ``x-kubernetes-validations``, so the CRD carries them.

Rules on one duration field are annotated types (``PositiveDuration``, ``NonNegativeDuration``,
``StabilizationWindow``): a pydantic check after parsing, and the same rule's CEL in the field's schema.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NamedTuple

import pydantic
import pydantic_core

from noctaya.api import durations


class Rule(NamedTuple):
    """One CEL rule of the CRD and the message both the API server and ``noctaya validate`` give."""

    rule: str
    message: str

    def schema(self) -> dict[str, str]:
        return {"rule": self.rule, "message": self.message}


def cel(*rules: Rule) -> dict[str, Any]:
    """``json_schema_extra`` carrying rules into the generated CRD."""
    return {"x-kubernetes-validations": [r.schema() for r in rules]}


@dataclasses.dataclass(frozen=True, kw_only=True)
class CrossFieldRule:
    """A rule over several fields of one model: its CEL form and its Python form."""

    cel: Rule
    fields: tuple[str, ...]
    holds: Callable[..., bool]  # called with the typed values of ``fields`` as keyword arguments

    @property
    def message(self) -> str:
        return self.cel.message


class _Invalid:
    """Stands for a field that failed to parse: it is not None, and any other use of it is an error."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("invalid field value")

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __bool__ = __len__ = __iter__ = _refuse
    __hash__ = None  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


_INVALID = _Invalid()


@functools.cache
def _adapter(model: type[pydantic.BaseModel], name: str) -> pydantic.TypeAdapter[Any]:
    field = model.model_fields[name]
    annotated: Any = Annotated[(field.annotation, *field.metadata)] if field.metadata else field.annotation
    return pydantic.TypeAdapter(annotated)


def _raw_values(
    model: type[pydantic.BaseModel], rule: CrossFieldRule, data: Mapping[str, Any]
) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for name in rule.fields:
        field = model.model_fields[name]
        key = field.alias or name
        if key in data or name in data:
            raw = data[key] if key in data else data[name]
            try:
                values[name] = _adapter(model, name).validate_python(raw)
            except pydantic.ValidationError:
                values[name] = _INVALID
        else:
            values[name] = field.get_default(call_default_factory=True, validated_data={})
    return values


def failing(model: type[pydantic.BaseModel], values: Callable[[CrossFieldRule], dict[str, Any]]) -> list[str]:
    """Messages of the model's cross-field rules that are false for the values (undecidable: skipped)."""
    messages = []
    for rule in getattr(model, "cross_field_rules", ()):
        arguments = values(rule)
        try:
            holds = rule.holds(**arguments)
        except (TypeError, AttributeError):
            if not any(v is _INVALID for v in arguments.values()):
                raise
            continue  # reads an invalid field: that field's own error is reported
        if not holds:
            messages.append(rule.message)
    return messages


def _errors(messages: list[str], data: Any) -> list[Any]:
    return [
        {"type": pydantic_core.PydanticCustomError("rule", m), "loc": (), "input": data} for m in messages
    ]


def validate(
    model: type[pydantic.BaseModel], data: Any, handler: pydantic.ValidatorFunctionWrapHandler
) -> Any:
    """The wrap validator of ``meta.ApiModel``; see the module docstring."""
    if not getattr(model, "cross_field_rules", ()):
        return handler(data)
    try:
        obj = handler(data)
    except pydantic.ValidationError as exc:
        if isinstance(data, model) or not isinstance(data, Mapping):
            raise
        messages = failing(model, lambda rule: _raw_values(model, rule, data))
        if not messages:
            raise
        kept = [
            {
                "type": pydantic_core.PydanticCustomError(e["type"], e["msg"]),
                "loc": e["loc"],
                "input": e["input"],
            }
            for e in exc.errors(include_url=False)
        ]
        raise pydantic.ValidationError.from_exception_data(
            model.__name__, kept + _errors(messages, data)
        ) from None
    messages = failing(model, lambda rule: {f: getattr(obj, f) for f in rule.fields})
    if messages:
        raise pydantic.ValidationError.from_exception_data(model.__name__, _errors(messages, data))
    return obj


# ------------------------------------------------------------------------------ rules on one duration field
def _duration_rule(rule: Rule, check: Callable[[durations.Duration], bool]) -> pydantic.AfterValidator:
    """The pydantic side of a CEL rule on one duration field."""

    def validate(value: durations.Duration) -> durations.Duration:
        if not check(value):
            raise ValueError(rule.message)
        return value

    return pydantic.AfterValidator(validate)


_POSITIVE = Rule(rule="duration(self) > duration('0s')", message="must be a duration greater than 0s")
_NON_NEGATIVE = Rule(rule="duration(self) >= duration('0s')", message="must not be a negative duration")
# Whole seconds: the epoch plus the duration prints (RFC 3339) without a fraction, i.e. in 20 characters.
# A rule that builds a duration from a string of unknown length (``duration(string(n) + 's')``) is
# refused by the API server for its estimated cost (over 100x the per-rule budget). The millisecond
# clause is implied by the last one; it keeps evaluators that print timestamps without their fraction
# (cel-python) exact to the millisecond.
_STABILIZATION = Rule(
    rule="duration(self) >= duration('0s') && duration(self) <= duration('1h') "
    "&& duration(self).getMilliseconds() % 1000 == 0 "
    "&& string(timestamp('1970-01-01T00:00:00Z') + duration(self)).size() == 20",
    message="must be a whole number of seconds between 0s and 1h",
)
_ONE_HOUR = durations.Duration.of(hours=1)

PositiveDuration = Annotated[
    durations.Duration,
    _duration_rule(_POSITIVE, lambda d: d.nanoseconds > 0),
    pydantic.Field(json_schema_extra=cel(_POSITIVE)),
]
NonNegativeDuration = Annotated[
    durations.Duration,
    _duration_rule(_NON_NEGATIVE, lambda d: d.nanoseconds >= 0),
    pydantic.Field(json_schema_extra=cel(_NON_NEGATIVE)),
]
StabilizationWindow = Annotated[
    durations.Duration,
    _duration_rule(
        _STABILIZATION, lambda d: d.is_whole_seconds and 0 <= d.nanoseconds <= _ONE_HOUR.nanoseconds
    ),
    pydantic.Field(json_schema_extra=cel(_STABILIZATION)),
]
