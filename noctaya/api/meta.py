"""Group, version and the Kubernetes object shapes every kind of this API shares.

- ``ApiModel``: the base of every spec/status model: snake_case attributes with camelCase aliases,
  population by either name, unknown fields refused (a typo is an error, not a silently ignored key).
- ``ObjectMeta``: the part of ``metav1.ObjectMeta`` this project reads or writes; the server-managed
  rest (managedFields, ownerReferences, finalizers ...) is kept as it came, so objects read from the API
  server round-trip.
- ``Condition``: ``metav1.Condition``.
- ``Rule`` / ``CrossFieldRule`` (from ``noctaya.api.rules``): a CEL rule with its message, and its
  Python form. One object feeds both the pydantic check (the message is the error text) and the CRD's
  ``x-kubernetes-validations``, so a document refused offline is refused in the cluster with the
  same words at the same path.
- ``FieldProblem``: a path and a message, for checks that are not parse errors (reserved fields).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import re
from typing import Annotated, Any, ClassVar, Final

import pydantic
from pydantic import alias_generators, json_schema
from pydantic_core import core_schema

from noctaya.api import rules

GROUP: Final = "serving.noctaya.io"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
LLMSERVICE_LABEL: Final = f"{GROUP}/llmservice"

#: RFC 1123 label (Kubernetes object names of most kinds, port names, label values' shape).
DNS_LABEL_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
#: RFC 1123 subdomain (Secret, PVC, ConfigMap names).
DNS_SUBDOMAIN_PATTERN: Final = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
#: metav1.Condition reason.
REASON_PATTERN: Final = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
#: metav1.Condition type (optionally prefixed with a DNS subdomain).
CONDITION_TYPE_PATTERN: Final = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)

#: The longest string any field takes; bounds the cost the API server estimates for CEL rules.
MAX_STRING: Final = 4096
#: The longest list any field takes (args, env, tolerations ...), for the same reason.
MAX_ITEMS: Final = 256


Rule = rules.Rule
CrossFieldRule = rules.CrossFieldRule
cel = rules.cel


@dataclasses.dataclass(frozen=True, kw_only=True)
class FieldProblem:
    """A problem found in a parsed object: the dotted field path and what is wrong there."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def utc_instant(moment: datetime.datetime, *, what: str) -> datetime.datetime:
    """An aware ``moment`` in UTC; ``ValueError`` (naming ``what``) when its UTC time or its Unix
    time falls outside years 1 to 9999 (``0001-01-01T00:00:00+01:00``, ``9999-12-31T23:59:59-01:00``),
    which ``datetime`` would raise as an ``OverflowError`` later, wherever it is compared or used."""
    try:
        utc = moment.astimezone(datetime.UTC)
        utc.timestamp()
    except (OverflowError, ValueError, OSError):
        raise ValueError(f"{what} is outside the years 1 to 9999 once in UTC") from None
    return utc


def _timestamp(value: Any) -> Any:
    """RFC 3339 string -> aware datetime in UTC; an aware datetime passes (in UTC); anything else is
    refused, as in the cluster."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            raise ValueError("a timestamp needs a time zone: expected RFC 3339, e.g. 2025-01-02T03:04:05Z")
        return utc_instant(value, what=f"timestamp {value.isoformat()!r}")
    if isinstance(value, str):
        try:
            parsed = datetime.datetime.fromisoformat(value) if len(value) <= 64 else None
        except ValueError:
            parsed = None
        if parsed is None:
            raise ValueError(
                f"invalid timestamp {value[:40]!r}: expected RFC 3339, e.g. 2025-01-02T03:04:05Z"
            )
        if parsed.tzinfo is None:
            raise ValueError(
                f"timestamp {value[:40]!r} has no time zone: expected RFC 3339, e.g. 2025-01-02T03:04:05Z"
            )
        return utc_instant(parsed, what=f"timestamp {value[:40]!r}")
    raise ValueError(f"expected an RFC 3339 timestamp string, got {type(value).__name__}")


#: ``metav1.Time``: an RFC 3339 timestamp string on the wire, an aware ``datetime`` in Python.
Timestamp = Annotated[datetime.datetime, pydantic.BeforeValidator(_timestamp)]


class ApiModel(pydantic.BaseModel):
    """Base of every model of the API: camelCase on the wire, snake_case in Python, no unknown fields."""

    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel,
        populate_by_name=True,
        extra="forbid",
        validate_default=True,
        use_attribute_docstrings=True,  # field docstrings become CRD descriptions (kubectl explain)
    )

    #: Rules over several fields, checked by pydantic and carried into the CRD (see ``rules``).
    cross_field_rules: ClassVar[tuple[rules.CrossFieldRule, ...]] = ()

    @pydantic.model_validator(mode="wrap")
    @classmethod
    def _check_cross_field_rules(cls, data: Any, handler: pydantic.ValidatorFunctionWrapHandler) -> Any:
        return rules.validate(cls, data, handler)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: pydantic.GetJsonSchemaHandler
    ) -> json_schema.JsonSchemaValue:
        generated = handler(schema)
        if cls.cross_field_rules:
            target = handler.resolve_ref_schema(generated)
            target.setdefault("x-kubernetes-validations", []).extend(
                r.cel.schema() for r in cls.cross_field_rules
            )
        return generated

    def to_manifest(self) -> dict[str, Any]:
        """The wire form: camelCase keys, JSON-compatible values, unset optional fields left out."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


