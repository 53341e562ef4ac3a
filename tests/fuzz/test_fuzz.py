"""Fuzz tier: generated hostile input at the three places outside bytes enter, over real sockets.

Deterministic and bounded: Hypothesis with ``derandomize=True`` (the examples follow from the test's
source, not from a seed or a database), no example database, and a fixed number of examples per
target. The gateway, the aggregate scaler and a fake engine run on one event loop in a background
thread for the whole module; each example is sent with plain blocking sockets.

Aspects: for any bytes on the gateway's port — mutations of valid requests (request line, headers,
framing, bodies, targets no route takes, header values that are not UTF-8) as well as raw noise —
every answer is a parseable HTTP response whose errors are OpenAI-shaped JSON, the marker the input
carries never comes back, and ``/healthz`` still answers; whatever follows a malformed request on
its connection is never parsed (one error, then closed); for any sequence of connections held from
rotating addresses, probes and other requests, the connection bounds hold and every probe is
answered;
for any report body the intake answers one of its documented statuses with typed JSON and the sum
stays within its bounds; for any bytes as a gRPC request message every method answers OK or
INVALID_ARGUMENT (never UNKNOWN or INTERNAL) and the scaler keeps serving.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import socket
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noctaya.contract import scaler as scaler_contract
from noctaya.dev import fake_engine
from noctaya.gateway import keys, testing
from noctaya.scaler import aggregate

MARK = b"QZXFUZZ"


def request(head: bytes, body: bytes = b"") -> bytes:
    return head + b"\r\n\r\n" + body


TOKEN = "fuzz-token-0123456789abcdef"
FUZZ = settings(
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class Servers:
    gateway_port: int
    report_port: int
    grpc_port: int
    #: a gateway with few connections, a probe reserve of 2 and one connection per peer
    small_port: int
    small: testing.RunningGateway


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Servers]:
    token = pathlib.Path(tmp_path_factory.mktemp("fuzz")) / "token"
    token.write_text(TOKEN)
    loop = testing.BackgroundLoop(name="fuzz-loop")
    servers = Servers()
    stack: list[Any] = []

    async def start() -> None:
        engine = fake_engine.running(fake_engine.FakeEngine(tokens=2))
        running = await engine.__aenter__()
        stack.append(engine)
        starter = testing.GatewayStarter(backend_url=running.url)
        await starter.__aenter__()
        stack.append(starter)
        gateway = await starter.start(
            wait_ready=True, headerTimeout="1s", keepAliveTimeout="200ms", maxBodyBytes=65536
        )
        servers.gateway_port = int(gateway.url.rsplit(":", 1)[1])
        servers.small = await starter.start(
            wait_ready=True,
            headerTimeout="1s",
            keepAliveTimeout="200ms",
            maxConnections=6,
            maxConnectionsPerPeer=1,
            probeConnections=2,
        )
        servers.small_port = int(servers.small.url.rsplit(":", 1)[1])
        config = scaler_contract.build_config(
            {
                "service": {"name": "qwen", "namespace": "ai"},
                "grpcListen": "127.0.0.1:0",
                "reportListen": "127.0.0.1:0",
                "tokenFile": str(token),
                "maxMembers": 4,
                "maxMemberDemand": 10,
                "keepAliveTimeout": "200ms",
                "headerTimeout": "1s",
            }
        )
        scaler = aggregate.AggregateScaler(config=config)
        await scaler.__aenter__()
        stack.append(scaler)
        servers.report_port, servers.grpc_port = scaler.report_port, scaler.grpc_port

    async def stop() -> None:
        for item in reversed(stack):
            await item.__aexit__(None, None, None)

    loop.run(start())
    try:
        yield servers
    finally:
        loop.run(stop())
        loop.close()


def exchange(port: int, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(data)  # the server closes once idle (a short keep-alive and header timeout)
        chunks: list[bytes] = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def responses(raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """The HTTP/1.x responses in ``raw`` (Content-Length framed, as both servers send them)."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b"\r\n\r\n")
        assert sep, raw[:200]
        lines = head.decode("latin-1").split("\r\n")
        assert lines[0].startswith("HTTP/1."), lines[0]
        status = int(lines[0].split()[1])
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        if "content-length" in headers:
            length = int(headers["content-length"])
            body, raw = rest[:length], rest[length:]
        else:  # a streamed answer: the rest of the connection
            body, raw = rest, b""
        out.append((status, headers, body))
    return out


