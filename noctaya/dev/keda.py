"""A local KEDA: drives a ``Deployment`` from an ExternalScaler exactly the way KEDA does.

What it copies from KEDA 2.17+ and the HPA (``external-push`` trigger):
- one ``StreamIsActive`` stream; a pushed ``true`` scales 0 -> max(min, 1) at once, and with
  replicas already there it restarts the cooldown clock; ``false`` does nothing;
- the stream reconnects at once the first time, then after 2 s doubling to 60 s; the backoff
  resets only when a stream ends with status OK;
- every ``polling_interval``: GetMetricSpec, GetMetrics, IsActive. Active restarts the cooldown
  clock (and activates from 0); inactive for ``cooldown`` with ``min == 0`` scales to 0;
  GetMetrics asks for the metric name lowercased, as it arrives from the HPA's external metrics
  client;
- between 1 and max the HPA rule for an ``AverageValue`` target: desired = ceil(metric / target),
  no change within a 10 % tolerance, clamped to [max(min, 1), max]; scale-down takes the highest
  recommendation of the last ``scale_down_window`` seconds (the HPA's stabilization window);
- an empty metric spec list or a failed call is an error for that cycle: replicas stay as they are;
- ``cron`` triggers (``Scaling.schedules``, from ``spec.scaling.schedules``): at each poll a trigger
  is active when its next ``end`` comes no later than its next ``start`` (KEDA's rule, in its time
  zone); an active one activates from 0 like any trigger and proposes ``desiredReplicas`` to the
  HPA (an inactive one 1), and the HPA takes the highest proposal of all triggers. The wall clock is
  ``clock`` (a fake one in tests).
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime
import logging
import math
import time
from collections.abc import Callable
from typing import Protocol

import grpc

from noctaya.api import cron
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

logger = logging.getLogger(__name__)

BACKOFF_FIRST, BACKOFF_MAX = 2.0, 60.0
TOLERANCE = 0.1
CALL_TIMEOUT = 5.0


class ScaleTarget(Protocol):
    desired: int

    def scale(self, replicas: int) -> None: ...


@dataclasses.dataclass(frozen=True)
class CronTrigger:
    """One KEDA ``cron`` trigger: ``start`` / ``end`` in ``zone``, ``desired_replicas`` while active."""

    name: str
    start: cron.Expression
    end: cron.Expression
    zone: datetime.tzinfo
    desired_replicas: int = 1

    def active(self, now: datetime.datetime) -> bool:
        return cron.window(start=self.start, end=self.end, zone=self.zone, now=now).active


@dataclasses.dataclass(frozen=True)
class Scaling:
    """The ScaledObject fields this loop honours (same names and meanings as KEDA's)."""

    name: str
    namespace: str
    min_replicas: int = 0
    max_replicas: int = 1
    polling_interval: float = 30.0
    cooldown: float = 300.0
    scale_down_window: float = 300.0
    metric_name: str = "queueDepth"
    schedules: tuple[CronTrigger, ...] = ()


@dataclasses.dataclass
class Observation:
    """What the loop saw last; shown in the terminal view."""

    #: the ScaledObject is active: the last IsActive, an active cron trigger, or a push since that poll
    active: bool = False
    metric: float = 0.0
    target: float = 0.0
    activations: int = 0  # 0 -> 1 scale-ups (stream or poll)
    pushes: int = 0  # `true` messages received on the stream
    stream_connected: bool = False
    reconnects: int = 0
    errors: int = 0
    last_error: str = ""
    scheduled: int = 0  # replicas the active cron triggers ask for (0: none active)
    schedule: str = ""  # the active cron triggers, or the next window to open


class LocalKeda:
    def __init__(
        self,
        *,
        address: str,
        scaling: Scaling,
        target: ScaleTarget,
        credentials: grpc.ChannelCredentials | None = None,
        server_name: str | None = None,  # TLS name to verify when it differs from the address host
        on_event: Callable[[str], None] = lambda _message: None,
        clock: Callable[[], datetime.datetime] = lambda: datetime.datetime.now(datetime.UTC),
    ) -> None:
        if not 0 <= scaling.min_replicas <= scaling.max_replicas or scaling.max_replicas < 1:
            raise ValueError("need 0 <= min <= max and max >= 1")
        self.address = address
        self.scaling = scaling
        self.target = target
        self.credentials = credentials
        self.server_name = server_name
        self.on_event = on_event
        self.clock = clock
        self.seen = Observation()
        self.ref = pb.ScaledObjectRef(
            name=scaling.name, namespace=scaling.namespace, scalerMetadata={"scalerAddress": address}
        )
        self.last_active = -math.inf
        self._recommendations: collections.deque[tuple[float, int]] = collections.deque(maxlen=4096)

    # ---------------------------------------------------------------- running
    async def run(self) -> None:
        options = [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []
        channel = (
            grpc.aio.insecure_channel(self.address)
            if self.credentials is None
            else grpc.aio.secure_channel(self.address, self.credentials, options=options)
        )
        async with channel:
            stub = pb_grpc.ExternalScalerStub(channel)
            async with asyncio.TaskGroup() as group:
                group.create_task(self._stream_forever(stub), name="noctaya-dev-keda-stream")
                group.create_task(self._poll_forever(stub), name="noctaya-dev-keda-poll")

    async def _stream_forever(self, stub: pb_grpc.ExternalScalerStub) -> None:
        backoff = 0.0  # first attempt at once
        while True:
            if backoff:
                await asyncio.sleep(backoff)
            call = stub.StreamIsActive(self.ref)
            try:
                async for message in call:
                    self.seen.stream_connected = True
                    if message.result:
                        self.seen.pushes += 1
                        self.seen.active = True  # until the next poll, as the ScaledObject is
                        self._activate(reason="push")
                self.seen.stream_connected = False
                backoff = BACKOFF_FIRST  # ended with OK: the backoff resets
            except grpc.aio.AioRpcError as exc:
                self.seen.stream_connected = False
                self._error(f"StreamIsActive: {exc.code().name}: {exc.details()}")
                backoff = BACKOFF_FIRST if not backoff else min(BACKOFF_MAX, backoff * 2)
            finally:
                call.cancel()
            self.seen.reconnects += 1

    async def _poll_forever(self, stub: pb_grpc.ExternalScalerStub) -> None:
        while True:
            await self.poll_once(stub)
            await asyncio.sleep(self.scaling.polling_interval)

    # ---------------------------------------------------------------- decisions
    def _activate(self, *, reason: str, now: float | None = None) -> None:
        self.last_active = time.monotonic() if now is None else now
        if self.target.desired == 0:
            replicas = max(self.scaling.min_replicas, 1)
            self.seen.activations += 1
            self.on_event(f"keda: scale 0 -> {replicas} ({reason})")
            self.target.scale(replicas)

    async def poll_once(self, stub: pb_grpc.ExternalScalerStub) -> None:
        try:
            spec = await stub.GetMetricSpec(self.ref, timeout=CALL_TIMEOUT)
            if not spec.metricSpecs:
                raise ValueError("got empty metric spec")
            first = spec.metricSpecs[0]
            target = first.targetSizeFloat if first.targetSizeFloat > 0 else float(first.targetSize)
            if not target > 0:
                raise ValueError("metric target is not positive")
            reply = await stub.GetMetrics(
                pb.GetMetricsRequest(
                    scaledObjectRef=self.ref,
                    metricName=(first.metricName or self.scaling.metric_name).lower(),
                ),
                timeout=CALL_TIMEOUT,
            )
            values = reply.metricValues
            metric = 0.0
            if values:
                value = values[0]
                metric = value.metricValueFloat if value.metricValueFloat > 0 else float(value.metricValue)
            if not math.isfinite(metric) or metric < 0:
                metric = 0.0
            active = bool((await stub.IsActive(self.ref, timeout=CALL_TIMEOUT)).result)
        except grpc.aio.AioRpcError as exc:
            self._error(f"polling: {exc.code().name}: {exc.details()}")
            return
        except ValueError as exc:
            self._error(f"polling: {exc}")
            return
        scheduled = self.scheduled()
        # an active cron trigger makes the ScaledObject active whatever IsActive says
        self.seen.active, self.seen.metric, self.seen.target = active or bool(scheduled), metric, target
        self.decide(active=active, metric=metric, target=target, now=time.monotonic(), scheduled=scheduled)

    def scheduled(self) -> int:
        """Replicas the cron triggers ask for now (the highest ``desiredReplicas`` of the active ones,
        0 when none is active); the view is told which ones, or when the next opens."""
        now = self.clock()
        active = [t for t in self.scaling.schedules if t.active(now)]
        scheduled = max((t.desired_replicas for t in active), default=0)
        if scheduled != self.seen.scheduled:
            what = ", ".join(t.name for t in active) if active else "none"
            self.on_event(f"keda: cron triggers active: {what} (desiredReplicas {scheduled})")
        self.seen.scheduled = scheduled
        if active:
            self.seen.schedule = f"{'+'.join(t.name for t in active)} active ({scheduled})"
        else:
            upcoming = [
                (w.start, t.name)
                for t in self.scaling.schedules
                if (w := cron.window(start=t.start, end=t.end, zone=t.zone, now=now)).start is not None
            ]
            self.seen.schedule = (
                f"{min(upcoming)[1]} opens {min(upcoming)[0].astimezone(datetime.UTC):%Y-%m-%d %H:%MZ}"
                if upcoming
                else ""
            )
        return scheduled

    def decide(self, *, active: bool, metric: float, target: float, now: float, scheduled: int = 0) -> None:
        """One polling cycle's decision (KEDA's executor, then the HPA); ``scheduled``: what the
        active cron triggers ask for (0: none active)."""
        scaling = self.scaling
        current = self.target.desired
        if scheduled:
            active = True  # any active trigger makes the ScaledObject active
        if current < scaling.min_replicas:  # minReplicaCount holds whatever the scaler says
            self.on_event(f"keda: scale {current} -> {scaling.min_replicas} (minReplicaCount)")
            self.target.scale(scaling.min_replicas)
            current = scaling.min_replicas
        if active:
            self.last_active = now
            if current == 0:
                self._activate(reason="poll", now=now)
                return
        if current == 0:
            return
        if not active and scaling.min_replicas == 0 and now - self.last_active >= scaling.cooldown:
            self._recommendations.clear()
            self.on_event(f"keda: scale {current} -> 0 (inactive for {scaling.cooldown:g}s cooldown)")
            self.target.scale(0)
            return
        floor = max(scaling.min_replicas, 1)
        ratio = (metric / current) / target
        proposed = current if abs(ratio - 1.0) <= TOLERANCE else math.ceil(metric / target)
        if scaling.schedules:  # the HPA takes the highest proposal; an inactive cron trigger's is 1
            proposed = max(proposed, scheduled or 1)
        proposed = max(floor, min(scaling.max_replicas, proposed))
        self._recommendations.append((now, proposed))
        while self._recommendations and now - self._recommendations[0][0] > scaling.scale_down_window:
            self._recommendations.popleft()
        desired = proposed if proposed >= current else max(r for _, r in self._recommendations)
        desired = min(desired, scaling.max_replicas)
        if desired != current:
            self.on_event(f"keda: scale {current} -> {desired} (metric {metric:g}, target {target:g})")
            self.target.scale(desired)

    def _error(self, message: str) -> None:
        self.seen.errors += 1
        if message != self.seen.last_error:
            self.on_event(f"keda: {message}")
        self.seen.last_error = message
