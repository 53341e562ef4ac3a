"""The scaler inside a real gateway app (``make_app(config, sidecars=gateway_sidecars(config))``).

Aspects: with ``scaler`` set, a cold request through the gateway pushes ``true`` on the co-located
ExternalScaler's stream and GetMetrics follows the gateway's demand; the scaler's metrics appear in
the gateway's registry; with ``report`` set, the gateway's demand reaches an aggregate scaler, the
reporter's outcomes, failures in a row and retry bound appear in the gateway's registry, and the
member withdraws when the gateway stops; no mode configured means no contexts; a scaler without a
service, or with unreadable TLS files, is a configuration error naming the field.
"""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import grpc
import prometheus_client
import pytest
from aiohttp import web

from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract
from noctaya.gateway import app as gateway_app
from noctaya.gateway import keys
from noctaya.scaler import aggregate, hosting
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

REF = pb.ScaledObjectRef(name="qwen", namespace="ai")
TOKEN = "s3cret-token-0123456789abcdef"


def gateway(reserve_port: Callable[[], int], **fields: Any) -> gateway_contract.GatewayConfig:
    """A gateway config on a reserved port, its backend a reserved port nobody listens on."""
    return gateway_contract.build_config(
        {
            "listen": f"127.0.0.1:{reserve_port()}",
            "backendUrl": f"http://127.0.0.1:{reserve_port()}",
            "service": {"name": "qwen", "namespace": "ai"},
            "activationTimeout": "20s",
            **fields,
        }
    )


@contextlib.asynccontextmanager
async def running(config: gateway_contract.GatewayConfig) -> AsyncIterator[web.Application]:
    app = gateway_app.make_app(config, sidecars=hosting.gateway_sidecars(config))
    runner = web.AppRunner(
        app, handle_signals=False, access_log=None, shutdown_timeout=0.5, handler_cancellation=True
    )
    await runner.setup()
    host, port = config.listen_address
    await web.TCPSite(runner, host, port).start()
    try:
        yield app
    finally:
        await runner.cleanup()


async def until(predicate: Callable[[], bool], within: float = 3.0) -> None:
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 - polling a plain predicate is the point
            await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def cold_request(config: gateway_contract.GatewayConfig) -> AsyncIterator[None]:
    """One non-streaming request held in the gateway's cold queue while the context is open."""
    async with aiohttp.ClientSession() as session:
        host, port = config.listen_address
        task = asyncio.create_task(
            session.post(
                f"http://{host}:{port}/v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
            )
        )
        try:
            yield
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
                await task


async def test_colocated_scaler_pushes_true_on_the_first_cold_request(
    reserve_port: Callable[[], int],
) -> None:
    grpc_port = reserve_port()
    config = gateway(reserve_port, scaler={"listen": f"127.0.0.1:{grpc_port}", "target": 3})
    async with running(config) as app, grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
        stub = pb_grpc.ExternalScalerStub(channel)
        stream = stub.StreamIsActive(REF)
        assert (await asyncio.wait_for(stream.read(), 2)).result is False
        spec = await stub.GetMetricSpec(REF)
        assert spec.metricSpecs[0].targetSizeFloat == 3.0
        async with cold_request(config):
            assert (await asyncio.wait_for(stream.read(), 3)).result is True
            assert app[keys.DEMAND].demand() >= 1
            metrics = await stub.GetMetrics(
                pb.GetMetricsRequest(scaledObjectRef=REF, metricName="queueDepth")
            )
            assert metrics.metricValues[0].metricValue == app[keys.DEMAND].demand()
            assert (await stub.IsActive(REF)).result is True
        stream.cancel()
        text = prometheus_client.generate_latest(app[keys.METRICS].registry).decode()
        assert 'noctaya_scaler_pushes_total{result="true"} 1.0' in text


async def test_reporter_publishes_gateway_demand_and_withdraws(
    tmp_path: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    sconfig = scaler_contract.build_config(
        {
            "service": {"name": "qwen", "namespace": "ai"},
            "grpcListen": "127.0.0.1:0",
            "reportListen": "127.0.0.1:0",
            "tokenFile": str(token),
        }
    )
    async with aggregate.AggregateScaler(config=sconfig) as scaler:
        report_port = scaler.report_port  # bound by the scaler itself, read back
        config = gateway(
            reserve_port,
            report={"url": f"http://127.0.0.1:{report_port}", "tokenFile": str(token), "interval": "2s"},
        )
        async with running(config) as app:
            await until(lambda: len(scaler.membership) == 1)
            async with cold_request(config):
                await until(lambda: scaler.membership.demand() >= 1, within=1.0)
            registry = app[keys.METRICS].registry
            accepted = registry.get_sample_value(
                "noctaya_gateway_demand_reports_total", {"result": "accepted"}
            )
            assert accepted is not None and accepted >= 2
            assert (
                registry.get_sample_value("noctaya_gateway_demand_reports_total", {"result": "failed"}) == 0
            )
            assert registry.get_sample_value("noctaya_scaler_reporter_failures") == 0
            assert registry.get_sample_value("noctaya_scaler_reporter_backoff_max_seconds") == 2.0
        assert len(scaler.membership) == 0  # withdrawn on shutdown, not left to expire


def test_contexts_by_mode_and_configuration_errors(
    tmp_path: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    assert hosting.gateway_sidecars(gateway(reserve_port)) == []
    assert len(hosting.gateway_sidecars(gateway(reserve_port, scaler={}))) == 1
    with pytest.raises(gateway_contract.ConfigError, match="service"):
        gateway(reserve_port, scaler={}, service=None)
    bad_tls = {"certFile": str(tmp_path / "missing.crt"), "keyFile": str(tmp_path / "missing.key")}
    with pytest.raises(gateway_contract.ConfigError, match=r"scaler\.tls: .*missing"):
        hosting.gateway_sidecars(gateway(reserve_port, scaler={"tls": bad_tls}))
