"""The aggregate scaler in-process: reports over HTTP on port 0, the sum over gRPC on port 0.

Aspects: accepted reports are summed and served by GetMetrics / StreamIsActive (true on the first
report with demand); a forged token, a missing header, an oversized body, malformed JSON, JSON
nested past the decoder's limit, wrong types, out-of-range values, a report for another service,
stale and replayed sequences and a full member table are each refused with their own status and
reason without disturbing the sum; the token file is reread after rotation; refusals are counted
by reason in /metrics; withdraw removes a member; the documented JSON schema accepts exactly what
the scaler accepts; config errors name the field; a body that arrives in slow chunks is read whole.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import grpc
import jsonschema  # type: ignore[import-untyped]
import pytest
from prometheus_client.parser import text_string_to_metric_families

from noctaya.contract import fields
from noctaya.contract import scaler as scaler_contract
from noctaya.scaler import aggregate, intake
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKEN = "s3cret-token-0123456789abcdef"
REF = pb.ScaledObjectRef(name="qwen", namespace="ai")
SERVICE = {"name": "qwen", "namespace": "ai"}


@pytest.fixture
def token_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture
async def scaler(token_file: pathlib.Path) -> AsyncIterator[aggregate.AggregateScaler]:
    config = scaler_contract.build_config(
        {
            "service": SERVICE,
            "grpcListen": "127.0.0.1:0",
            "reportListen": "127.0.0.1:0",
            "tokenFile": str(token_file),
            "maxMembers": 3,
            "maxMemberDemand": 50,
            "memberTtl": "10s",
        }
    )
    async with aggregate.AggregateScaler(config=config) as running:
        yield running


@pytest.fixture
async def post(scaler: aggregate.AggregateScaler) -> AsyncIterator[Any]:
    async with aiohttp.ClientSession() as session:

        async def send(
            body: object,
            *,
            token: str | None = TOKEN,
            raw: bytes | None = None,
            headers: dict[str, str] | None = None,
        ) -> tuple[int, dict[str, Any]]:
            hdrs = dict(headers or {})
            if token is not None:
                hdrs["Authorization"] = f"Bearer {token}"
            data = raw if raw is not None else json.dumps(body).encode()
            async with session.post(
                f"http://127.0.0.1:{scaler.report_port}/v1/reports", data=data, headers=hdrs
            ) as response:
                return response.status, await response.json()

        yield send


def report(member: str, sequence: int, demand: int) -> dict[str, Any]:
    return {"service": SERVICE, "member": member, "sequence": sequence, "demand": demand}


async def grpc_demand(scaler: aggregate.AggregateScaler) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{scaler.grpc_port}") as channel:
        reply = await pb_grpc.ExternalScalerStub(channel).GetMetrics(
            pb.GetMetricsRequest(scaledObjectRef=REF, metricName="queueDepth")
        )
        return int(reply.metricValues[0].metricValue)


async def test_reports_are_summed_and_activate_the_stream(
    scaler: aggregate.AggregateScaler, post: Any
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{scaler.grpc_port}") as channel:
        stream = pb_grpc.ExternalScalerStub(channel).StreamIsActive(REF)
        assert (await asyncio.wait_for(stream.read(), 2)).result is False
        assert await post(report("gw-a", 1, 0)) == (200, {"accepted": True, "members": 1, "demand": 0})
        status, _ = await post(report("gw-a", 2, 2))
        assert status == 200
        assert (await asyncio.wait_for(stream.read(), 2)).result is True
        assert (await post(report("gw-b", 1, 5)))[1]["demand"] == 7
        stream.cancel()
    assert await grpc_demand(scaler) == 7
    assert (await post({"service": SERVICE, "member": "gw-a", "sequence": 3, "withdraw": True}))[1] == {
        "accepted": True,
        "members": 1,
        "demand": 5,
    }


BAD_BODIES: list[tuple[str, bytes, int, str]] = [
    ("not-json", b"{nope", 400, "bad_request"),
    ("array", b"[]", 400, "bad_request"),
    ("unknown-field", json.dumps({**report("m", 9, 1), "extra": 1}).encode(), 400, "bad_request"),
    ("string-demand", json.dumps({**report("m", 9, 1), "demand": "1"}).encode(), 400, "bad_request"),
    ("bool-sequence", json.dumps({**report("m", 9, 1), "sequence": True}).encode(), 400, "bad_request"),
    ("float-demand", json.dumps({**report("m", 9, 1), "demand": 1.5}).encode(), 400, "bad_request"),
    ("zero-sequence", json.dumps(report("m", 0, 1)).encode(), 400, "bad_request"),
    ("huge-sequence", json.dumps(report("m", 2**64, 1)).encode(), 400, "bad_request"),
    ("bad-member", json.dumps(report("../etc", 9, 1)).encode(), 400, "bad_request"),
    ("long-member", json.dumps(report("m" * 200, 9, 1)).encode(), 400, "bad_request"),
    ("member-newline", json.dumps(report("gw-legit-1\n", 9, 1)).encode(), 400, "bad_request"),
    (
        "no-demand",
        json.dumps({"service": SERVICE, "member": "m", "sequence": 9}).encode(),
        400,
        "bad_request",
    ),
    (
        "withdraw-with-demand",
        json.dumps({**report("m", 9, 3), "withdraw": True}).encode(),
        400,
        "bad_request",
    ),
    ("deeply-nested", b"[" * 2000 + b"]" * 2000, 400, "bad_request"),
    ("negative-demand", json.dumps(report("m", 9, -1)).encode(), 422, "demand_out_of_range"),
    ("over-member-bound", json.dumps(report("m", 9, 51)).encode(), 422, "demand_out_of_range"),
    (
        "other-service",
        json.dumps({**report("m", 9, 1), "service": {"name": "x", "namespace": "ai"}}).encode(),
        400,
        "wrong_service",
    ),
    (
        "oversized",
        json.dumps({**report("m", 9, 1), "member": "m", "pad": "x" * 5000}).encode(),
        413,
        "too_large",
    ),
]


@pytest.mark.parametrize(
    ("body", "status", "reason"), [b[1:] for b in BAD_BODIES], ids=[b[0] for b in BAD_BODIES]
)
async def test_bad_reports_are_refused_without_disturbing_the_sum(
    scaler: aggregate.AggregateScaler, post: Any, body: bytes, status: int, reason: str
) -> None:
    assert (await post(report("gw-a", 1, 4)))[0] == 200
    got_status, reply = await post(None, raw=body)
    assert (got_status, reply["error"]["code"]) == (status, reason)
    assert reply["error"]["type"] == "report_refused"
    assert await grpc_demand(scaler) == 4


async def test_forged_missing_and_rotated_tokens(
    scaler: aggregate.AggregateScaler, post: Any, token_file: pathlib.Path
) -> None:
    assert (await post(report("gw-a", 1, 4)))[0] == 200
    for token in ("forged-token-0123456789abcdef", "", TOKEN[:-1], TOKEN + "x"):
        status, reply = await post(report("gw-a", 2, 40), token=token)
        assert (status, reply["error"]["code"]) == (401, "unauthorized")
    status, _ = await post(report("gw-a", 2, 40), token=None)
    assert status == 401
    status, _ = await post(report("gw-a", 2, 40), token=None, headers={"Authorization": f"Basic {TOKEN}"})
    assert status == 401
    assert await grpc_demand(scaler) == 4
    await asyncio.to_thread(token_file.write_text, "rotated-token-0123456789abcdef")
    assert (await post(report("gw-a", 3, 6)))[0] == 401
    assert (await post(report("gw-a", 4, 6), token="rotated-token-0123456789abcdef"))[0] == 200
    assert await grpc_demand(scaler) == 6


async def test_stale_replayed_and_too_many_members(scaler: aggregate.AggregateScaler, post: Any) -> None:
    assert (await post(report("gw-a", 5, 4)))[0] == 200
    for seq in (5, 4):
        status, reply = await post(report("gw-a", seq, 40))
        assert (status, reply["error"]["code"]) == (409, "stale_sequence")
    for member in ("gw-b", "gw-c"):
        assert (await post(report(member, 1, 1)))[0] == 200
    status, reply = await post(report("gw-d", 1, 1))
    assert (status, reply["error"]["code"]) == (429, "too_many_members")
    assert await grpc_demand(scaler) == 6


async def test_refusals_are_counted_by_reason(scaler: aggregate.AggregateScaler, post: Any) -> None:
    await post(report("gw-a", 1, 1), token="forged-token-0123456789abcdef")
    await post(report("gw-a", 1, 1))
    await post(report("gw-a", 1, 1))
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{scaler.report_port}/metrics") as response,
    ):
        text = await response.text()
    assert 'noctaya_scaler_reports_total{outcome="refused",reason="unauthorized"} 1.0' in text
    assert 'noctaya_scaler_reports_total{outcome="refused",reason="stale_sequence"} 1.0' in text
    assert 'noctaya_scaler_reports_total{outcome="accepted",reason=""} 1.0' in text
    assert "noctaya_scaler_gateway_members 1.0" in text
    assert "noctaya_scaler_members_max 3.0" in text
    assert "noctaya_scaler_reports_in_flight 0.0" in text
    assert "noctaya_scaler_demand 1.0" in text


def test_schema_accepts_what_the_scaler_accepts() -> None:
    schema = json.loads((ROOT / "proto" / "demand-report.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    ref = fields.ServiceRef(name="qwen", namespace="ai")
    good = [
        report("gw-a", 1, 0),
        report("a.b:c-d_e", 2**63 - 1, 50),
        {"service": SERVICE, "member": "gw", "sequence": 3, "withdraw": True},
    ]
    for body in good:
        assert not list(validator.iter_errors(body))
        intake.parse_report(json.dumps(body).encode(), service=ref, max_demand=50)
    for name, raw, status, _reason in BAD_BODIES:
        if status in (400,) and name not in (
            "other-service",
            "withdraw-with-demand",
            "not-json",
            "deeply-nested",
            # the schema's ECMA-262 pattern refuses it, but Python's re (which jsonschema uses here)
            # lets ``$`` match before a final newline
            "member-newline",
        ):
            assert list(validator.iter_errors(json.loads(raw))), name


def test_config_errors_name_the_field() -> None:
    with pytest.raises(scaler_contract.ConfigError) as info:
        scaler_contract.build_config({"service": SERVICE, "maxMembers": 0, "memberTtl": "soon", "bogus": 1})
    text = str(info.value)
    for field in ("maxMembers", "memberTtl", "bogus"):
        assert field in text
    config = scaler_contract.build_config({"service": SERVICE})
    assert (config.grpc_listen, config.report_listen, config.member_ttl, config.max_members) == (
        ":9090",
        ":9091",
        10.0,
        32,
    )


async def test_a_report_body_in_slow_chunks_is_read_whole(scaler: aggregate.AggregateScaler) -> None:
    body = json.dumps(report("gw-slow", 1, 9)).encode()

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 7):
            yield body[i : i + 7]
            await asyncio.sleep(0.01)

    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"http://127.0.0.1:{scaler.report_port}/v1/reports",
            data=chunks(),
            headers={"Authorization": f"Bearer {TOKEN}"},
        ) as response,
    ):
        assert response.status == 200, await response.text()
    assert await grpc_demand(scaler) == 9


async def test_open_streams_are_a_gauge_on_the_scrape_endpoint(scaler: aggregate.AggregateScaler) -> None:
    """What ``NoctayaExternalScalerStreamMissing`` reads: 1 while KEDA holds its stream, 0 after."""

    async def streams(session: aiohttp.ClientSession) -> float:
        async with session.get(f"http://127.0.0.1:{scaler.report_port}/metrics") as response:
            text = await response.text()
        (value,) = [
            s.value
            for f in text_string_to_metric_families(text)
            for s in f.samples
            if s.name == "noctaya_scaler_streams"
        ]
        return value

    async with aiohttp.ClientSession() as session:
        assert await streams(session) == 0
        async with grpc.aio.insecure_channel(f"127.0.0.1:{scaler.grpc_port}") as channel:
            stream = pb_grpc.ExternalScalerStub(channel).StreamIsActive(REF)
            assert (await asyncio.wait_for(stream.read(), 2)).result is False
            assert await streams(session) == 1
            stream.cancel()
        async with asyncio.timeout(5):
            while await streams(session) != 0:  # noqa: ASYNC110 - the server notices the cancel on its own
                await asyncio.sleep(0.02)
