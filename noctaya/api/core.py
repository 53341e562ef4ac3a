"""Faithful structural subsets of the core/v1 types an InferenceRuntime embeds.

``EnvVar``, ``Toleration`` and ``Probe`` carry every field of their Kubernetes counterparts that a
runtime can use, typed, so the generated CRD is fully structural (no preserve-unknown-fields) and a
typo in a probe is refused instead of silently dropped. Port fields are int-or-string (``IntOrString``)
as in Kubernetes. Each model dumps to exactly the dict a Pod spec takes (``to_manifest()``).
"""

from __future__ import annotations

import enum
import re
from typing import Annotated, Any, Final

import pydantic
import pydantic_core
from pydantic_core import core_schema

from noctaya.api import meta, quantities

#: Environment variable names: letters, digits, '_', '-' and '.', not starting with a digit.
ENV_NAME_PATTERN: Final = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"


class IntOrString:
    """A Kubernetes ``IntOrString`` (port numbers or names): validated to ``int`` or ``str``."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(_int_or_string)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: pydantic.GetJsonSchemaHandler
    ) -> dict[str, Any]:
        return {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}


def _int_or_string(value: Any) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise pydantic_core.PydanticCustomError(
            "int_or_string", "expected an integer or a string, got {type}", {"type": type(value).__name__}
        )
    if isinstance(value, str) and not value:
        raise pydantic_core.PydanticCustomError("int_or_string", "must not be empty")
    return value


#: A port: a number 1..65535 or a named container port.
PortRef = Annotated[int | str, IntOrString]


def _check_port(value: int | str) -> int | str:
    if isinstance(value, int) and not 1 <= value <= 65535:
        raise ValueError(_PORT_RULE.message)
    if isinstance(value, str) and (len(value) > 15 or not _PORT_NAME.fullmatch(value)):
        raise ValueError(_PORT_RULE.message)
    return value


_PORT_NAME = re.compile(meta.DNS_LABEL_PATTERN)

_PORT_RULE = meta.Rule(
    rule="type(self) == int ? (self >= 1 && self <= 65535) "
    f": (size(self) <= 15 && self.matches('{meta.DNS_LABEL_PATTERN}'))",
    message="must be a port number 1-65535 or a port name (a DNS label of at most 15 characters)",
)

#: A container port by number or name, checked offline and by the CRD's CEL rule.
Port = Annotated[
    PortRef,
    pydantic.AfterValidator(_check_port),
    # maxLength bounds the string the CEL rule reads (the API server's cost estimate needs a bound)
    pydantic.Field(json_schema_extra={"maxLength": 15, **meta.cel(_PORT_RULE)}),
]


# ---------------------------------------------------------------------------------------------- env
class ObjectKeySelector(meta.ApiModel):
    """``ConfigMapKeySelector`` / ``SecretKeySelector``."""

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    key: Annotated[str, pydantic.Field(min_length=1, max_length=253)]
    optional: bool | None = None


class ObjectFieldSelector(meta.ApiModel):
    api_version: str | None = None
    field_path: Annotated[str, pydantic.Field(min_length=1)]


class ResourceFieldSelector(meta.ApiModel):
    container_name: str | None = None
    resource: Annotated[str, pydantic.Field(min_length=1)]
    divisor: quantities.Quantity | None = None


_ONE_SOURCE = meta.Rule(
    rule="[has(self.configMapKeyRef), has(self.secretKeyRef), has(self.fieldRef), has(self.resourceFieldRef)]"
    ".filter(x, x).size() == 1",
    message="exactly one of configMapKeyRef, secretKeyRef, fieldRef or resourceFieldRef must be set",
)


def _exactly_one(*values: object) -> bool:
    return sum(v is not None for v in values) == 1


class EnvVarSource(meta.ApiModel):
    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_ONE_SOURCE,
            fields=("config_map_key_ref", "secret_key_ref", "field_ref", "resource_field_ref"),
            holds=lambda **v: _exactly_one(*v.values()),
        ),
    )

    config_map_key_ref: ObjectKeySelector | None = None
    secret_key_ref: ObjectKeySelector | None = None
    field_ref: ObjectFieldSelector | None = None
    resource_field_ref: ResourceFieldSelector | None = None


_VALUE_OR_FROM = meta.Rule(
    rule="!(has(self.value) && has(self.valueFrom))",
    message="value and valueFrom are mutually exclusive",
)


class EnvVar(meta.ApiModel):
    """``corev1.EnvVar``. A literal ``value`` may use the runtime placeholders (see ``templates``)."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_VALUE_OR_FROM,
            fields=("value", "value_from"),
            holds=lambda value, value_from: value is None or value_from is None,
        ),
    )

    name: Annotated[str, pydantic.Field(min_length=1, max_length=253, pattern=ENV_NAME_PATTERN)]
    value: Annotated[str | None, pydantic.Field(max_length=meta.MAX_STRING)] = None
    value_from: EnvVarSource | None = None


