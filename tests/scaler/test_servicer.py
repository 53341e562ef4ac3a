"""The ExternalScaler gRPC service over an in-process grpc.aio server on port 0.

Aspects: a stream gets the current state at once (so a reconnecting client learns it); ``true`` is
pushed only on inactive -> active transitions, never repeated while demand stays up; ``false`` on
the way back; IsActive agrees with the stream at every step; GetMetrics is the current demand and
GetMetricSpec the per-replica target (never empty); GetMetrics takes the metric name in any case
(the HPA's path lowercases it); a ScaledObjectRef for another service, or one missing
name/namespace, is INVALID_ARGUMENT on every rpc; empty or garbage metadata is ignored;
unknown metric names are refused; the number of streams is bounded; closing ends streams with OK;
the health service reports SERVING; the demand, active and open-stream gauges read the live state.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import prometheus_client
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from noctaya.contract import demand, fields
from noctaya.scaler import metrics, server, servicer
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

SERVICE = fields.ServiceRef(name="qwen", namespace="ai")
REF = pb.ScaledObjectRef(name="qwen", namespace="ai", scalerMetadata={"scalerAddress": "x:9090"})


@pytest.fixture
def signal() -> demand.DemandSignal:
    return demand.DemandSignal()


@pytest.fixture
async def scaler(signal: demand.DemandSignal) -> AsyncIterator[server.ScalerServer]:
    svc = servicer.ExternalScalerServicer(
        source=signal,
        service=SERVICE,
        metric_name="queueDepth",
        target=10,
        max_streams=2,
        max_streams_per_peer=2,
    )
    async with server.ScalerServer(servicer=svc, listen="127.0.0.1:0", grace=0.1) as srv:
        yield srv


@pytest.fixture
async def stub(scaler: server.ScalerServer) -> AsyncIterator[pb_grpc.ExternalScalerStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{scaler.port}") as channel:
        yield pb_grpc.ExternalScalerStub(channel)


async def next_result(call: grpc.aio.UnaryStreamCall) -> bool:
    message = await asyncio.wait_for(call.read(), 2.0)
    assert message is not grpc.aio.EOF
    return bool(message.result)


async def is_active(stub: pb_grpc.ExternalScalerStub) -> bool:
    return bool((await stub.IsActive(REF)).result)


async def test_stream_pushes_true_only_on_transitions_and_isactive_agrees(
    stub: pb_grpc.ExternalScalerStub, signal: demand.DemandSignal
) -> None:
    call = stub.StreamIsActive(REF)
    assert await next_result(call) is False  # current state at once
    assert await is_active(stub) is False

    signal.set(1)
    assert await next_result(call) is True
    assert await is_active(stub) is True
    for value in (2, 5, 3, 1):  # changes while active push nothing: true resets KEDA's cooldown
        signal.set(value)
        assert await is_active(stub) is True
    peek = asyncio.ensure_future(call.read())
    await asyncio.sleep(0.2)
    assert not peek.done()

    signal.set(0)
    assert (await asyncio.wait_for(peek, 2)).result is False
    assert await is_active(stub) is False
    signal.set(4)
    assert await next_result(call) is True
    call.cancel()


async def test_reconnecting_stream_gets_the_current_state_at_once(
    stub: pb_grpc.ExternalScalerStub, signal: demand.DemandSignal, scaler: server.ScalerServer
) -> None:
    signal.set(3)
    first = stub.StreamIsActive(REF)
    assert await next_result(first) is True
    first.cancel()
    for _ in range(100):
        if scaler.servicer.open_streams == 0:
            break
        await asyncio.sleep(0.01)
    second = stub.StreamIsActive(REF)
    assert await next_result(second) is True
    second.cancel()


async def test_get_metrics_is_current_demand_and_spec_is_the_target(
    stub: pb_grpc.ExternalScalerStub, signal: demand.DemandSignal
) -> None:
    spec = await stub.GetMetricSpec(REF)
    assert [(s.metricName, s.targetSize, s.targetSizeFloat) for s in spec.metricSpecs] == [
        ("queueDepth", 10, 10.0)
    ]
    for value in (0, 7, 23):
        signal.set(value)
        reply = await stub.GetMetrics(pb.GetMetricsRequest(scaledObjectRef=REF, metricName="queueDepth"))
        assert [(v.metricName, v.metricValue, v.metricValueFloat) for v in reply.metricValues] == [
            ("queueDepth", value, float(value))
        ]


@pytest.mark.parametrize(
    "ref",
    [
        pb.ScaledObjectRef(name="other", namespace="ai"),
        pb.ScaledObjectRef(name="qwen", namespace="elsewhere"),
        pb.ScaledObjectRef(name="", namespace="ai"),
        pb.ScaledObjectRef(name="qwen", namespace=""),
        pb.ScaledObjectRef(),
    ],
    ids=["other-name", "other-namespace", "no-name", "no-namespace", "empty"],
)
async def test_another_scaled_object_is_invalid_argument_on_every_rpc(
    stub: pb_grpc.ExternalScalerStub, ref: pb.ScaledObjectRef
) -> None:
    calls = [
        stub.IsActive(ref),
        stub.GetMetricSpec(ref),
        stub.GetMetrics(pb.GetMetricsRequest(scaledObjectRef=ref, metricName="queueDepth")),
    ]
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    stream = stub.StreamIsActive(ref)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stream.read()
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "metadata",
    [
        {},
        {"": ""},
        {"\u2603" * 50: "\x00\x01garbage"},
        {f"k{i}": "v" * 100 for i in range(100)},
    ],
    ids=["empty", "empty-key", "garbage", "many"],
)
async def test_empty_or_garbage_metadata_is_ignored(
    stub: pb_grpc.ExternalScalerStub, signal: demand.DemandSignal, metadata: dict[str, str]
) -> None:
    signal.set(2)
    ref = pb.ScaledObjectRef(name="qwen", namespace="ai", scalerMetadata=metadata)
    assert (await stub.IsActive(ref)).result is True
    reply = await stub.GetMetrics(pb.GetMetricsRequest(scaledObjectRef=ref, metricName="queueDepth"))
    assert reply.metricValues[0].metricValue == 2


async def test_oversized_request_is_refused(stub: pb_grpc.ExternalScalerStub) -> None:
    ref = pb.ScaledObjectRef(name="qwen", namespace="ai", scalerMetadata={"k": "v" * 100_000})
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.IsActive(ref)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_metric_name_in_any_case_is_served(
    stub: pb_grpc.ExternalScalerStub, signal: demand.DemandSignal
) -> None:
    signal.set(7)
    for name in ("queueDepth", "queuedepth", "QUEUEDEPTH", ""):  # the HPA's path lowercases it
        reply = await stub.GetMetrics(pb.GetMetricsRequest(scaledObjectRef=REF, metricName=name))
        assert [(v.metricName, v.metricValueFloat) for v in reply.metricValues] == [("queueDepth", 7.0)]


async def test_unknown_metric_name_is_refused(stub: pb_grpc.ExternalScalerStub) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetMetrics(pb.GetMetricsRequest(scaledObjectRef=REF, metricName="cpu"))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "queueDepth" in (info.value.details() or "")


async def test_streams_are_bounded(stub: pb_grpc.ExternalScalerStub) -> None:
    held = [stub.StreamIsActive(REF) for _ in range(2)]
    for call in held:
        assert await next_result(call) is False
    third = stub.StreamIsActive(REF)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await third.read()
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    for call in held:
        call.cancel()


async def test_shutdown_ends_streams_with_ok(signal: demand.DemandSignal) -> None:
    svc = servicer.ExternalScalerServicer(
        source=signal,
        service=SERVICE,
        metric_name="queueDepth",
        target=10,
        max_streams=4,
        max_streams_per_peer=4,
    )
    srv = server.ScalerServer(servicer=svc, listen="127.0.0.1:0", grace=1)
    await srv.start()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as channel:
        call = pb_grpc.ExternalScalerStub(channel).StreamIsActive(REF)
        assert await next_result(call) is False
        await srv.stop()
        assert await asyncio.wait_for(call.read(), 2) is grpc.aio.EOF
        assert await call.code() == grpc.StatusCode.OK


async def test_gauges_read_the_live_state(signal: demand.DemandSignal) -> None:
    registry = prometheus_client.CollectorRegistry()
    svc = servicer.ExternalScalerServicer(
        source=signal,
        service=SERVICE,
        metric_name="queueDepth",
        target=10,
        max_streams=4,
        max_streams_per_peer=4,
        metrics=metrics.ScalerMetrics(registry=registry),
    )

    def gauges() -> tuple[float | None, ...]:
        return tuple(
            registry.get_sample_value(f"noctaya_scaler_{name}")
            for name in ("demand", "active", "streams", "streams_max")
        )

    async with server.ScalerServer(servicer=svc, listen="127.0.0.1:0", grace=0.1) as srv:
        assert gauges() == (0, 0, 0, 4)
        signal.set(3)
        assert gauges() == (3, 1, 0, 4)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as channel:
            call = pb_grpc.ExternalScalerStub(channel).StreamIsActive(REF)
            assert await next_result(call) is True
            assert gauges() == (3, 1, 1, 4)
            signal.set(0)
            assert await next_result(call) is False
            assert gauges() == (0, 0, 1, 4)
            call.cancel()
            async with asyncio.timeout(2):
                while svc.open_streams:  # noqa: ASYNC110 - the server notices the cancel on its own
                    await asyncio.sleep(0.01)
            assert gauges() == (0, 0, 0, 4)


async def test_health_reports_serving(scaler: server.ScalerServer) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{scaler.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ("", server.SERVICE_NAME):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_one_address_cannot_hold_every_stream(signal: demand.DemandSignal) -> None:
    """An unauthenticated client on the plaintext port (here 127.0.0.1) gets at most
    ``max_streams_per_peer`` streams; KEDA from another address (here ::1) still gets its stream at
    once, and when all slots are full it takes one from the address holding the most."""
    svc = servicer.ExternalScalerServicer(
        source=signal,
        service=SERVICE,
        metric_name="queueDepth",
        target=10,
        max_streams=4,
        max_streams_per_peer=1,
    )
    async with (
        server.ScalerServer(servicer=svc, listen="[::]:0", grace=0.1) as srv,
        grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as hostile,
    ):
        attacker = pb_grpc.ExternalScalerStub(hostile)
        calls = [attacker.StreamIsActive(REF) for _ in range(4)]
        outcomes = []
        for call in calls:
            try:
                outcomes.append(await next_result(call))
            except grpc.aio.AioRpcError as exc:
                outcomes.append(exc.code())
        assert outcomes.count(False) == 1, outcomes  # the per-address bound
        async with grpc.aio.insecure_channel(f"[::1]:{srv.port}") as keda_channel:
            keda = pb_grpc.ExternalScalerStub(keda_channel).StreamIsActive(REF)
            assert await next_result(keda) is False
            signal.set(1)
            assert await next_result(keda) is True
            keda.cancel()
        for call in calls:
            call.cancel()


async def test_a_full_table_makes_room_for_a_smaller_peer(signal: demand.DemandSignal) -> None:
    svc = servicer.ExternalScalerServicer(
        source=signal,
        service=SERVICE,
        metric_name="queueDepth",
        target=10,
        max_streams=3,
        max_streams_per_peer=3,
    )
    async with (
        server.ScalerServer(servicer=svc, listen="[::]:0", grace=0.1) as srv,
        grpc.aio.insecure_channel(f"127.0.0.1:{srv.port}") as hostile,
    ):
        attacker = pb_grpc.ExternalScalerStub(hostile)
        calls = [attacker.StreamIsActive(REF) for _ in range(3)]
        for call in calls:
            assert await next_result(call) is False
        async with grpc.aio.insecure_channel(f"[::1]:{srv.port}") as keda_channel:
            keda = pb_grpc.ExternalScalerStub(keda_channel).StreamIsActive(REF)
            assert await next_result(keda) is False
            async with asyncio.timeout(3):
                while not any(call.done() for call in calls):  # noqa: ASYNC110 - grpc has no event
                    await asyncio.sleep(0.01)
            ended = [call for call in calls if call.done()]
            assert len(ended) == 1 and await ended[0].code() is grpc.StatusCode.RESOURCE_EXHAUSTED
            assert svc.open_streams == 3
            keda.cancel()
        for call in calls:
            call.cancel()
