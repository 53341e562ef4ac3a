"""The connection bounds of an HTTP listener facing untrusted clients, as config file fields.

The gateway's client port and the aggregate scaler's report port run the same connection layer
(``noctaya.serving.connections.Limits``), so both files carry the same flat keys with one meaning:
``headerTimeout``, ``keepAliveTimeout``, ``maxConnections``, ``maxConnectionsPerPeer`` and what a
peer is, ``peerIpv6Prefix`` and ``trustedProxies`` (``noctaya.serving.peers``; the ExternalScaler's
``maxStreamsPerPeer`` counts by the same peers). The types
below hold each key's meaning, its floor and its documentation; a file model declares the fields with
these types, its own default and, for the counts, its own ceiling (``Annotated[Count, Field(le=N)]``),
and adds :func:`check_per_peer` as a model validator.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Protocol, TypeVar

import pydantic

from noctaya.contract import fields

HeaderTimeout = Annotated[
    fields.PositiveSeconds,
    pydantic.Field(description="a new connection must send its first request head within this"),
]
KeepAliveTimeout = Annotated[
    fields.PositiveSeconds,
    pydantic.Field(description="an idle kept-alive client connection is closed after this"),
]
Count = Annotated[int, pydantic.Field(ge=1, description="client connections open at once")]
PerPeer = Annotated[
    int,
    pydantic.Field(
        ge=1, description="client connections open at once from one peer (a trusted proxy's: unbounded)"
    ),
]
Ipv6Prefix = Annotated[
    int,
    pydantic.Field(ge=32, le=128, description="leading bits of an IPv6 address that name one peer"),
]
MAX_TRUSTED_PROXIES = 64


def _cidrs(values: tuple[str, ...]) -> tuple[str, ...]:
    normal = []
    for value in values:
        try:
            normal.append(str(ipaddress.ip_network(value.strip(), strict=False)))
        except ValueError:
            raise ValueError(f"{value[:64]!r} is not an IP address or CIDR (e.g. 10.0.0.0/8)") from None
    return tuple(normal)


TrustedProxies = Annotated[
    tuple[Annotated[str, pydantic.Field(max_length=64)], ...],
    pydantic.Field(
        max_length=MAX_TRUSTED_PROXIES,
        description=(
            "CIDRs of proxies in front (ingress, load balancer): their connections have no per-peer "
            "bound and their X-Forwarded-For names the client"
        ),
    ),
    pydantic.AfterValidator(_cidrs),
]


class Bounded(Protocol):
    """A file model with the two connection counts."""

    @property
    def max_connections(self) -> int: ...

    @property
    def max_connections_per_peer(self) -> int: ...


BoundedT = TypeVar("BoundedT", bound=Bounded)


def check_per_peer(model: BoundedT) -> BoundedT:
    """The per-address bound within the overall one (``pydantic.model_validator(mode="after")``)."""
    if model.max_connections_per_peer > model.max_connections:
        raise ValueError("maxConnectionsPerPeer: must not exceed maxConnections")
    return model