# ---------------------------------------------------------------------------------------- tolerations
class TolerationOperator(enum.StrEnum):
    EXISTS = "Exists"
    EQUAL = "Equal"


class TaintEffect(enum.StrEnum):
    NO_SCHEDULE = "NoSchedule"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    NO_EXECUTE = "NoExecute"


_EXISTS_NO_VALUE = meta.Rule(
    rule="!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''",
    message="value must be empty when operator is Exists",
)


class Toleration(meta.ApiModel):
    """``corev1.Toleration``."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_EXISTS_NO_VALUE,
            fields=("operator", "value"),
            holds=lambda operator, value: (
                operator is not TolerationOperator.EXISTS or value is None or value == ""
            ),
        ),
    )

    key: Annotated[str | None, pydantic.Field(max_length=316)] = None
    operator: TolerationOperator | None = None
    value: Annotated[str | None, pydantic.Field(max_length=63)] = None
    effect: TaintEffect | None = None
    toleration_seconds: int | None = None


# ---------------------------------------------------------------------------------------------- probes
class ExecAction(meta.ApiModel):
    command: Annotated[list[str], pydantic.Field(min_length=1)]


class HTTPHeader(meta.ApiModel):
    name: Annotated[str, pydantic.Field(min_length=1)]
    value: str


class URIScheme(enum.StrEnum):
    HTTP = "HTTP"
    HTTPS = "HTTPS"


class HTTPGetAction(meta.ApiModel):
    path: str | None = None
    port: Port
    host: str | None = None
    scheme: URIScheme | None = None
    http_headers: list[HTTPHeader] = pydantic.Field(default_factory=list)


class TCPSocketAction(meta.ApiModel):
    port: Port
    host: str | None = None


class GRPCAction(meta.ApiModel):
    port: Annotated[int, pydantic.Field(ge=1, le=65535)]
    service: str | None = None


_ONE_HANDLER = meta.Rule(
    rule="[has(self.exec), has(self.httpGet), has(self.tcpSocket), has(self.grpc)].filter(x, x).size() == 1",
    message="exactly one of exec, httpGet, tcpSocket or grpc must be set",
)


class Probe(meta.ApiModel):
    """``corev1.Probe``: one handler and its timing."""

    cross_field_rules = (
        meta.CrossFieldRule(
            cel=_ONE_HANDLER,
            fields=("exec", "http_get", "tcp_socket", "grpc"),
            holds=lambda **v: _exactly_one(*v.values()),
        ),
    )

    exec: ExecAction | None = None
    http_get: HTTPGetAction | None = None
    tcp_socket: TCPSocketAction | None = None
    grpc: GRPCAction | None = None
    initial_delay_seconds: Annotated[int | None, pydantic.Field(ge=0)] = None
    timeout_seconds: Annotated[int | None, pydantic.Field(ge=1)] = None
    period_seconds: Annotated[int | None, pydantic.Field(ge=1)] = None
    success_threshold: Annotated[int | None, pydantic.Field(ge=1)] = None
    failure_threshold: Annotated[int | None, pydantic.Field(ge=1)] = None
    termination_grace_period_seconds: Annotated[int | None, pydantic.Field(ge=1)] = None
