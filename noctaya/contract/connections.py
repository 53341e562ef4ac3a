"""The connection bounds of an HTTP listener facing untrusted clients, as config file fields.

The gateway's client port and the aggregate scaler's report port run the same connection layer
(``noctaya.serving.connections.Limits``), so both files carry the same four flat keys with one meaning:
``headerTimeout``, ``keepAliveTimeout``, ``maxConnections`` and ``maxConnectionsPerPeer``. The types
below hold each key's meaning, its floor and its documentation; a file model declares the fields with
these types, its own default and, for the counts, its own ceiling (``Annotated[Count, Field(le=N)]``),
and adds :func:`check_per_peer` as a model validator.
"""

from __future__ import annotations

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
PerPeer = Annotated[int, pydantic.Field(ge=1, description="client connections open at once from one address")]


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
