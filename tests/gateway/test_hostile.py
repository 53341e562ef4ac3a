"""Hostile HTTP at the socket: what a client that does not follow HTTP gets, and what it cannot take.

Aspects: requests pipelined before a malformed one in the same packet are answered and served once
each, then the malformed one gets its error; every malformed request (bad request line, unknown
version or method, NUL or CR in a header, an oversized target or header, too many headers, bad,
negative or duplicate Content-Length, Content-Length with Transfer-Encoding, a bad chunk, an HTTP/2
preface, an Expect other than 100-continue...) is answered with OpenAI-shaped JSON that echoes none
of the client's bytes, and nothing is logged above debug or with a traceback; no log line carries a
credential the client sent; a connection that sends no request head is closed after the header
timeout while ``/healthz`` answers other clients; connections beyond the per-peer bound are closed
at once and counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import pathlib
import sys

import pytest

from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing
from noctaya.serving import redaction

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the shared corpus is imported as tests.hostile
    sys.path.insert(0, str(ROOT))

from tests.hostile import MALFORMED, MARK, exchange, parse, request  # noqa: E402


@pytest.fixture
async def gateway(gateways: testing.GatewayStarter) -> testing.RunningGateway:
    return await gateways.start(wait_ready=True)


@pytest.mark.parametrize(("name", "data"), MALFORMED, ids=[m[0] for m in MALFORMED])
async def test_malformed_requests_get_json_without_echo_or_traceback(
    gateway: testing.RunningGateway, caplog: pytest.LogCaptureFixture, name: str, data: bytes
) -> None:
    with caplog.at_level(logging.DEBUG):
        raw = await exchange(gateway.url, data)
    status, headers, body = parse(raw)
    assert 400 <= status < 500, (name, raw[:200])
    assert headers["content-type"].startswith("application/json"), (name, raw[:300])
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
    registry = gateway.app[keys.METRICS].registry
    assert registry.get_sample_value("noctaya_gateway_rejections_total", {"reason": error["code"]}) == 1
    assert MARK not in raw and MARK.lower() not in raw.lower()
    for record in caplog.records:
        assert record.levelno < logging.WARNING or record.name.startswith("noctaya.gateway.auth"), (
            record.getMessage()
        )
        assert record.exc_info is None and not record.exc_text, record.getMessage()
        assert "ZQXMARK" not in record.getMessage()


async def test_no_log_line_carries_the_credential_a_client_sent(
    gateway: testing.RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    secret = b"sk-live-0123456789abcdef"
    bad = request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + secret + b"\r\nX-A: \x01")
    with caplog.at_level(logging.DEBUG):
        await exchange(gateway.url, bad)
        await exchange(
            gateway.url, request(b"GET /healthz HTTP/1.1\r\nAuthorization: Bearer " + secret + b"\x00")
        )
    assert all(secret.decode() not in r.getMessage() for r in caplog.records)


def test_the_redactor_masks_credentials_wherever_a_library_logs_them() -> None:
    logger = logging.getLogger("noctaya.test.redaction")
    records: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(self.format(record))

    handler = Collect()
    logger.addHandler(handler)
    logger.propagate = False
    try:
        redaction.install(logger)
        redaction.REDACTOR.remember([b"sk-remembered-key-42"])
        logger.error("bad header line %r", b"Authorization: Bearer sk-abcdef0123456789")
        logger.error("proxy-authorization=Basic dXNlcjpwYXNz and X-Api-Key: k-998877665544")
        logger.error("a key in the middle:sk-remembered-key-42:of text")
        try:
            raise ValueError("Bearer sk-in-a-traceback-0000")
        except ValueError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    text = "\n".join(records)
    for secret in (
        "sk-abcdef0123456789",
        "dXNlcjpwYXNz",
        "k-998877665544",
        "sk-remembered-key-42",
        "sk-in-a-traceback",
    ):
        assert secret not in text
    assert text.count(redaction.MASK) >= 5  # the traceback shows the raising line and the message


async def test_a_silent_connection_is_closed_after_the_header_timeout(
    gateways: testing.GatewayStarter,
) -> None:
    gateway = await gateways.start(wait_ready=True)
    limits = gateway.app[keys.CONNECTIONS].limits
    host, port = gateway.url.removeprefix("http://").split(":")
    loop = asyncio.get_running_loop()
    started = loop.time()
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the head never ends
    meanwhile = await exchange(gateway.url, request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close"))
    assert parse(meanwhile)[0] == 200
    async with asyncio.timeout(limits.header_timeout + 5):
        assert await reader.read() == b""  # closed by the gateway, with nothing sent
    assert loop.time() - started >= limits.header_timeout - 0.5
    writer.close()


async def test_connections_beyond_the_per_peer_bound_are_closed_at_once(
    gateways: testing.GatewayStarter,
) -> None:
    gateway = await gateways.start(wait_ready=True, maxConnectionsPerPeer=8)
    table = gateway.app[keys.CONNECTIONS]
    bound = table.limits.max_connections_per_peer
    host, port = gateway.url.removeprefix("http://").split(":")
    held = [await asyncio.open_connection(host, int(port)) for _ in range(bound)]
    try:
        reader, writer = await asyncio.open_connection(host, int(port))
        async with asyncio.timeout(5):
            assert await reader.read() == b""
        writer.close()
        samples = gateway.app[keys.METRICS].registry
        assert samples.get_sample_value("noctaya_gateway_connections_refused_total") == 1
        assert samples.get_sample_value("noctaya_gateway_connections") == bound
    finally:
        for _, w in held:
            w.close()
    async with asyncio.timeout(5):  # the server sees the closes: the peer's bound is free again
        while table.open:  # noqa: ASYNC110  (the table has no event to wait on)
            await asyncio.sleep(0.01)
    answer = await exchange(gateway.url, request(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close"))
    assert parse(answer)[0] == 200


async def test_an_idle_kept_alive_connection_is_closed(gateways: testing.GatewayStarter) -> None:
    gateway = await gateways.start(wait_ready=True, keepAliveTimeout="300ms")
    host, port = gateway.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(request(b"GET /healthz HTTP/1.1\r\nHost: x"))
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    await reader.readexactly(int(parse(head)[1]["content-length"]))
    async with asyncio.timeout(5):
        assert await reader.read() == b""  # closed by the gateway once idle
    writer.close()


async def test_a_valid_request_pipelined_before_a_malformed_one_is_answered_and_served(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter
) -> None:
    gateway = await gateways.start(wait_ready=True)
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    valid = request(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode(),
        body,
    )
    for tail in (b"GARBAGE\r\n\r\n", b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: \x00\r\n\r\n"):
        served = engine.state.served
        raw = await exchange(gateway.url, valid + valid + tail)  # one packet
        assert raw.startswith(b"HTTP/1.1 200") and raw.count(b"HTTP/1.1 200") == 2, raw[:300]
        assert b"HTTP/1.0 400 Bad Request" in raw.split(b"HTTP/1.1 200")[-1], raw[-300:]
        assert engine.state.served == served + 2  # both executed, once each


async def test_many_requests_pipelined_before_a_malformed_one_are_each_answered_then_the_error(
    gateways: testing.GatewayStarter,
) -> None:
    """A packet of 100 tiny requests and then a malformed one: the HTTP layer queues at most 32 of a
    connection's requests at a time (and the recovery after the error adds at most as many), yet
    every request before the malformed one is answered, in order, and the error comes last."""
    gateway = await gateways.start()
    small = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
    raw = await exchange(gateway.url, small * 100 + b"GARBAGE\r\n\r\n")  # one packet
    assert raw.count(b"HTTP/1.1 200") == 100, raw[-300:]
    assert b"HTTP/1.0 400 Bad Request" in raw.split(b"HTTP/1.1 200")[-1], raw[-300:]
