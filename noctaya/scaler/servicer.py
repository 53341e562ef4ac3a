"""The ``externalscaler.ExternalScaler`` gRPC service over one DemandSource.

KEDA's ``external-push`` trigger keeps one ``StreamIsActive`` stream open per ScaledObject and scales
0 -> 1 the moment it reads ``true``; every ``true`` also restarts its cooldown clock, while ``false``
is ignored. So a stream carries the current state once when it opens (a reconnecting KEDA learns it
at once) and afterwards only changes: ``true`` on every inactive -> active transition, ``false`` on
the way back. The transition is pushed from the demand listener, on the event loop, with no ticker.

``IsActive`` answers from the same state the streams push, so polling and pushing always agree.
``GetMetrics`` is the current demand (or, with an engine signal, the combined value of
``noctaya.scaler.signal``) and ``GetMetricSpec`` the per-replica target (an empty list
is an error to KEDA, so there is always exactly one spec). The metric name in ``GetMetrics`` is
matched without regard to case: KEDA passes on the name the HPA asked for, and the HPA's external
metrics client lowercases it (``queueDepth`` arrives as ``queuedepth``, kedacore/keda#4954).

Every call names the ScaledObject it is for; a reference to another service is refused with
INVALID_ARGUMENT, and the number of open streams is bounded (RESOURCE_EXHAUSTED beyond it).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import math
import urllib.parse
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf import message as protobuf_message  # type: ignore[import-untyped]

from noctaya.contract import demand as demand_mod
from noctaya.contract import fields
from noctaya.scaler import metrics as metrics_mod
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.serving import peers as peers_

logger = logging.getLogger(__name__)

SERVICE_NAME = "externalscaler.ExternalScaler"
#: the integer metric value's ceiling (an int64 field; the float beside it is the precise one)
MAX_METRIC_VALUE = 2**62


@dataclasses.dataclass(eq=False)
class _Stream:
    peer: str
    context: grpc.aio.ServicerContext
    wake: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    rising: bool = False  # an inactive -> active transition happened since the last write
    evicted: bool = False  # ended to make room for a peer holding fewer streams


class Undecodable:
    """What a request deserializes to when its bytes are not a valid message (truncated, invalid
    UTF-8 in a string field): the method refuses it with INVALID_ARGUMENT, instead of gRPC answering
    UNKNOWN and logging a DecodeError traceback for the client's mistake."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name


def _tolerant(message_type: Any) -> Callable[[bytes], Any]:
    def parse(raw: bytes) -> Any:
        try:
            return message_type.FromString(raw)
        except protobuf_message.DecodeError:
            return Undecodable(message_type.DESCRIPTOR.full_name)

    return parse


def peer_address(context: grpc.aio.ServicerContext, *, peers: peers_.Peers = peers_.DEFAULT) -> str:
    """The peer of a stream (``noctaya.serving.peers``): ``ipv4:10.0.0.1:5555`` -> ``10.0.0.1``,
    ``ipv6:[2001:db8::5]:5555`` -> ``2001:db8::/64``; a peer is a host, not a connection."""
    peer = urllib.parse.unquote(context.peer() or "unknown")
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        host, sep, port = rest.rpartition(":")
        return peers.key(host if sep and port.isdigit() else rest)
    return peers.key(peer)