METHODS = st.sampled_from(
    [b"GET", b"POST", b"PUT", b"DELETE", b"HEAD", b"OPTIONS", b"PATCH", b"BREW", b"G\x00T", b"CONNECT"]
)
PATHS = st.sampled_from(
    [b"/healthz", b"/v1/chat/completions", b"/v1/models", b"/metrics", b"/noctaya/queue", b"/v1/../x", b"*",
     b"/v1/x%0ay", b"/v1/%0d%1b%07", b"host:443", b"/noctaya/%0a"]
)  # fmt: skip
VERSIONS = st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/9.9", b"HTTP/1.x", b"", b"HTTP/2.0"])
HEADER_NAMES = st.sampled_from(
    [b"Host", b"Content-Length", b"Transfer-Encoding", b"Content-Type", b"Expect", b"Content-Encoding",
     b"Authorization", b"Connection", b"X-Forwarded-Host", b"X" + MARK]
)  # fmt: skip
NOISE = st.binary(max_size=64).map(lambda b: b + MARK)
HEADER_VALUES = st.one_of(
    st.sampled_from(
        [
            b"chunked",
            b"gzip",
            b"100-continue",
            b"application/json",
            b"close",
            b"5",
            b"-1",
            b"x",
            b"caf\xe9 \xff",
            "日本".encode(),
            b"\xc3",
        ]
    ),
    NOISE,
    st.integers(min_value=0, max_value=10**30).map(lambda n: str(n).encode()),
)


@st.composite
def http_requests(draw: st.DrawFn) -> bytes:
    line = draw(METHODS) + b" " + draw(PATHS) + draw(st.sampled_from([b"", MARK])) + b" " + draw(VERSIONS)
    headers = draw(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=6))
    separator = draw(st.sampled_from([b"\r\n", b"\n", b"\r"]))
    body = draw(st.one_of(st.just(b""), NOISE, st.just(b"5\r\nhello\r\n0\r\n\r\n")))
    head = separator.join([line, *(name + b": " + value for name, value in headers)])
    request = head + separator + separator + body
    return draw(st.one_of(st.just(request), st.just(request * 2), NOISE))


@FUZZ
@given(data=http_requests())
def test_any_bytes_on_the_gateway_port(servers: Servers, data: bytes) -> None:
    raw = exchange(servers.gateway_port, data)
    assert MARK not in raw
    for status, headers, body in responses(raw):
        if status >= 400 and body:
            assert headers.get("content-type", "").startswith("application/json"), (status, body[:200])
            error = json.loads(body)["error"]
            assert {"message", "type", "code"} <= set(error)
    assert (
        b" 200 "
        in exchange(
            servers.gateway_port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        ).split(b"\r\n")[0]
    )


MALFORMED_HEADS = st.sampled_from(
    [b"GARBAGE\r\n\r\n", b"\x00" * 300, b"GET / HTTP/1.1\r\nX-A: \x00\r\n\r\n",
     b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", b"GET /healthz HTTP/1.1\r\nX-A: caf\xe9\r\n\r\n",
     b"CONNECT h:1 HTTP/1.1\r\n\r\n"]
)  # fmt: skip
VALID = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"


@FUZZ
@given(head=MALFORMED_HEADS, tail=st.lists(st.one_of(st.just(VALID), st.binary(max_size=2048)), max_size=8))
def test_after_a_parse_error_nothing_more_is_parsed(servers: Servers, head: bytes, tail: list[bytes]) -> None:
    """Whatever follows a malformed request on its connection (valid requests included) is never
    parsed: one JSON error, then the connection closes."""
    raw = exchange(servers.gateway_port, head + b"".join(tail))
    ((status, headers, body),) = responses(raw)
    assert status in (400, 405) and headers["content-type"].startswith("application/json")
    assert json.loads(body)["error"]["code"] in ("malformed_request", "method_not_allowed")