#: apimachinery's qualified name: an optional DNS-subdomain prefix and "/", then 1-63 characters
_QUALIFIED_NAME: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_PREFIX: Final = re.compile(DNS_SUBDOMAIN_PATTERN.strip("^$"))
_LABEL_VALUE: Final = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
#: the API server's bound on all annotations of one object together (keys and values)
MAX_ANNOTATIONS_BYTES: Final = 256 * 1024


def qualified_name_problem(key: str) -> str | None:
    """Why ``key`` is not a label or annotation key the API server accepts (None if it is)."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _PREFIX.fullmatch(prefix)):
        return "the prefix before '/' must be a DNS subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return (
            "the name must be 1-63 characters of [A-Za-z0-9-_.], starting and ending with a letter or "
            "digit, after an optional DNS-subdomain prefix and '/'"
        )
    return None


def _check_labels(labels: dict[str, str]) -> dict[str, str]:
    for key, value in labels.items():
        problem = qualified_name_problem(key)
        if problem is not None:
            raise ValueError(f"label key {key[:80]!r}: {problem}")
        if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            raise ValueError(
                f"label {key!r}: the value must be at most 63 characters of [A-Za-z0-9-_.], starting "
                "and ending with a letter or digit (or empty)"
            )
    return labels


def _check_annotations(annotations: dict[str, str]) -> dict[str, str]:
    total = 0
    for key, value in annotations.items():
        problem = qualified_name_problem(key)
        if problem is not None:
            raise ValueError(f"annotation key {key[:80]!r}: {problem}")
        total += len(key.encode()) + len(value.encode())
    if total > MAX_ANNOTATIONS_BYTES:
        raise ValueError(
            f"annotations total {total} bytes; the API server accepts at most {MAX_ANNOTATIONS_BYTES}"
        )
    return annotations


class ObjectMeta(pydantic.BaseModel):
    """``metav1.ObjectMeta``: the fields this project uses, typed; any other server field kept as is."""

    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel, populate_by_name=True, extra="allow"
    )

    name: Annotated[str | None, pydantic.Field(max_length=253)] = None
    generate_name: str | None = None
    namespace: Annotated[str | None, pydantic.Field(max_length=63, pattern=DNS_LABEL_PATTERN)] = None
    labels: Annotated[dict[str, str], pydantic.AfterValidator(_check_labels)] = pydantic.Field(
        default_factory=dict
    )
    annotations: Annotated[dict[str, str], pydantic.AfterValidator(_check_annotations)] = pydantic.Field(
        default_factory=dict
    )
    uid: str | None = None
    generation: int | None = None
    resource_version: str | None = None
    creation_timestamp: Timestamp | None = None
    deletion_timestamp: Timestamp | None = None
    owner_references: list[dict[str, Any]] = pydantic.Field(default_factory=list)
    finalizers: list[str] = pydantic.Field(default_factory=list)

    def to_manifest(self) -> dict[str, Any]:
        """The wire form without unset fields or empty collections."""
        dumped = self.model_dump(mode="json", by_alias=True, exclude_none=True)
        return {k: v for k, v in dumped.items() if v not in ({}, [])}


class ConditionStatus(enum.StrEnum):
    TRUE = "True"
    FALSE = "False"
    UNKNOWN = "Unknown"


class Condition(ApiModel):
    """``metav1.Condition``: one aspect of an object's state, with the generation it was computed for."""

    type: Annotated[str, pydantic.Field(max_length=316, pattern=CONDITION_TYPE_PATTERN)]
    status: ConditionStatus
    observed_generation: Annotated[int | None, pydantic.Field(ge=0)] = None
    last_transition_time: Timestamp
    reason: Annotated[str, pydantic.Field(min_length=1, max_length=1024, pattern=REASON_PATTERN)]
    message: Annotated[str, pydantic.Field(max_length=32768)] = ""


class LocalObjectReference(ApiModel):
    """``corev1.LocalObjectReference``: the name of an object in the same namespace."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]


#: ``json_schema_extra`` of a conditions list: a map keyed by ``type`` (server-side apply merges by type).
CONDITIONS_LIST: Final[dict[str, Any]] = {
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
}


def _unique_types(conditions: list[Condition]) -> list[Condition]:
    seen: set[str] = set()
    for condition in conditions:
        if condition.type in seen:
            raise ValueError(f"duplicate condition type {condition.type!r}")
        seen.add(condition.type)
    return conditions


#: A status' conditions: at most one per type (the API server keys the list by type).
Conditions = Annotated[
    list[Condition],
    pydantic.Field(max_length=32, json_schema_extra=CONDITIONS_LIST),
    pydantic.AfterValidator(_unique_types),
]
