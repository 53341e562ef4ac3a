"""The engine signal: what the process serving KEDA reads from every Ready backend replica.

``EngineSignalSection`` is the ``engine`` section of the co-located scaler (the gateway file's
``scaler.engine``) and of the aggregate scaler's file (``engine``). Exactly one process per
LLMService serves KEDA, and that process reads the replicas: each replica is read once per
``interval`` per service, however many gateways there are.

Where the replicas are: ``host``, a headless Service name whose DNS answer lists one address per
Ready Pod (no Kubernetes credentials needed), read on ``port``; or ``endpointsFile``, a file listing
``host:port`` per line (``noctaya dev`` writes it as its replicas turn Ready and leave).

What is read (the first name of each list that a replica exports counts):
- ``queueMetrics`` with ``queueTarget``: the engine's waiting requests, summed over the series of a
  replica, against ``queueTarget`` waiting requests per replica;
- ``kvCacheMetrics`` with ``kvCacheTarget``: the KV-cache use of a replica (0..1; the largest of its
  series, e.g. of its data-parallel ranks), against ``kvCacheTarget`` per replica.

How it combines with the gateways' own count (``target`` of the scaler settings): every term is a
number of replicas wanted (value / its target) and the largest wins; the served metric is that
number times the served target (``kvCacheTarget`` when set, else ``target``). A replica that cannot
be read, or reads a value that is NaN, negative or beyond its bound, drops the engine terms for that
round: the value falls back to the gateways' count. Activation (IsActive, StreamIsActive) never
depends on the engine signal.

Every bound is a field: the period, the timeout of one read (DNS included), the response bytes, the
series (sample lines) of one response, the length of one line, the replicas read, the largest queue
value believed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Final, Self

import pydantic

from noctaya.contract import fields

MAX_RESPONSE_BYTES: Final = 64 << 20
MAX_SERIES: Final = 1_000_000
MAX_REPLICAS: Final = 4096
#: the largest waiting-queue value believed at all (a replica reporting more reads as invalid)
MAX_QUEUE_VALUE: Final = 1e9
METRIC_NAME: Final = r"^[a-zA-Z_:][a-zA-Z0-9_:]*$"

MetricNames = Annotated[
    tuple[Annotated[str, pydantic.Field(min_length=1, max_length=253, pattern=METRIC_NAME)], ...],
    pydantic.Field(max_length=8),
]


class EngineSignalSection(fields.Model):
    """Read the engines' own queue and KV-cache use from every Ready replica (module docstring)."""

    leading_keys = ("host", "endpointsFile", "port", "path")

    host: Annotated[
        str | None,
        pydantic.Field(
            min_length=1,
            max_length=253,
            pattern=r"^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$",
            description="headless Service name: one DNS address per Ready replica",
        ),
    ] = None
    endpoints_file: Annotated[
        str | None,
        pydantic.Field(min_length=1, description="file listing host:port of each Ready replica per line"),
    ] = None
    port: Annotated[int, pydantic.Field(ge=1, le=65535, description="replicas' metrics port (with host)")] = (
        8000
    )
    path: Annotated[
        str,
        pydantic.Field(max_length=256, pattern=r"^/[^\s?#]*$", description="replicas' metrics path"),
    ] = "/metrics"
    queue_metrics: Annotated[
        MetricNames, pydantic.Field(description="waiting-requests gauges, the first exported counts")
    ] = ()
    queue_target: Annotated[
        float | None,
        pydantic.Field(ge=0.01, le=1_000_000, description="engine's waiting requests per replica"),
    ] = None
    kv_cache_metrics: Annotated[
        MetricNames,
        pydantic.Field(description="KV-cache use gauges (0..1), the first a replica exports counts"),
    ] = ()
    kv_cache_target: Annotated[
        float | None,
        pydantic.Field(
            ge=0.01, le=1, description="KV-cache use per replica (0..1); the served metric's target"
        ),
    ] = None
    interval: Annotated[
        fields.Seconds, pydantic.Field(ge=0.05, le=300, description="period of one read of every replica")
    ] = 2.0
    timeout: Annotated[
        fields.Seconds, pydantic.Field(gt=0, le=60, description="longest read of one replica (DNS included)")
    ] = 1.0
    max_response_bytes: Annotated[
        int,
        pydantic.Field(ge=1024, le=MAX_RESPONSE_BYTES, description="largest metrics response read (bytes)"),
    ] = 4 << 20
    max_series: Annotated[
        int, pydantic.Field(ge=1, le=MAX_SERIES, description="most sample lines in one metrics response")
    ] = 50_000
    max_line_bytes: Annotated[
        int, pydantic.Field(ge=128, le=1 << 20, description="longest line of a metric that is read")
    ] = 16_384
    max_replicas: Annotated[
        int, pydantic.Field(ge=1, le=MAX_REPLICAS, description="most replicas read each period")
    ] = 256
    max_queue_value: Annotated[
        float,
        pydantic.Field(gt=0, le=MAX_QUEUE_VALUE, description="a waiting queue above this reads as invalid"),
    ] = 1_000_000.0

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> Self:
        if (self.host is None) == (self.endpoints_file is None):
            raise ValueError("exactly one of host and endpointsFile is required")
        if self.queue_target is None and self.kv_cache_target is None:
            raise ValueError("at least one of queueTarget and kvCacheTarget is required")
        if self.queue_target is not None and not self.queue_metrics:
            raise ValueError("queueTarget needs queueMetrics")
        if self.kv_cache_target is not None and not self.kv_cache_metrics:
            raise ValueError("kvCacheTarget needs kvCacheMetrics")
        if self.timeout >= self.interval * 4:
            raise ValueError("timeout: must be below four intervals (a read must end before it is stale)")
        return self

    @property
    def stale_after(self) -> float:
        """A round older than this (seconds) no longer counts: the value falls back."""
        return 2 * self.interval + self.timeout


class Board:
    """Where the process serving KEDA posts the engine signal for its status page.

    The gateway holds one and passes it to its sidecars: the co-located scaler, when it reads the
    engines, or the reporter (what the aggregate scaler answered) sets :attr:`source`;
    ``/noctaya/queue`` shows :meth:`document` (``None``: nobody reads the engines)."""

    __slots__ = ("source",)

    def __init__(self) -> None:
        self.source: Callable[[], dict[str, object] | None] | None = None

    def document(self) -> dict[str, object] | None:
        return None if self.source is None else self.source()
