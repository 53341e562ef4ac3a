"""Every way into the fair cold queue, and the one that stays out, through real sockets.

Aspects: a request held again after a refused connect (a Service with no ready endpoint) takes a
slot of its own tenant, keeps its place by arrival within that tenant (a newcomer under its share
displaces the tenant's later arrival, not it), and is counted, logged ``cold`` with its wait and
answered ``Noctaya-Cold-Start`` like any cold request; at the admission level it goes ahead of its
tenant's later arrivals, and a tenant that had nothing else waiting gets the next turn. A cold route
(``GET /v1/models`` while cold) is answered with the queue full and every tenant over its share: it
takes no slot, displaces nobody and opens no lease. A WebSocket held while cold counts in its
tenant's share like any other request (its tenant's newest is the one displaced), is upgraded once
the backend is ready, its access-log line is written when it closes (``"upgrade": "websocket"``),
and a socket over ``websocketMaxOpen`` gets the measured Retry-After.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from noctaya.dev import fake_engine
from noctaya.gateway import activation, admission, demand, keys, testing
from tests.gateway.conftest import behind_a_service

CHAT: dict[str, object] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


async def metrics_text(http: aiohttp.ClientSession, gateway: testing.RunningGateway) -> str:
    async with http.get(gateway.url + "/metrics") as response:
        return await response.text()


def sample(text: str, name: str) -> float:
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert found is not None, name
    return float(found.group(1))


async def queue(http: aiohttp.ClientSession, gateway: testing.RunningGateway) -> dict[str, Any]:
    async with http.get(gateway.url + "/noctaya/queue") as response:
        document: dict[str, Any] = await response.json()
        return document


def access_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "noctaya.gateway.access"]


async def test_a_request_held_again_takes_its_tenants_slot_and_keeps_its_place(
    http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    """Tenant a's request is routed warm, its connect is refused, it is held again in a's share; a's
    next request queues behind it; b's arrival (under its share) displaces a's newest (429), not the
    one held again; once the endpoint is back, the held-again request is served as a cold one."""
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    async with behind_a_service(maxQueue=2, tenantHeader="X-Team", accessLog="on") as (svc, gateway, port):
        url = gateway.url + "/v1/chat/completions"
        before = await metrics_text(http, gateway)
        svc.remove("e")
        assert gateway.app[keys.READINESS].ready  # not noticed yet: the first request goes warm

        async def post(team: str) -> aiohttp.ClientResponse:
            return await http.post(url, json=CHAT, headers={"X-Team": team})

        again = asyncio.create_task(post("a"))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        assert not gateway.app[keys.READINESS].ready
        assert gateway.lease_state is activation.LeaseState.ACTIVATING
        assert gateway.admission.queued_by_tenant() == {"a": 1}
        later = asyncio.create_task(post("a"))
        await gateway.wait_for(lambda: gateway.admission.queued == 2)
        assert (await queue(http, gateway))["tenants"] == 1
        other = asyncio.create_task(post("b"))
        async with await later as refused:  # a's newest arrival, not the request held again
            assert refused.status == 429 and "Retry-After" in refused.headers
            assert (await refused.json())["error"]["code"] == "queue_full"
        assert gateway.admission.queued_by_tenant() == {"a": 1, "b": 1}
        assert not again.done()

        svc.add(name="e", port=port)
        for task in (again, other):
            async with await task as response:
                assert response.status == 200
                assert (await response.json())["choices"][0]["message"]["content"] == "tok tok"
                assert float(response.headers["Noctaya-Cold-Start"]) >= 0
        await gateway.wait_idle()
        after = await metrics_text(http, gateway)
        admitted = 'noctaya_gateway_admitted_total{path="cold"}'
        assert sample(after, admitted) - sample(before, admitted) == 2  # both counted as cold admissions
        lines = sorted(access_lines(caplog), key=lambda line: line["status"])
        assert [(line["status"], line["path"]) for line in lines] == [
            (200, "cold"),
            (200, "cold"),
            (429, "cold"),
        ]
        assert all(line["wait"] is not None and line["wait"] >= 0 for line in lines if line["status"] == 200)


async def test_a_request_held_again_goes_ahead_of_its_tenants_later_arrivals() -> None:
    """Within its tenant it keeps its place by arrival; a tenant with nothing else waiting (its turn
    was given and lost) is granted next; its deadline runs from its first arrival."""
    a = admission.Admission(
        max_queue=6, max_in_flight=1, demand=demand.Demand(), max_wait=5.0, wait_expired=TimeoutError
    )
    loop = asyncio.get_running_loop()
    b_first = a.enqueue(tenant="b")
    a_later = a.enqueue(tenant="a")
    a_again = a.enqueue(tenant="a", arrived_at=loop.time() - 1.0)
    c_first = a.enqueue(tenant="c")
    d_again = a.enqueue(tenant="d", arrived_at=loop.time() - 0.5)
    assert a.queued_by_tenant() == {"d": 1, "b": 1, "a": 2, "c": 1}  # d at the head of the ring
    order = []
    a.set_ready(True)
    for _ in range(5):
        granted = next(
            t for t in (b_first, a_later, a_again, c_first, d_again) if t.future.done() and t not in order
        )
        order.append(granted)
        a.leave(granted)
    assert order == [d_again, b_first, a_again, c_first, a_later]


async def test_the_deadline_of_a_request_held_again_runs_from_its_arrival() -> None:
    a = admission.Admission(
        max_queue=4, max_in_flight=1, demand=demand.Demand(), max_wait=2.0, wait_expired=TimeoutError
    )
    loop = asyncio.get_running_loop()
    fresh = a.enqueue(tenant="a")  # its deadline is 2 s away
    again = a.enqueue(tenant="a", arrived_at=loop.time() - 1.95)  # its own, 50 ms away
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(again.future, 5)
    assert not fresh.future.done() and a.queued_by_tenant() == {"a": 1}
    a.leave(fresh)


async def test_a_cold_route_is_answered_with_the_fair_queue_full(
    http: aiohttp.ClientSession, reserve_port: Callable[[], int], caplog: pytest.LogCaptureFixture
) -> None:
    """One slot, held by tenant a: a's and b's ``GET /v1/models`` are answered from what the gateway
    knows (no 429, nobody displaced, no slot, no lease opened by them), while another request of b
    would still displace a."""
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    async with testing.GatewayStarter(backend_url=f"http://127.0.0.1:{reserve_port()}") as starter:
        gateway = await starter.start(
            maxQueue=1, tenantHeader="X-Team", servedModel="qwen-cpu", accessLog="on", activationTimeout="5s"
        )
        held = asyncio.create_task(
            http.post(gateway.url + "/v1/chat/completions", json=CHAT, headers={"X-Team": "a"})
        )
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        for team in ("a", "b", "c"):
            async with http.get(gateway.url + "/v1/models", headers={"X-Team": team}) as response:
                assert response.status == 200
                assert [m["id"] for m in (await response.json())["data"]] == ["qwen-cpu"]
        state = await queue(http, gateway)
        assert state["queued"] == 1 and state["tenants"] == 1 and state["lease"]["state"] == "activating"
        assert not held.done()
        text = await metrics_text(http, gateway)
        assert sample(text, 'noctaya_gateway_rejections_total{reason="queue_full"}') == 0
        assert sample(text, 'noctaya_gateway_activation_events_total{event="started"}') == 1
        models = [line for line in access_lines(caplog) if line["route"] == "models"]
        assert [(line["status"], line["path"], line["wait"]) for line in models] == [(200, "cold", None)] * 3
        held.cancel()
        await asyncio.gather(held, return_exceptions=True)
        await gateway.wait_idle()


async def test_a_held_websocket_counts_in_its_tenants_share(
    http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    """Two slots: a's WebSocket and a's request fill them; b's WebSocket displaces a's newest (the
    request, 429); once ready both sockets are upgraded and echo; a third is over ``websocketMaxOpen``
    and its Retry-After is the measured one (the floor here, not the fixed fallback)."""
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    engine = fake_engine.FakeEngine(ready_override=False)
    async with (
        fake_engine.running(engine) as running,
        testing.GatewayStarter(backend_url=running.url) as starter,
    ):
        gateway = await starter.start(
            maxQueue=2,
            tenantHeader="X-Team",
            websocketMaxOpen=2,
            retryAfter="2s",
            retryAfterMin="7s",
            accessLog="on",
        )
        realtime = gateway.url + "/v1/realtime"
        socket_a = asyncio.create_task(http.ws_connect(realtime, headers={"X-Team": "a"}))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        request_a = asyncio.create_task(
            http.post(gateway.url + "/v1/chat/completions", json=CHAT, headers={"X-Team": "a"})
        )
        await gateway.wait_for(lambda: gateway.admission.queued == 2)
        assert gateway.admission.queued_by_tenant() == {"a": 2}
        socket_b = asyncio.create_task(http.ws_connect(realtime, headers={"X-Team": "b"}))
        async with await request_a as refused:
            assert refused.status == 429 and (await refused.json())["error"]["code"] == "queue_full"
        assert gateway.admission.queued_by_tenant() == {"a": 1, "b": 1}
        assert not socket_a.done()

        engine.ready_override = True
        async with await socket_a as ws_a, await socket_b as ws_b:
            for ws, text in ((ws_a, "from a"), (ws_b, "from b")):
                await ws.send_str(text)
                assert await ws.receive_str(timeout=5) == text
            assert (await queue(http, gateway))["inFlight"] == 2
            with pytest.raises(aiohttp.WSServerHandshakeError) as full:
                await http.ws_connect(realtime, headers={"X-Team": "c"})
            assert full.value.status == 429
            assert full.value.headers is not None and full.value.headers["Retry-After"] == "7"
        await gateway.wait_idle()
        upgraded = [line for line in access_lines(caplog) if line.get("upgrade") == "websocket"]
        assert sorted((line["status"], line["path"]) for line in upgraded) == [(101, "cold"), (101, "cold")]
        assert all(line["wait"] is not None for line in upgraded)
        assert [line["code"] for line in access_lines(caplog) if line["status"] == 429] == [
            "queue_full",
            "websockets_full",
        ]