class ExternalScalerServicer:
    """Serves one ScaledObject's activity and metric from a DemandSource.

    Register with ``add_to_server``; the generated base class is not subclassed (the stubs are
    untyped), the generated registration function takes any object with these methods.
    """

    def __init__(
        self,
        *,
        source: demand_mod.DemandSource,
        service: fields.ServiceRef,
        metric_name: str,
        target: float,
        max_streams: int,
        max_streams_per_peer: int,
        metrics: metrics_mod.ScalerMetrics | None = None,  # None when nobody scrapes (tests, bench)
        peers: peers_.Peers = peers_.DEFAULT,
        metric: Callable[[], float] | None = None,  # what GetMetrics serves; None: the demand
    ) -> None:
        if not target > 0 or not math.isfinite(target):
            raise ValueError(f"target must be a positive number, got {target}")
        if max_streams < 1:
            raise ValueError(f"max_streams must be >= 1, got {max_streams}")
        self._source = source
        self._service = service
        self._metric_name = metric_name
        self._metric_key = metric_name.casefold()
        self._target = target
        self._max_streams = max_streams
        if not 1 <= max_streams_per_peer <= max_streams:
            raise ValueError(
                f"max_streams_per_peer must be from 1 to max_streams, got {max_streams_per_peer}"
            )
        self._max_per_peer = max_streams_per_peer
        self._peers = peers
        self._metrics = metrics
        self._metric = metric
        self._streams: set[_Stream] = set()
        self._demand = source.demand()
        self._active = self._demand > 0
        self._closing = False
        self._unsubscribe: demand_mod.Unsubscribe | None = None
        if metrics is not None:  # read at scrape time: nothing to update per demand change
            metrics.max_streams.set(max_streams)
            metrics.max_streams_per_peer.set(max_streams_per_peer)
            metrics.demand.set_function(lambda: self._demand)
            metrics.active.set_function(lambda: int(self._active))
            metrics.streams.set_function(lambda: len(self._streams))

    # ---------------------------------------------------------------- lifecycle
    def add_to_server(self, server: grpc.aio.Server) -> None:
        """Register the four methods (as the generated ``add_ExternalScalerServicer_to_server`` does,
        with deserializers that turn undecodable bytes into :class:`Undecodable`)."""
        ref, metrics_request = _tolerant(pb.ScaledObjectRef), _tolerant(pb.GetMetricsRequest)
        handlers = {
            "IsActive": grpc.unary_unary_rpc_method_handler(
                self.IsActive,
                request_deserializer=ref,
                response_serializer=pb.IsActiveResponse.SerializeToString,
            ),
            "StreamIsActive": grpc.unary_stream_rpc_method_handler(
                self.StreamIsActive,
                request_deserializer=ref,
                response_serializer=pb.IsActiveResponse.SerializeToString,
            ),
            "GetMetricSpec": grpc.unary_unary_rpc_method_handler(
                self.GetMetricSpec,
                request_deserializer=ref,
                response_serializer=pb.GetMetricSpecResponse.SerializeToString,
            ),
            "GetMetrics": grpc.unary_unary_rpc_method_handler(
                self.GetMetrics,
                request_deserializer=metrics_request,
                response_serializer=pb.GetMetricsResponse.SerializeToString,
            ),
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))

    def attach(self) -> None:
        """Start following the demand source (call on the event loop that serves the streams)."""
        if self._unsubscribe is None:
            self._unsubscribe = self._source.subscribe(self._on_demand)
            self._on_demand(self._source.demand())

    def close(self) -> None:
        """Stop following demand and end every open stream with status OK (KEDA then reconnects
        with its backoff reset, to whichever replica serves next)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._closing = True
        for stream in self._streams:
            stream.wake.set()

    @property
    def open_streams(self) -> int:
        return len(self._streams)

    @property
    def active(self) -> bool:
        return self._active

    # ---------------------------------------------------------------- demand
    def _on_demand(self, value: int) -> None:
        value = max(0, int(value))
        self._demand = value
        active = value > 0
        if active == self._active:
            return
        self._active = active
        for stream in self._streams:
            stream.rising = stream.rising or active
            stream.wake.set()

    # ---------------------------------------------------------------- rpcs
    async def IsActive(  # grpc method name
        self,
        request: pb.ScaledObjectRef,
        context: grpc.aio.ServicerContext,
    ) -> pb.IsActiveResponse:
        await self._check_ref(request, context, method="IsActive")
        self._count("IsActive", "OK")
        return pb.IsActiveResponse(result=self._active)

    async def GetMetricSpec(  # grpc method name
        self,
        request: pb.ScaledObjectRef,
        context: grpc.aio.ServicerContext,
    ) -> pb.GetMetricSpecResponse:
        await self._check_ref(request, context, method="GetMetricSpec")
        self._count("GetMetricSpec", "OK")
        spec = pb.MetricSpec(
            metricName=self._metric_name,
            targetSize=max(1, math.ceil(self._target)),
            targetSizeFloat=float(self._target),
        )
        return pb.GetMetricSpecResponse(metricSpecs=[spec])

    async def GetMetrics(  # grpc method name
        self,
        request: pb.GetMetricsRequest,
        context: grpc.aio.ServicerContext,
    ) -> pb.GetMetricsResponse:
        await self._check_decoded(request, context, method="GetMetrics")
        await self._check_ref(request.scaledObjectRef, context, method="GetMetrics")
        if request.metricName.casefold() not in ("", self._metric_key):
            await self._abort(
                context,
                "GetMetrics",
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown metricName {request.metricName[:64]!r}; this scaler serves {self._metric_name!r}",
            )
        self._count("GetMetrics", "OK")
        served = float(self._demand) if self._metric is None else self._metric()
        value = pb.MetricValue(
            metricName=self._metric_name,
            metricValue=min(math.ceil(served), MAX_METRIC_VALUE),
            metricValueFloat=served,
        )
        return pb.GetMetricsResponse(metricValues=[value])

    async def StreamIsActive(  # grpc method name
        self,
        request: pb.ScaledObjectRef,
        context: grpc.aio.ServicerContext,
    ) -> None:
        await self._check_ref(request, context, method="StreamIsActive")
        if self._closing:
            await self._abort(
                context, "StreamIsActive", grpc.StatusCode.UNAVAILABLE, "the scaler is shutting down"
            )
        peer = peer_address(context, peers=self._peers)
        refusal = self._admit_stream(peer)
        if refusal is not None:
            await self._abort(context, "StreamIsActive", grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
        stream = _Stream(peer=peer, context=context)
        self._streams.add(stream)
        try:
            sent = self._active
            await self._push(context, sent)  # the current state, at once
            while True:
                await stream.wake.wait()
                stream.wake.clear()
                if stream.evicted:
                    await self._abort(
                        context,
                        "StreamIsActive",
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        "stream ended to make room for another client (this address holds the most)",
                    )
                if self._closing:
                    break
                if stream.rising:
                    stream.rising = False
                    await self._push(context, True)
                    sent = True
                if self._active != sent:
                    sent = self._active
                    await self._push(context, sent)
            self._count("StreamIsActive", "OK")
        finally:
            self._streams.discard(stream)

    # ---------------------------------------------------------------- helpers
    def _admit_stream(self, peer: str) -> str | None:
        """Make room for a stream from ``peer``, or say why not.

        No address holds more than ``max_streams_per_peer`` streams. When all ``max_streams`` are
        open, a peer holding fewer streams than the address holding the most takes one
        stream of that address (it ends with RESOURCE_EXHAUSTED; a real KEDA reconnects). So a
        client that opened every slot it could cannot keep KEDA out: it would need more addresses
        than there are slots."""
        held: dict[str, list[_Stream]] = {}
        for stream in self._streams:
            if not stream.evicted:
                held.setdefault(stream.peer, []).append(stream)
        mine = len(held.get(peer, ()))
        if mine >= self._max_per_peer:
            return f"too many open streams from this address (bound {self._max_per_peer})"
        open_now = sum(len(streams) for streams in held.values())
        if open_now < self._max_streams:
            return None
        biggest = max(held, key=lambda p: len(held[p]))
        if len(held[biggest]) <= mine + 1:
            return f"too many open streams (bound {self._max_streams})"
        victim = held[biggest][0]  # any stream of that address will do
        victim.evicted = True
        victim.wake.set()
        return None

    async def _push(self, context: grpc.aio.ServicerContext, result: bool) -> None:
        await context.write(pb.IsActiveResponse(result=result))
        if self._metrics is not None:
            self._metrics.pushes.labels(result=str(result).lower()).inc()

    async def _check_decoded(
        self, request: object, context: grpc.aio.ServicerContext, *, method: str
    ) -> None:
        if isinstance(request, Undecodable):
            await self._abort(
                context,
                method,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"the request is not a valid {request.type_name} message",
            )

    async def _check_ref(
        self, ref: pb.ScaledObjectRef, context: grpc.aio.ServicerContext, *, method: str
    ) -> None:
        await self._check_decoded(ref, context, method=method)
        if not ref.name or not ref.namespace:
            await self._abort(
                context,
                method,
                grpc.StatusCode.INVALID_ARGUMENT,
                "scaledObjectRef needs both name and namespace",
            )
        if (ref.name, ref.namespace) != (self._service.name, self._service.namespace):
            await self._abort(
                context,
                method,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"this scaler serves ScaledObject {self._service}, not {ref.namespace[:63]}/{ref.name[:253]}",
            )

    async def _abort(
        self, context: grpc.aio.ServicerContext, method: str, code: grpc.StatusCode, message: str
    ) -> None:
        self._count(method, code.name)
        logger.debug("ExternalScaler %s refused: %s", method, message)  # counted in metrics
        await context.abort(code, message)

    def _count(self, method: str, code: str) -> None:
        if self._metrics is not None:
            self._metrics.rpcs.labels(method=method, code=code).inc()
