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
import contextlib
import json
import logging
import pathlib
import sys

import pytest

from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing
from noctaya.serving import connections, redaction

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
    gateway = await gateways.start(wait_ready=True, maxConnectionsPerPeer=8, probeConnections=0)
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


async def test_after_a_parse_error_a_connection_parses_nothing_more_and_answers_once(
    gateway: testing.RunningGateway, caplog: pytest.LogCaptureFixture
) -> None:
    """4 MiB of NUL bytes on one connection: one malformed request counted, one refusal logged, the
    connection closed, whatever the client goes on sending."""
    host, port = gateway.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    with caplog.at_level(logging.DEBUG, logger="noctaya.serving"), contextlib.suppress(ConnectionError):
        for _ in range(64):
            writer.write(b"\x00" * (64 << 10))
            await writer.drain()
    with contextlib.suppress(ConnectionError):
        async with asyncio.timeout(5):
            while await reader.read(1 << 16):
                pass
    writer.close()
    registry = gateway.app[keys.METRICS].registry
    await gateway.wait_for(lambda: gateway.app[keys.CONNECTIONS].open == 0)
    assert registry.get_sample_value("noctaya_gateway_rejections_total", {"reason": "malformed_request"}) == 1
    refusals = [r for r in caplog.records if r.getMessage().startswith("refused a malformed request")]
    assert len(refusals) == 1 and "malformed_request" in refusals[0].getMessage()


async def _hold(
    host: str, port: int, *, source: str, head: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    writer.write(head)
    await writer.drain()
    return reader, writer


async def test_healthz_answers_while_one_host_rotating_addresses_holds_every_connection(
    gateways: testing.GatewayStarter,
) -> None:
    """Eight loopback addresses hold every ordinary connection (heads that never end) and keep
    opening more, which fill the probe reserve: the kubelet's ``/healthz`` still gets its 200 (its
    connection takes the place of the oldest silent one in the reserve), anything else asked on a
    reserve connection is a JSON 503, and connections beyond all that are refused and counted."""
    gateway = await gateways.start(
        wait_ready=True, maxConnections=32, maxConnectionsPerPeer=8, probeConnections=4
    )
    host, port = gateway.url.removeprefix("http://").split(":")
    table = gateway.app[keys.CONNECTIONS]
    slow = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n"  # never ends
    held = []
    try:
        for index in range(2, 10):
            for _ in range(8):
                held.append(await _hold(host, int(port), source=f"127.0.0.{index}", head=slow))
        await gateway.wait_for(lambda: table.open == 32 and table.reserve_open == 4)
        for _ in range(3):
            raw = await exchange(gateway.url, request(b"GET /healthz HTTP/1.1\r\nHost: x"))
            status, headers, body = parse(raw)
            assert status == 200 and json.loads(body)["status"] == "ok", raw[:200]
            assert headers["connection"] == "close"
        raw = await exchange(gateway.url, request(b"GET /v1/models HTTP/1.1\r\nHost: x"))
        status, headers, body = parse(raw)
        assert status == 503 and headers["content-type"].startswith("application/json"), raw[:200]
        assert json.loads(body)["error"]["code"] == "connections_full"
        assert table.open <= 32  # the bound held throughout
        registry = gateway.app[keys.METRICS].registry
        assert (registry.get_sample_value("noctaya_gateway_connections_refused_total") or 0) >= 1
    finally:
        for _, writer in held:
            writer.close()


async def test_a_reserve_connection_must_send_its_head_soon(gateways: testing.GatewayStarter) -> None:
    gateway = await gateways.start(
        wait_ready=True, maxConnections=4, maxConnectionsPerPeer=2, probeConnections=2, headerTimeout="30s"
    )
    host, port = gateway.url.removeprefix("http://").split(":")
    held = [await _hold(host, int(port), source="127.0.0.2", head=b"") for _ in range(2)]
    loop = asyncio.get_running_loop()
    started = loop.time()
    reader, writer = await _hold(host, int(port), source="127.0.0.2", head=b"GET /healthz")  # in the reserve
    async with asyncio.timeout(10):
        assert await reader.read() == b""
    assert loop.time() - started < 10  # the reserve's short header timeout, not headerTimeout's 30 s
    for _, w in [*held, (reader, writer)]:
        w.close()


async def test_the_documented_header_bound_is_the_effective_one(gateway: testing.RunningGateway) -> None:
    """A header value of exactly the bound is proxied (the fake engine is no stricter than the
    gateway); one byte more is the gateway's own JSON 400, not a backend's text."""
    longest = connections.max_header_value(gateway.app[keys.CONNECTIONS].limits)
    assert longest >= 16 * 1024 - 1
    head = b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Long: "
    raw = await exchange(gateway.url, request(head + b"a" * longest))
    assert parse(raw)[0] == 200, raw[:300]
    raw = await exchange(gateway.url, request(head + b"a" * (longest + 1)))
    status, headers, body = parse(raw)
    assert status == 400 and headers["content-type"].startswith("application/json"), raw[:300]
    assert json.loads(body)["error"]["code"] == "malformed_request"


@pytest.mark.parametrize(
    ("data", "status", "code"),
    [
        (b"GET /v1/x%0ay HTTP/1.1\r\nHost: x", 404, "not_found"),
        (b"POST /v1/chat/completions%0a HTTP/1.1\r\nHost: x\r\nContent-Length: 2", 404, "not_found"),
        (b"OPTIONS * HTTP/1.1\r\nHost: x", 404, "not_found"),
        (b"CONNECT host:443 HTTP/1.1\r\nHost: host:443", 405, "method_not_allowed"),
        (b"CONNECT /v1/models HTTP/1.1\r\nHost: x", 405, "method_not_allowed"),
    ],
    ids=["encoded-lf", "encoded-lf-post", "options-asterisk", "connect-authority", "connect-path"],
)
async def test_targets_no_route_takes_get_the_gateways_json(
    gateway: testing.RunningGateway, data: bytes, status: int, code: str
) -> None:
    raw = await exchange(gateway.url, request(data + b"\r\nConnection: close", b"{}"))
    got, headers, body = parse(raw)
    assert got == status and headers["content-type"].startswith("application/json"), raw[:300]
    assert json.loads(body)["error"]["code"] == code
    registry = gateway.app[keys.METRICS].registry
    assert registry.get_sample_value("noctaya_gateway_rejections_total", {"reason": code}) == 1


class RawBackend:
    """A backend on a plain socket that records the bytes of every request head it reads."""

    def __init__(self) -> None:
        self.heads: list[bytes] = []

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"GET /health ") and not testing.own_read(head):
                    self.heads.append(head)
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
                )
                await writer.drain()
        writer.close()