CHAT = b'{"model":"m","messages":[{"role":"user","content":"hi"}]}'
PIPELINED = {
    "probe": (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", b'"status"'),
    "models": (b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n", b'"data"'),
    "chat": (
        request(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d" % len(CHAT),
            CHAT,
        ),
        b'"choices"',
    ),
}


@settings(parent=FUZZ, max_examples=60)
@given(
    kinds=st.lists(st.sampled_from(sorted(PIPELINED)), min_size=1, max_size=8),
    cuts=st.lists(st.integers(min_value=1, max_value=2000), max_size=12),
)
def test_requests_split_and_pipelined_anyhow_are_answered_in_order(
    servers: Servers, kinds: list[str], cuts: list[int]
) -> None:
    """Requests sent one after another on one connection, in pieces cut anywhere (the express lane
    taking some, holding what comes meanwhile, aiohttp's path the rest), are answered one each, in
    the order sent; the last one asks to close."""
    data = b"".join(PIPELINED[kind][0] for kind in kinds)
    data += b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    points = sorted({cut % len(data) for cut in cuts} - {0})
    pieces = [data[start:end] for start, end in zip([0, *points], [*points, len(data)], strict=True)]
    with socket.create_connection(("127.0.0.1", servers.gateway_port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for piece in pieces:
            sock.sendall(piece)
            time.sleep(0.001)  # most pieces arrive as reads of their own (the answers do not depend on it)
        chunks: list[bytes] = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    answers = responses(b"".join(chunks))
    assert len(answers) == len(kinds) + 1, [status for status, _, _ in answers]
    for kind, (status, _, body) in zip([*kinds, "probe"], answers, strict=True):
        assert status == 200, (kind, status, body[:200])
        assert PIPELINED[kind][1] in body, (kind, body[:200])


ACTIONS = st.lists(
    st.tuples(
        st.sampled_from(["hold", "probe", "request", "release"]), st.integers(min_value=2, max_value=9)
    ),
    min_size=1,
    max_size=24,
)


@settings(parent=FUZZ, max_examples=40)
@given(actions=ACTIONS)
def test_the_probe_is_answered_whatever_holds_the_connections(
    servers: Servers, actions: list[tuple[str, int]]
) -> None:
    """Any sequence of connections held silently from rotating loopback addresses, probes, other
    requests and releases: the connection bound holds, the reserve holds at most its share, and every
    probe is answered 200."""
    table = servers.small.app[keys.CONNECTIONS]
    limits = table.limits
    held: list[socket.socket] = []
    try:
        for action, address in actions:
            if action == "hold":
                sock = socket.create_connection(
                    ("127.0.0.1", servers.small_port), timeout=10, source_address=(f"127.0.0.{address}", 0)
                )
                sock.sendall(b"GET /v1/models HTTP/1.1\r\n")
                held.append(sock)
            elif action == "probe":
                ((status, _, _),) = responses(
                    exchange(
                        servers.small_port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
                    )
                )
                assert status == 200
            elif action == "request":
                with socket.create_connection(
                    ("127.0.0.1", servers.small_port), timeout=10, source_address=(f"127.0.0.{address}", 0)
                ) as sock:
                    sock.sendall(b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    raw = b""
                    with contextlib.suppress(ConnectionError):
                        while chunk := sock.recv(65536):
                            raw += chunk
                for status, headers, _ in responses(raw):
                    assert status in (200, 503) and headers["content-type"].startswith("application/json")
            elif held:
                held.pop(address % len(held)).close()
            assert table.open <= limits.max_connections
            assert table.reserve_open <= limits.probe_connections
    finally:
        for sock in held:
            sock.close()


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
REPORTS = st.one_of(
    st.fixed_dictionaries(
        {
            "service": st.one_of(st.just({"name": "qwen", "namespace": "ai"}), JSON_VALUES),
            "member": st.one_of(st.text(max_size=140), st.sampled_from(["gw-1", "gw-2", "gw-1\n", "gw/1"])),
            "sequence": st.one_of(st.integers(min_value=-5, max_value=2**64), JSON_VALUES),
        },
        optional={
            "demand": st.one_of(st.integers(min_value=-5, max_value=50), JSON_VALUES),
            "withdraw": JSON_VALUES,
        },
    ).map(lambda d: json.dumps(d).encode()),
    st.binary(max_size=300),
)
REPORT_STATUSES = {200, 400, 401, 409, 413, 422, 429, 503}


@FUZZ
@given(body=REPORTS, authorized=st.booleans())
def test_any_report_body(servers: Servers, body: bytes, authorized: bool) -> None:
    auth = f"Authorization: Bearer {TOKEN}\r\n".encode() if authorized else b""
    request = (
        b"POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + auth
        + b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
    )  # fmt: skip
    ((status, headers, reply),) = responses(exchange(servers.report_port, request))
    assert status in REPORT_STATUSES
    document = json.loads(reply)
    if status == 200:
        assert 0 <= document["demand"] <= 4 * 10
    else:
        assert document["error"]["type"] == "report_refused" and document["error"]["code"]
        assert headers["content-type"].startswith("application/json")


GRPC_METHODS = ["IsActive", "GetMetricSpec", "GetMetrics", "StreamIsActive"]


@FUZZ
@given(method=st.sampled_from(GRPC_METHODS), payload=st.binary(max_size=200))
def test_any_grpc_message(servers: Servers, method: str, payload: bytes) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{servers.grpc_port}") as channel:
        path = f"/externalscaler.ExternalScaler/{method}"
        identity = {"request_serializer": lambda raw: raw, "response_deserializer": lambda raw: raw}
        try:
            if method == "StreamIsActive":
                call = channel.unary_stream(path, **identity)(payload, timeout=5)
                next(iter(call))
                call.cancel()
            else:
                channel.unary_unary(path, **identity)(payload, timeout=5)
        except grpc.RpcError as exc:
            code = exc.code()
            assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.CANCELLED), (
                code,
                exc.details(),
            )
