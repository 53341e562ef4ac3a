"""The ``externalscaler.ExternalScaler`` gRPC service over one DemandSource.

KEDA's ``external-push`` trigger keeps one ``StreamIsActive`` stream open per ScaledObject and scales
0 -> 1 the moment it reads ``true``; every ``true`` also restarts its cooldown clock, while ``false``
is ignored. So a stream carries the current state once when it opens (a reconnecting KEDA learns it
at once) and afterwards only changes: ``true`` on every inactive -> active transition, ``false`` on
the way back. The transition is pushed from the demand listener, on the event loop, with no ticker.

``IsActive`` answers from the same state the streams push, so polling and pushing always agree.
``GetMetrics`` is the current demand and ``GetMetricSpec`` the per-replica target (an empty list
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

import grpc

from noctaya.contract import demand as demand_mod
from noctaya.contract import fields
from noctaya.scaler import metrics as metrics_mod
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

logger = logging.getLogger(__name__)


@dataclasses.dataclass(eq=False)
class _Stream:
    wake: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)
    rising: bool = False  # an inactive -> active transition happened since the last write


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
        metrics: metrics_mod.ScalerMetrics | None = None,  # None when nobody scrapes (tests, bench)
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
        self._metrics = metrics
        self._streams: set[_Stream] = set()
        self._demand = source.demand()
        self._active = self._demand > 0
        self._closing = False
        self._unsubscribe: demand_mod.Unsubscribe | None = None
        if metrics is not None:  # read at scrape time: nothing to update per demand change
            metrics.max_streams.set(max_streams)
            metrics.demand.set_function(lambda: self._demand)
            metrics.active.set_function(lambda: int(self._active))
            metrics.streams.set_function(lambda: len(self._streams))

    # ---------------------------------------------------------------- lifecycle
    def add_to_server(self, server: grpc.aio.Server) -> None:
        pb_grpc.add_ExternalScalerServicer_to_server(self, server)

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
        await self._check_ref(request.scaledObjectRef, context, method="GetMetrics")
        if request.metricName.casefold() not in ("", self._metric_key):
            await self._abort(
                context,
                "GetMetrics",
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown metricName {request.metricName[:64]!r}; this scaler serves {self._metric_name!r}",
            )
        self._count("GetMetrics", "OK")
        value = pb.MetricValue(
            metricName=self._metric_name, metricValue=self._demand, metricValueFloat=float(self._demand)
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
        if len(self._streams) >= self._max_streams:
            await self._abort(
                context,
                "StreamIsActive",
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many open streams (bound {self._max_streams})",
            )
        stream = _Stream()
        self._streams.add(stream)
        try:
            sent = self._active
            await self._push(context, sent)  # the current state, at once
            while True:
                await stream.wake.wait()
                stream.wake.clear()
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
    async def _push(self, context: grpc.aio.ServicerContext, result: bool) -> None:
        await context.write(pb.IsActiveResponse(result=result))
        if self._metrics is not None:
            self._metrics.pushes.labels(result=str(result).lower()).inc()

    async def _check_ref(
        self, ref: pb.ScaledObjectRef, context: grpc.aio.ServicerContext, *, method: str
    ) -> None:
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