async def test_header_values_reach_the_backend_as_received_or_are_refused() -> None:
    """UTF-8 header values reach the backend byte for byte; a value with obs-text bytes that are not
    UTF-8 (``caf\\xe9 \\xff``), which aiohttp's writer would truncate, is a JSON 400 and reaches
    no backend."""
    raw_backend = RawBackend()
    server = await asyncio.start_server(raw_backend.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with testing.GatewayStarter(backend_url=f"http://127.0.0.1:{port}") as starter:
            gateway = await starter.start(wait_ready=True)
            value = "café 日本 \u00a0x".encode()
            raw = await exchange(
                gateway.url,
                request(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Text: " + value),
            )
            assert parse(raw)[0] == 200, raw[:300]
            assert len(raw_backend.heads) == 1 and b"\r\nX-Text: " + value + b"\r\n" in raw_backend.heads[0]
            for bad in (b"caf\xe9 \xff", b"\xc3", b"ok\xed\xa0\x80"):
                raw = await exchange(
                    gateway.url,
                    request(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Text: " + bad),
                )
                status, headers, body = parse(raw)
                assert status == 400 and headers["content-type"].startswith("application/json"), raw[:300]
                assert json.loads(body)["error"]["code"] == "malformed_request"
                assert bad not in raw
            assert len(raw_backend.heads) == 1  # none of them reached the backend
    finally:
        server.close()
        await server.wait_closed()


async def test_a_trusted_proxy_is_not_bound_per_peer_and_other_peers_are(
    gateways: testing.GatewayStarter,
) -> None:
    """Behind an ingress every client shares its address: connections from ``trustedProxies`` count
    only against the overall bound; another address keeps its per-peer bound."""
    gateway = await gateways.start(
        wait_ready=True, maxConnectionsPerPeer=2, probeConnections=0, trustedProxies=["127.0.0.2/32"]
    )
    host, port = gateway.url.removeprefix("http://").split(":")
    table = gateway.app[keys.CONNECTIONS]
    head = b"GET /v1/models HTTP/1.1\r\nHost: x\r\n"
    held = [await _hold(host, int(port), source="127.0.0.2", head=head) for _ in range(5)]
    others = [await _hold(host, int(port), source="127.0.0.3", head=head) for _ in range(3)]
    try:
        await gateway.wait_for(lambda: table.open == 7 and table.refused == 1)
        async with asyncio.timeout(5):
            assert await others[2][0].read() == b""  # the third from an ordinary peer: closed at once
    finally:
        for _, writer in [*held, *others]:
            writer.close()
