"""Hostile clients of the aggregate scaler's report port and of the ExternalScaler.

Aspects: every malformed HTTP request and every unknown route or method on the report port gets
the intake's typed JSON error without echoing the client's bytes and without a logged traceback; a
reporter that disconnects in the middle of its body leaves no traceback and the sum untouched;
gRPC calls whose bytes are not a valid message (truncated, invalid UTF-8 in a string field) are
INVALID_ARGUMENT with nothing logged above debug, and the scaler keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
import sys
from collections.abc import AsyncIterator

import grpc
import pytest

from noctaya.contract import scaler as scaler_contract
from noctaya.scaler import aggregate
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the shared corpus is imported as tests.hostile
    sys.path.insert(0, str(ROOT))

from tests.hostile import MALFORMED, MARK, exchange, parse, request  # noqa: E402

SERVICE = {"name": "qwen", "namespace": "ai"}
REF = pb.ScaledObjectRef(name="qwen", namespace="ai")
TOKEN = "s3cret-token-0123456789abcdef"


@pytest.fixture
async def scaler(tmp_path: pathlib.Path) -> AsyncIterator[aggregate.AggregateScaler]:
    token = tmp_path / "token"
    token.write_text(TOKEN)
    config = scaler_contract.build_config(
        {
            "service": SERVICE,
            "grpcListen": "127.0.0.1:0",
            "reportListen": "127.0.0.1:0",
            "tokenFile": str(token),
        }
    )
    async with aggregate.AggregateScaler(config=config) as running:
        yield running


def clean(caplog: pytest.LogCaptureFixture) -> None:
    for record in caplog.records:
        assert record.levelno < logging.WARNING, record.getMessage()
        assert record.exc_info is None and not record.exc_text, record.getMessage()


EXTRA = [
    ("unknown-route", request(b"GET /v1/nothing-" + MARK + b" HTTP/1.1\r\nHost: x\r\nConnection: close")),
    ("wrong-method", request(b"DELETE /v1/reports HTTP/1.1\r\nHost: x\r\nConnection: close")),
    ("get-reports", request(b"GET /v1/reports HTTP/1.1\r\nHost: x\r\nConnection: close")),
]


@pytest.mark.parametrize(("name", "data"), MALFORMED + EXTRA, ids=[m[0] for m in MALFORMED + EXTRA])
async def test_report_port_refusals_are_typed_json(
    scaler: aggregate.AggregateScaler, caplog: pytest.LogCaptureFixture, name: str, data: bytes
) -> None:
    data = data.replace(b"/v1/chat/completions", b"/v1/reports")  # the report port's own route
    with caplog.at_level(logging.DEBUG):
        raw = await exchange(f"http://127.0.0.1:{scaler.report_port}", data)
    status, headers, body = parse(raw)
    assert 400 <= status < 500, (name, raw[:200])
    assert headers["content-type"].startswith("application/json"), (name, raw[:300])
    error = json.loads(body)["error"]
    assert error["type"] == "report_refused" and error["code"]
    assert MARK not in raw
    clean(caplog)


async def test_a_reporter_leaving_mid_body_leaves_no_traceback(
    scaler: aggregate.AggregateScaler, caplog: pytest.LogCaptureFixture
) -> None:
    head = (
        b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + TOKEN.encode() + b'\r\nContent-Length: 300\r\n\r\n{"service":'
    )
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            _, writer = await asyncio.open_connection("127.0.0.1", scaler.report_port)
            writer.write(head)
            await writer.drain()
            writer.transport.abort()  # a reset, not a clean close
        # the scaler is still fine and the sum untouched
        raw = await exchange(
            f"http://127.0.0.1:{scaler.report_port}",
            request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close"),
        )
    assert parse(raw)[0] == 200 and json.loads(parse(raw)[2])["demand"] == 0
    clean(caplog)


async def test_undecodable_grpc_messages_are_invalid_argument(
    scaler: aggregate.AggregateScaler, caplog: pytest.LogCaptureFixture
) -> None:
    valid = REF.SerializeToString()
    bad_utf8 = b"\x0a\x02\xff\xfe\x12\x02ai"  # name: two bytes that are not UTF-8
    truncated = valid[:-1] + b"\x12\x7f"  # a length that runs past the end
    with caplog.at_level(logging.DEBUG):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{scaler.grpc_port}") as channel:
            for method in ("IsActive", "GetMetricSpec", "StreamIsActive", "GetMetrics"):
                kind = channel.unary_stream if method == "StreamIsActive" else channel.unary_unary
                call = kind(
                    f"/externalscaler.ExternalScaler/{method}",
                    request_serializer=lambda raw: raw,
                    response_deserializer=lambda raw: raw,
                )
                for payload in (bad_utf8, truncated):
                    if method == "GetMetrics":
                        payload = b"\x0a" + bytes([len(payload)]) + payload
                    with pytest.raises(grpc.aio.AioRpcError) as info:
                        reply = call(payload)
                        if method == "StreamIsActive":
                            await reply.read()
                        else:
                            await reply
                    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT, (method, info.value)
            reply = await pb_grpc.ExternalScalerStub(channel).IsActive(REF)
            assert reply.result is False
    clean(caplog)


async def test_report_port_connections_are_bounded_and_timed(tmp_path: pathlib.Path) -> None:
    """A client holding connections (or sending no head) on the report port cannot crowd out the
    reporters: beyond ``maxConnectionsPerPeer`` a connection is closed at once (counted), a silent
    one after ``headerTimeout``; a reporter from the same address gets in once they are gone."""
    token = tmp_path / "token"
    token.write_text(TOKEN)
    config = scaler_contract.build_config(
        {
            "service": SERVICE,
            "grpcListen": "127.0.0.1:0",
            "reportListen": "127.0.0.1:0",
            "tokenFile": str(token),
            "maxConnectionsPerPeer": 3,
            "headerTimeout": "2s",
        }
    )
    async with aggregate.AggregateScaler(config=config) as scaler:
        held = [await asyncio.open_connection("127.0.0.1", scaler.report_port) for _ in range(3)]
        reader, writer = await asyncio.open_connection("127.0.0.1", scaler.report_port)
        async with asyncio.timeout(5):
            assert await reader.read() == b""  # refused: the address holds its bound
        writer.close()
        assert scaler.registry.get_sample_value("noctaya_scaler_connections_refused_total") == 1
        async with asyncio.timeout(5):
            for held_reader, _ in held:
                assert await held_reader.read() == b""  # silent: closed after the header timeout
        for _, held_writer in held:
            held_writer.close()
        raw = await exchange(
            f"http://127.0.0.1:{scaler.report_port}",
            request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close"),
        )
        assert parse(raw)[0] == 200
