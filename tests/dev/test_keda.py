"""The local KEDA against a real in-process ExternalScaler (grpc.aio on port 0).

Aspects: a pushed ``true`` scales 0 -> max(min, 1) within milliseconds, later pushes only refresh the
cooldown clock; polling scales 1 -> N by ceil(metric / target) clamped to max, holds within the 10 %
tolerance, keeps the highest recommendation of the scale-down window, and scales to 0 only after
the cooldown with min 0; a broken stream reconnects with a growing backoff and gets the current
state at once; an empty metric spec is an error and changes nothing; GetMetrics asks for the metric
name lowercased (as the HPA does) and the real scaler answers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest

from noctaya.api import cron
from noctaya.contract import demand, fields
from noctaya.dev import keda
from noctaya.scaler import server, servicer
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc


class Target:
    """A scale target that records what it was asked (the Deployment's interface)."""

    def __init__(self, desired: int = 0) -> None:
        self.desired = desired
        self.calls: list[int] = []

    def scale(self, replicas: int) -> None:
        self.desired = replicas
        self.calls.append(replicas)


async def until(predicate: Callable[[], bool], within: float = 30.0) -> None:
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 - polling a plain predicate is the point
            await asyncio.sleep(0.002)


@contextlib.asynccontextmanager
async def scaler(signal: demand.DemandSignal, port: int) -> AsyncIterator[server.ScalerServer]:
    svc = servicer.ExternalScalerServicer(
        source=signal,
        service=fields.ServiceRef(name="dev", namespace="default"),
        metric_name="queueDepth",
        target=10,
        max_streams=4,
        max_streams_per_peer=4,
    )
    async with server.ScalerServer(servicer=svc, listen=f"127.0.0.1:{port}", grace=0.1) as running:
        yield running


@contextlib.asynccontextmanager
async def running(local: keda.LocalKeda) -> AsyncIterator[None]:
    task = asyncio.create_task(local.run())
    try:
        yield
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def scaling(**overrides: Any) -> keda.Scaling:
    base: dict[str, Any] = {
        "name": "dev",
        "namespace": "default",
        "min_replicas": 0,
        "max_replicas": 5,
        "polling_interval": 3600.0,
        "cooldown": 1.0,
        "scale_down_window": 0.0,
    }
    return keda.Scaling(**{**base, **overrides})


async def test_push_activates_at_once_and_only_once() -> None:
    signal, target = demand.DemandSignal(), Target()
    async with scaler(signal, 0) as grpc_server:  # binds its own port, read back
        local = keda.LocalKeda(address=f"127.0.0.1:{grpc_server.port}", scaling=scaling(), target=target)
        async with running(local):
            await until(lambda: local.seen.stream_connected and local.seen.target > 0)  # first poll done
            signal.set(1)
            # max(min, 1); the next poll is an hour away, so only the push can have done it (a bound
            # of its own would time the loaded machine, not tell a push from a poll)
            await until(lambda: target.desired == 1)
            assert local.seen.active  # a push holds the ScaledObject active until the next poll says
            for value in (3, 7, 2):
                signal.set(value)
            await asyncio.sleep(0.1)
    assert target.calls == [1]
    assert (local.seen.pushes, local.seen.activations) == (1, 1)


async def test_broken_stream_reconnects_with_backoff_and_gets_the_current_state(
    monkeypatch: pytest.MonkeyPatch, reserve_port: Callable[[], int]
) -> None:
    monkeypatch.setattr(keda, "BACKOFF_FIRST", 0.05)
    port, signal, target = (
        reserve_port(),
        demand.DemandSignal(),
        Target(),
    )  # refused until the scaler binds it
    local = keda.LocalKeda(address=f"127.0.0.1:{port}", scaling=scaling(), target=target)
    async with running(local):
        await until(lambda: local.seen.errors >= 2)  # nobody listening yet: errors, backing off
        signal.set(4)
        async with scaler(signal, port):
            await until(lambda: target.desired == 1)  # the state is sent when the stream opens
        assert local.seen.pushes == 1
        await until(lambda: local.seen.reconnects >= 3)


def decide(local: keda.LocalKeda, *, metric: float, now: float, target: float = 10.0) -> None:
    local.decide(active=metric > 0, metric=metric, target=target, now=now)


def test_polling_scales_by_metric_over_target_with_tolerance_and_clamps() -> None:
    target = Target(desired=1)
    local = keda.LocalKeda(address="unused:1", scaling=scaling(max_replicas=4), target=target)
    decide(local, metric=25, now=0)
    assert target.desired == 3
    decide(local, metric=31, now=1)  # ratio 31/3/10 = 1.03: inside the 10 % tolerance
    assert target.desired == 3
    decide(local, metric=90, now=2)
    assert target.desired == 4  # clamped to max
    decide(local, metric=5, now=3)
    assert target.desired == 1  # never below max(min, 1) while active


def test_scale_down_keeps_the_highest_recommendation_of_the_window() -> None:
    target = Target(desired=1)
    local = keda.LocalKeda(address="unused:1", scaling=scaling(scale_down_window=10.0), target=target)
    decide(local, metric=40, now=0)
    assert target.desired == 4
    decide(local, metric=10, now=5)
    assert target.desired == 4  # 1 is recommended, 4 was recommended 5 s ago
    decide(local, metric=10, now=11)
    assert target.desired == 1


def test_scale_to_zero_only_after_cooldown_and_with_min_zero() -> None:
    target = Target(desired=0)
    local = keda.LocalKeda(address="unused:1", scaling=scaling(cooldown=30.0), target=target)
    decide(local, metric=3, now=100)
    assert target.desired == 1  # active at a poll activates too
    decide(local, metric=0, now=120)
    assert target.desired == 1  # inactive, but the cooldown has not passed
    decide(local, metric=0, now=130.5)
    assert target.desired == 0
    pinned = Target(desired=0)
    keep = keda.LocalKeda(address="unused:1", scaling=scaling(min_replicas=2, cooldown=0.0), target=pinned)
    decide(keep, metric=0, now=1000)
    assert pinned.desired == 2  # minReplicaCount comes up without demand
    decide(keep, metric=0, now=2000)
    assert pinned.calls == [2]


class EmptySpec:
    """An ExternalScaler that answers GetMetricSpec with no specs (KEDA treats it as an error)."""

    async def IsActive(self, request: Any, context: Any) -> Any:
        return pb.IsActiveResponse(result=True)

    async def StreamIsActive(self, request: Any, context: Any) -> None:
        await asyncio.sleep(3600)

    async def GetMetricSpec(self, request: Any, context: Any) -> Any:
        return pb.GetMetricSpecResponse()

    async def GetMetrics(self, request: Any, context: Any) -> Any:
        return pb.GetMetricsResponse(metricValues=[pb.MetricValue(metricName="queueDepth", metricValue=50)])


async def test_empty_metric_spec_is_an_error_that_changes_nothing() -> None:
    grpc_server = grpc.aio.server()
    pb_grpc.add_ExternalScalerServicer_to_server(EmptySpec(), grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    try:
        target = Target(desired=1)
        local = keda.LocalKeda(address=f"127.0.0.1:{port}", scaling=scaling(), target=target)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            await local.poll_once(pb_grpc.ExternalScalerStub(channel))
        assert target.calls == []
        assert "empty metric spec" in local.seen.last_error
    finally:
        await grpc_server.stop(0)


class Recorder(EmptySpec):
    """An ExternalScaler with one metric spec that records the names GetMetrics is asked for."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def GetMetricSpec(self, request: Any, context: Any) -> Any:
        spec = pb.MetricSpec(metricName="queueDepth", targetSizeFloat=10)
        return pb.GetMetricSpecResponse(metricSpecs=[spec])

    async def GetMetrics(self, request: Any, context: Any) -> Any:
        self.asked.append(request.metricName)
        return await super().GetMetrics(request, context)


async def test_polling_asks_for_the_metric_lowercased_and_the_scaler_answers() -> None:
    recorder, grpc_server = Recorder(), grpc.aio.server()
    pb_grpc.add_ExternalScalerServicer_to_server(recorder, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    try:
        local = keda.LocalKeda(address=f"127.0.0.1:{port}", scaling=scaling(), target=Target(desired=1))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            await local.poll_once(pb_grpc.ExternalScalerStub(channel))
        assert recorder.asked == ["queuedepth"]
    finally:
        await grpc_server.stop(0)
    signal, target = demand.DemandSignal(initial=30), Target(desired=1)
    async with (
        scaler(signal, 0) as bound,
        grpc.aio.insecure_channel(f"127.0.0.1:{bound.port}") as channel,
    ):
        local = keda.LocalKeda(address=f"127.0.0.1:{bound.port}", scaling=scaling(), target=target)
        await local.poll_once(pb_grpc.ExternalScalerStub(channel))
    assert (local.seen.errors, local.seen.metric, target.calls) == (0, 30.0, [3])


class Clock:
    """A wall clock the test moves by hand."""

    def __init__(self, now: datetime.datetime) -> None:
        self.now = now

    def __call__(self) -> datetime.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += datetime.timedelta(**delta)


def noon_window(desired: int) -> keda.CronTrigger:
    return keda.CronTrigger(
        name="lunch",
        start=cron.Expression.parse("0 12 * * *"),
        end=cron.Expression.parse("0 13 * * *"),
        zone=cron.zone("UTC"),
        desired_replicas=desired,
    )


async def test_a_schedule_that_opens_a_minute_from_now_scales_up_then_down_on_a_fake_clock() -> None:
    """No demand at all: the cron trigger alone activates 0 -> 1 when its window opens, the HPA takes
    its desiredReplicas, and the backend returns to 0 one cooldown after the window closed."""
    clock = Clock(datetime.datetime(2026, 12, 1, 11, 59, 0, tzinfo=datetime.UTC))
    signal, target = demand.DemandSignal(), Target()
    events: list[str] = []
    async with (
        scaler(signal, 0) as bound,
        grpc.aio.insecure_channel(f"127.0.0.1:{bound.port}") as channel,
    ):
        local = keda.LocalKeda(
            address=f"127.0.0.1:{bound.port}",
            scaling=scaling(schedules=(noon_window(2),), cooldown=300.0),
            target=target,
            clock=clock,
            on_event=events.append,
        )
        stub = pb_grpc.ExternalScalerStub(channel)
        await local.poll_once(stub)
        assert target.desired == 0 and local.seen.scheduled == 0
        assert local.seen.schedule == "lunch opens 2026-12-01 12:00Z"
        clock.advance(seconds=59)
        await local.poll_once(stub)
        assert target.desired == 0  # 11:59:59: not yet
        before = local.seen.active
        clock.advance(seconds=1)
        await local.poll_once(stub)
        assert target.calls == [1]  # 12:00: activated from 0 like any trigger
        assert local.seen.scheduled == 2 and local.seen.schedule == "lunch active (2)"
        # the open window holds it active though IsActive says false
        assert (before, local.seen.active) == (False, True)
        await local.poll_once(stub)
        assert target.calls == [1, 2]  # then the HPA takes the trigger's desiredReplicas
    assert any("cron triggers active: lunch (desiredReplicas 2)" in e for e in events)
    clock.now = datetime.datetime(2026, 12, 1, 13, 0, 0, tzinfo=datetime.UTC)  # the window closes
    local.decide(active=False, metric=0, target=10, now=local.last_active + 299, scheduled=local.scheduled())
    assert target.desired == 1  # inactive: the cron trigger proposes 1, the cooldown has not passed
    local.decide(active=False, metric=0, target=10, now=local.last_active + 300, scheduled=local.scheduled())
    assert target.desired == 0


def test_demand_above_the_schedule_scales_higher_and_the_schedule_holds_the_floor() -> None:
    clock = Clock(datetime.datetime(2026, 12, 1, 12, 30, tzinfo=datetime.UTC))
    target = Target(desired=2)
    local = keda.LocalKeda(
        address="unused:1", scaling=scaling(schedules=(noon_window(2),)), target=target, clock=clock
    )
    local.decide(active=True, metric=40, target=10, now=0, scheduled=local.scheduled())
    assert target.desired == 4  # demand wins above the window's 2
    local.decide(active=False, metric=0, target=10, now=100, scheduled=local.scheduled())
    assert target.desired == 2  # no demand: the window holds 2, no cooldown to 0 while it is open
