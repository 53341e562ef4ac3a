"""Value types shared by every config file of the data plane.

- ``Seconds``: a duration held as float seconds. A file may give a Go duration string (``500ms``,
  ``10s``, ``1m30s``, parsed by :mod:`noctaya.api.durations`, the API's own type) or a number of
  seconds; it is written back as the canonical Go string, so a rendered file reads like the
  LLMService it came from. Negative values and values beyond a year are refused.
- ``ListenAddress``: ``HOST:PORT``, ``:PORT`` (every address) or ``[V6]:PORT``; ``Listen`` is the
  validated string form used in files.
- ``ServiceRef``: the LLMService (and so the ScaledObject) a process serves.
- ``TlsFiles``: server credentials from mounted files; ``ca_file`` set requires client certificates.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, ClassVar, Final, NamedTuple, Self

import pydantic
from pydantic import alias_generators

from noctaya.api import durations

#: the longest duration any file accepts
MAX_SECONDS: Final = 365 * 86400.0
#: a DNS-1123 label: LLMService names and namespaces
DNS_LABEL: Final = r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"


class Model(pydantic.BaseModel):
    """Base of every file model: camelCase keys, snake_case attributes, frozen, no unknown keys."""

    model_config = pydantic.ConfigDict(
        alias_generator=alias_generators.to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    #: file keys written first (what the file is about), before the rest in field order
    leading_keys: ClassVar[tuple[str, ...]] = ()
    #: attributes a running process applies from a changed file itself, without a restart; a renderer
    #: leaves them out of the config hash that rolls the Pods (:meth:`rollout_document`)
    live_fields: ClassVar[tuple[str, ...]] = ()

    def document(self) -> dict[str, Any]:
        """The file form: camelCase keys, durations as Go strings, every field."""
        dumped: dict[str, Any] = self.model_dump(mode="json", by_alias=True)
        first = {key: dumped.pop(key) for key in self.leading_keys if key in dumped}
        return {**first, **dumped}

    def rollout_document(self) -> dict[str, Any]:
        """:meth:`document` with every live field at its default: what a change must differ in to
        need a restart (a file that differs only in live fields has the same rollout document)."""
        defaults = {name: type(self).model_fields[name].get_default() for name in self.live_fields}
        return self.model_copy(update=defaults).document()

    @classmethod
    def wire(cls, *, settings: Model, **values: Any) -> Self:
        """This model from ``settings`` (a part of it, such as the tunables a renderer passes in, or one
        of its own kind) with ``values`` (attribute names: the wiring) laid over them, validated; raises
        ``pydantic.ValidationError`` naming file keys."""
        document = settings.model_dump(by_alias=True)
        document.update({alias_generators.to_camel(name): value for name, value in values.items()})
        return cls.model_validate(document)


# ---------------------------------------------------------------------------------------- durations
def parse_seconds(value: object) -> float:
    """A Go duration string or a number of seconds, to seconds; ``ValueError`` says what is wrong."""
    if isinstance(value, bool):
        raise ValueError("expected a duration such as '10s' or '5m'")
    if isinstance(value, int) and abs(value) > MAX_SECONDS:  # too big for a float, too
        raise ValueError(f"duration of {value.bit_length()} bits is out of range (0 to one year)")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        try:
            seconds = durations.Duration.parse(value.strip()).total_seconds
        except durations.DurationError as exc:
            raise ValueError(str(exc)) from None
    else:
        raise ValueError("expected a duration such as '10s' or '5m'")
    if not math.isfinite(seconds) or seconds < 0 or seconds > MAX_SECONDS:
        raise ValueError(f"duration {value!r} is out of range (0 to one year)")
    return seconds


def format_seconds(seconds: float) -> str:
    """Seconds to the canonical Go form, to the nanosecond (``90.0`` -> ``1m30s``, ``0.05`` -> ``50ms``)."""
    return str(durations.Duration.of(seconds=seconds))


Seconds = Annotated[
    float,
    pydantic.BeforeValidator(parse_seconds),
    pydantic.PlainSerializer(format_seconds, return_type=str),
]
PositiveSeconds = Annotated[Seconds, pydantic.Field(gt=0)]


# ---------------------------------------------------------------------------------------- addresses
_PORT: Final = re.compile(r"[0-9]{1,5}")


class ListenAddress(NamedTuple):
    """Where a server binds. ``host`` is ``""`` for every address."""

    host: str
    port: int

    @classmethod
    def parse(cls, text: str) -> ListenAddress:
        """``":8080"``, ``"127.0.0.1:0"``, ``"[::1]:8080"``; ``ValueError`` names the problem."""
        host, sep, port = text.rpartition(":")
        if not sep or not _PORT.fullmatch(port) or int(port) > 65535:
            raise ValueError(f"invalid listen address {text!r}: expected HOST:PORT or :PORT")
        if host.startswith("["):
            if not host.endswith("]") or len(host) < 3:
                raise ValueError(f"invalid listen address {text!r}: an IPv6 host is written [ADDR]:PORT")
            host = host[1:-1]
        elif ":" in host or any(ch.isspace() for ch in host):
            raise ValueError(f"invalid listen address {text!r}: an IPv6 host is written [ADDR]:PORT")
        return cls(host, int(port))

    @property
    def bind_host(self) -> str:
        """The host to pass to a socket bind (``0.0.0.0`` for every address)."""
        return self.host or "0.0.0.0"

    @property
    def grpc_target(self) -> str:
        """The address form gRPC's ``add_*_port`` takes (``[::]:PORT`` for every address)."""
        if not self.host:
            return f"[::]:{self.port}"
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def _check_listen(value: str) -> str:
    ListenAddress.parse(value)
    return value


Listen = Annotated[str, pydantic.AfterValidator(_check_listen)]


# ---------------------------------------------------------------------------------------- references
class ServiceRef(Model):
    """Which LLMService (and so which ScaledObject, of the same name) a process serves."""

    name: Annotated[str, pydantic.Field(pattern=DNS_LABEL, description="LLMService name")]
    namespace: Annotated[str, pydantic.Field(pattern=DNS_LABEL, description="LLMService namespace")]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class TlsFiles(Model):
    """Server credentials from mounted files; ``ca_file`` set means client certificates are required."""

    cert_file: Annotated[str, pydantic.Field(min_length=1, description="PEM server certificate file")]
    key_file: Annotated[str, pydantic.Field(min_length=1, description="PEM private key file")]
    ca_file: Annotated[
        str | None,
        pydantic.Field(min_length=1, description="PEM CA file; when set, clients must present a certificate"),
    ] = None
