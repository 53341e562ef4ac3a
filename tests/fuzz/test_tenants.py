"""Fuzz tier: generated tenant keys, over real sockets.

Deterministic and bounded as the rest of the tier. Two cold gateways (the backend never ready) run on
one event loop in a background thread for the whole module: one tells tenants apart by a header,
one by peer, both trusting 127.0.0.1 as a proxy in front (so ``X-Forwarded-For`` is read).

Aspects: for any tenant header value and any ``X-Forwarded-For`` list (addresses in every form,
garbage, too many hops, the marker) a held request is queued under one tenant key that is bounded,
has no line break, and is the peer's when the peer decides; or it is refused with the gateway's
JSON 400, never the marker; once its client leaves nothing is left (no ticket, no tenant).
"""

from __future__ import annotations

import json
import select
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noctaya.gateway import admission, handler, testing

MARK = b"QZXFUZZ"
FUZZ = settings(
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
LINE_BREAKS = {0, 10, 13}


class Servers:
    loop: testing.BackgroundLoop
    by_header: testing.RunningGateway
    by_peer: testing.RunningGateway


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    servers = Servers()
    servers.loop = testing.BackgroundLoop(name="fuzz-tenants")
    stack: list[testing.GatewayStarter] = []

    async def start() -> None:
        # nothing listens on port 9 of loopback: never ready, every request is held
        starter = testing.GatewayStarter(backend_url="http://127.0.0.1:9")
        await starter.__aenter__()
        stack.append(starter)
        cold: dict[str, Any] = {
            "activationTimeout": "30s",
            "headerTimeout": "1s",
            "keepAliveTimeout": "200ms",
            "tenantHeader": "X-Team",
            "trustedProxies": ["127.0.0.1/32"],
            "maxTenants": 4,
        }
        servers.by_header = await starter.start(**cold)
        servers.by_peer = await starter.start(**cold, tenantKey="peer")

    async def stop() -> None:
        for starter in stack:
            await starter.__aexit__(None, None, None)

    servers.loop.run(start())
    try:
        yield servers
    finally:
        servers.loop.run(stop())
        servers.loop.close()


HEADER_VALUES = st.one_of(
    st.text(max_size=300).map(lambda t: t.encode()),
    st.binary(max_size=300),
    st.just(b"t" * 5000),
    st.binary(max_size=20).map(lambda b: b + MARK),
).filter(lambda b: not LINE_BREAKS & set(b))
HOPS = st.one_of(
    st.sampled_from([b"203.0.113.9", b"127.0.0.1", b"::ffff:10.0.0.1", b"[2001:db8::1]:443",
                     b"2001:db8::5", b"fe80::1%eth0", b"10.0.0.1:80", b"unknown", b"", MARK]),
    st.binary(max_size=40),
)  # fmt: skip
FORWARDED = st.one_of(st.none(), st.lists(HOPS, max_size=40).map(lambda hops: b", ".join(hops))).filter(
    lambda b: b is None or not LINE_BREAKS & set(b)
)


def read_answer(sock: socket.socket) -> tuple[bytes, bytes]:
    raw = b""
    while b"\r\n\r\n" not in raw:
        chunk = sock.recv(65536)
        assert chunk, raw
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    length = next(
        int(line[15:]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk, head
        body += chunk
    return head, body


@FUZZ
@given(team=st.one_of(st.none(), HEADER_VALUES), forwarded=FORWARDED, by_peer=st.booleans())
def test_any_tenant_key(servers: Servers, team: bytes | None, forwarded: bytes | None, by_peer: bool) -> None:
    gateway = servers.by_peer if by_peer else servers.by_header
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    if team is not None:
        head += b"X-Team: " + team + b"\r\n"
    if forwarded is not None:
        head += b"X-Forwarded-For: " + forwarded + b"\r\n"

    async def tenants_held() -> dict[str, int]:
        return gateway.admission.queued_by_tenant()

    with socket.create_connection(("127.0.0.1", int(gateway.url.rsplit(":", 1)[1])), timeout=10) as sock:
        sock.sendall(head + b"Content-Length: 2\r\n\r\n{}")
        tenants: dict[str, int] | None = None
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # held (a ticket), or answered at once (readable)
            if select.select([sock], [], [], 0.005)[0]:
                break
            if held := servers.loop.run(tenants_held()):
                tenants = held
                break
        else:
            raise AssertionError("neither held nor answered")
        if tenants is None:  # refused: a header the gateway does not take (not UTF-8, too long)
            answer, body = read_answer(sock)
            assert MARK not in answer + body
            assert int(answer.split(b" ", 2)[1]) == 400, answer
            assert {"message", "type", "code"} <= set(json.loads(body)["error"])
        else:
            ((tenant, count),) = tenants.items()
            assert count == 1
            assert tenant != admission.OVERFLOW_TENANT  # one tenant waits: far below maxTenants
            assert len(tenant.encode("utf-8", "surrogatepass")) <= handler.MAX_TENANT_BYTES + len("peer:")
            assert not {"\r", "\n", "\x00"} & set(tenant)
            if by_peer or team is None or not team:
                assert tenant.startswith("peer:") or tenant == "", tenant
    servers.loop.run(gateway.wait_idle(within=10))
    assert gateway.admission.tenants == 0
