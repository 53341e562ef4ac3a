"""``noctaya dev --gateways 2`` end to end: the aggregate scaler between gateways and the local KEDA.

Aspects: two gateways each holding a stream, one of them replaced (SIGTERM, then a new process) while
demand is held: both streams complete, the backend never drops to 0, the replacement registers as a
new member; forged, stale, replayed and oversized demand reports are refused with their reasons and
the sum KEDA reads over gRPC is unchanged; a withdraw removes a member at once; a gateway killed
without a withdraw expires after the member ttl and its replacement registers as a new member.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from typing import Any

import aiohttp
import grpc
import openai
import pytest
from prometheus_client import parser

from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

pytestmark = pytest.mark.e2e
MESSAGES: Any = [{"role": "user", "content": "hello"}]
REF = pb.ScaledObjectRef(name="dev", namespace="default")


async def stream_text(client: openai.AsyncOpenAI) -> str:
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])


async def scaler_health(port: int) -> dict[str, Any]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/healthz") as response:
        result: dict[str, Any] = await response.json()
        return result


async def scaler_counter(port: int, name: str) -> float:
    """A sample of the aggregate scaler's ``/metrics`` exposition."""
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{port}/metrics") as response:
        text = await response.text()
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    raise AssertionError(f"{name} is not in the scaler's metrics:\n{text}")


async def members(port: int, count: int) -> None:
    """Wait until the aggregate scaler sums ``count`` members (its own view: a gateway the runner sees
    answering has not necessarily had its first report counted yet)."""
    async with asyncio.timeout(30):
        while (await scaler_health(port))["members"] != count:  # noqa: ASYNC110 - polling over HTTP
            await asyncio.sleep(0.05)


async def grpc_demand(port: int) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = await pb_grpc.ExternalScalerStub(channel).GetMetrics(
            pb.GetMetricsRequest(scaledObjectRef=REF, metricName="queueDepth")
        )
        return int(reply.metricValues[0].metricValue)


@pytest.mark.timeout(60)
async def test_replacing_a_gateway_while_demand_is_held_keeps_the_backend_up(start_dev: Any) -> None:
    dev = await start_dev(
        "--retry-grace",
        "300ms",
        gateways=2,
        engine={"ready_delay": "300ms", "tokens": 80, "token_delay": "50ms"},
    )
    state = dev.state()
    await members(state["scalerReportPort"], 2)
    gateways = state["gateways"]
    clients = [
        openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{g['port']}/v1", api_key="dev", max_retries=0)
        for g in gateways
    ]
    streams = [asyncio.create_task(stream_text(c)) for c in clients]
    await dev.wait(
        lambda s: all(g["queue"].get("inFlight", 0) >= 1 for g in s["gateways"]),
        within=15,
        what="a stream in flight through each gateway",
    )
    desired: list[int] = []

    async def watch() -> None:
        while True:
            desired.append(dev.state()["status"]["replicas_desired"])
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    try:
        os.kill(gateways[1]["pid"], signal.SIGTERM)  # the gateway drains its stream, withdraws, is replaced
        texts = await asyncio.gather(*streams)
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    assert all(text.split() == ["tok"] * 80 for text in texts)
    await dev.wait(
        lambda s: s["gateways"][1]["generation"] == 2 and s["gateways"][1]["healthy"],
        within=20,
        what="gateway-1 replaced",
    )
    assert desired and min(desired) >= 1, desired
    # the replacement is healthy to the runner once it answers; the scaler counts it at its first report
    await members(state["scalerReportPort"], 2)
    assert "gateway-1 exited with code 0; replacing it" in dev.output()


@pytest.mark.timeout(40)
async def test_forged_stale_and_oversized_reports_do_not_disturb_the_sum(start_dev: Any) -> None:
    dev = await start_dev(gateways=2, cooldown="30s")
    state = dev.state()
    port, grpc_port = state["scalerReportPort"], state["grpcPort"]
    await members(port, 2)  # both gateways counted before the probe member joins them
    token = (dev.run_dir / "scaler-token").read_text().strip()
    url = f"http://127.0.0.1:{port}/v1/reports"
    service = {"name": "dev", "namespace": "default"}

    async def post(body: object, *, bearer: str = token, raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else json.dumps(body).encode()
        async with (
            aiohttp.ClientSession() as http,
            http.post(url, data=data, headers={"Authorization": f"Bearer {bearer}"}) as response,
        ):
            return response.status, await response.json()

    def report(sequence: int, demand: int) -> dict[str, Any]:
        return {"service": service, "member": "e2e-probe", "sequence": sequence, "demand": demand}

    assert (await post(report(10, 3)))[0] == 200
    assert await grpc_demand(grpc_port) == 3
    refusals = [
        (await post(report(11, 50), bearer="forged-" + token[7:]), 401, "unauthorized"),
        (await post(report(10, 50)), 409, "stale_sequence"),
        (await post(report(9, 50)), 409, "stale_sequence"),
        (await post(None, raw=json.dumps({**report(12, 50), "pad": "x" * 8000}).encode()), 413, "too_large"),
        (await post({**report(12, 50), "demand": "50"}), 400, "bad_request"),
        (await post(report(12, 10**9)), 422, "demand_out_of_range"),
    ]
    for (status, body), want_status, want_reason in refusals:
        assert (status, body["error"]["code"]) == (want_status, want_reason)
    assert await grpc_demand(grpc_port) == 3
    assert (await scaler_health(port))["members"] == 3
    assert (await post({"service": service, "member": "e2e-probe", "sequence": 13, "withdraw": True}))[
        0
    ] == 200
    assert await grpc_demand(grpc_port) == 0
    assert (await scaler_health(port))["members"] == 2


@pytest.mark.timeout(40)
async def test_a_killed_gateway_expires_and_its_replacement_registers(start_dev: Any) -> None:
    dev = await start_dev("--member-ttl", "1s", gateways=2)
    state = dev.state()
    port = state["scalerReportPort"]
    await members(port, 2)
    os.kill(state["gateways"][1]["pid"], signal.SIGKILL)  # no withdraw: the member must expire
    # the runner replaces the gateway about as soon as the member's ttl runs out, so the moment with a
    # single member may be too short to catch by polling: the scaler's own counters say what happened
    async with asyncio.timeout(30):
        while (await scaler_counter(port, "noctaya_scaler_expired_members_total")) < 1:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    assert await scaler_counter(port, "noctaya_scaler_withdrawn_members_total") == 0
    await dev.wait(
        lambda s: s["gateways"][1]["generation"] == 2 and s["gateways"][1]["healthy"],
        within=20,
        what="gateway-1 replaced",
    )
    await members(port, 2)
