"""The fair cold queue, proven over arbitrary arrival sequences (hypothesis, deterministic).

Aspects: a refusal (QueueFull) or a displacement always hits a tenant holding at least as many slots
as any other, so a tenant under its share is never refused; grants go round-robin over the waiting
tenants and in arrival order within one, so between two grants of a waiting tenant every other tenant
gets at most one (no starvation); the counts always equal the tickets actually held and everything
comes back once the requests are over (no slot leak), also when a queued client disconnects and its
handler only leaves later (its cancelled ticket is passed over, never granted); demand is queued +
in-flight as before; the number of tenants told apart is bounded. Plus the same through a real
gateway: the over-share tenant gets the 429; with API keys the key (kept as a digest) is the tenant,
whatever the tenant header says.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import pathlib
from collections.abc import Callable
from typing import Any

import aiohttp
import hypothesis
import pytest
from hypothesis import strategies as st

from noctaya.gateway import admission, demand, testing

DETERMINISTIC = hypothesis.settings(
    derandomize=True, database=None, deadline=None, max_examples=300, print_blob=False
)

Op = tuple[str, int]
"""("arrive", tenant) | ("leave", index of a live ticket) | ("grant", in-flight slots) | ("finish", i)
| ("disconnect", i): a queued client leaves, its future is cancelled and its handler has yet to run
| ("reap", i): such a handler runs at last and calls ``leave``."""

operations = st.lists(
    st.one_of(
        st.tuples(st.just("arrive"), st.integers(0, 5)),
        st.tuples(st.just("leave"), st.integers(0, 40)),
        st.tuples(st.just("grant"), st.integers(1, 3)),
        st.tuples(st.just("finish"), st.integers(0, 40)),
        st.tuples(st.just("disconnect"), st.integers(0, 40)),
        st.tuples(st.just("reap"), st.integers(0, 40)),
    ),
    max_size=120,
)


class Displaced(Exception):
    pass


def owner(ticket: admission.Ticket) -> str:
    """The tenant a ticket belongs to: its own, also inside the overflow tenant."""
    return ticket.tenant if ticket.member is None else ticket.member


@dataclasses.dataclass
class Model:
    """What the test itself knows: the tickets it holds and which tenant each belongs to."""

    queued: list[admission.Ticket] = dataclasses.field(default_factory=list)
    granted: list[admission.Ticket] = dataclasses.field(default_factory=list)
    grants: list[admission.Ticket] = dataclasses.field(default_factory=list)
    gone: list[admission.Ticket] = dataclasses.field(default_factory=list)  # cancelled, not yet left
    arrived: list[admission.Ticket] = dataclasses.field(default_factory=list)  # every ticket, in order

    def lingering(self) -> list[admission.Ticket]:
        """Tickets of clients that left which still hold their slot (not yet passed over)."""
        return [t for t in self.gone if t.state is admission.TicketState.QUEUED]

    def slots(self) -> list[admission.Ticket]:
        return self.queued + self.lingering()

    def held(self, tenant: str) -> int:
        """Slots of ``tenant`` itself, wherever it waits (its own place in the ring, or the overflow)."""
        return sum(1 for t in self.slots() if owner(t) == tenant)

    def collect(self) -> None:
        """Move tickets whose future resolved: granted, or displaced with the 429."""
        for ticket in list(self.queued):
            if ticket.future.done():
                self.queued.remove(ticket)
                if ticket.future.exception() is None:
                    self.granted.append(ticket)
                    self.grants.append(ticket)
                else:
                    assert isinstance(ticket.future.exception(), Displaced)


async def run(ops: list[Op], *, max_queue: int, max_tenants: int) -> None:
    d = demand.Demand()
    a = admission.Admission(
        max_queue=max_queue, max_in_flight=3, demand=d, max_tenants=max_tenants, displaced=Displaced
    )
    model = Model()
    a.max_in_flight = 0  # nothing granted until a "grant" step opens slots
    a.set_ready(True)
    for op, arg in ops:
        before = {owner(t): model.held(owner(t)) for t in model.slots()}
        if op == "arrive":
            # README: "when the queue is full, a tenant holding fewer slots than the biggest holder
            # takes the newest slot of that holder (who gets the 429), and a tenant that already
            # holds the most is refused itself" -- for every tenant, told apart in the ring or not
            tenant = f"t{arg}"
            mine = model.held(tenant)
            slots_before = list(model.slots())
            try:
                ticket = a.enqueue(tenant=tenant)
            except admission.QueueFull:
                # refused: the queue is full and no tenant holds more than the arrival's tenant
                assert len(slots_before) == max_queue
                assert all(count <= mine for count in before.values())
                assert mine > 0  # a tenant holding nothing is never refused
                # so it is over its share: with n tenants waiting, share <= max_queue / n
                assert mine + 1 > max_queue / max(1, len(before))
            else:
                assert owner(ticket) == tenant
                assert ticket.tenant in (tenant, admission.OVERFLOW_TENANT)
                model.queued.append(ticket)
                model.arrived.append(ticket)
                model.collect()
                if len(slots_before) == max_queue:  # someone was displaced: the biggest holder
                    lost = [t for t in slots_before if t not in model.slots()]
                    assert len(lost) == 1
                    victim = owner(lost[0])
                    assert victim != tenant and before[victim] == max(before.values()) > mine
                    # its newest ticket
                    assert (
                        lost[0] is [t for t in model.arrived if owner(t) == victim and t in slots_before][-1]
                    )
        elif op == "leave" and model.queued:
            a.leave(model.queued.pop(arg % len(model.queued)))
        elif op == "disconnect" and model.queued:
            gone = model.queued.pop(arg % len(model.queued))
            gone.future.cancel()
            model.gone.append(gone)
        elif op == "reap" and model.gone:
            a.leave(model.gone.pop(arg % len(model.gone)))
        elif op == "grant":
            a.max_in_flight += arg
            a.set_ready(True)
            model.collect()
        elif op == "finish" and model.granted:
            ticket = model.granted.pop(arg % len(model.granted))
            a.leave(ticket)
            a.max_in_flight -= 1
            model.collect()
        # the counts are the tickets held: no slot leaks, none is counted twice
        assert a.queued == len(model.slots()) <= max_queue
        assert a.in_flight == len(model.granted)
        assert d.demand() == a.queued + a.in_flight
        assert a.tenants <= max_tenants + 1  # the named ones and the overflow tenant
        assert a.queued_by_tenant().get(admission.OVERFLOW_TENANT, 0) == sum(
            1 for t in model.slots() if t.member is not None
        )
        assert sum(a.queued_by_tenant().values()) == a.queued
    check_round_robin(model.grants)
    # drain: every waiter is eventually served (no starvation), then everything comes back
    a.max_in_flight = 1_000_000
    a.set_ready(True)
    model.collect()
    assert not model.queued and not model.lingering()  # a gone client's ticket is passed over
    for gone in model.gone:
        a.leave(gone)  # its handler runs at last: nothing more to give back
    assert a.in_flight == len(model.granted)
    for ticket in model.granted:
        a.leave(ticket)
    assert a.idle and a.tenants == 0 and d.demand() == 0


def check_round_robin(grants: list[admission.Ticket]) -> None:
    """Within a tenant grants follow arrival order."""
    by_tenant: dict[str, list[float]] = {}
    for ticket in grants:
        by_tenant.setdefault(ticket.tenant, []).append(ticket.enqueued_at)
    for times in by_tenant.values():
        assert times == sorted(times)


@DETERMINISTIC
@hypothesis.given(ops=operations, max_queue=st.integers(1, 8), max_tenants=st.integers(1, 4))
def test_fairness_and_no_slot_leak_over_any_arrival_sequence(
    ops: list[Op], max_queue: int, max_tenants: int
) -> None:
    asyncio.run(run(ops, max_queue=max_queue, max_tenants=max_tenants))


async def grant_order(arrivals: list[int], *, max_queue: int) -> list[str]:
    a = admission.Admission(max_queue=max_queue, max_in_flight=1, demand=demand.Demand())
    tickets = []
    for tenant in arrivals:
        with contextlib.suppress(admission.QueueFull):
            tickets.append(a.enqueue(tenant=f"t{tenant}"))
    waiting = [t for t in tickets if not t.future.done()]  # displaced ones are over already
    order: list[str] = []
    a.set_ready(True)
    while waiting:
        granted = [t for t in waiting if t.future.done()]
        assert len(granted) == 1  # one slot: exactly one grant at a time
        order.append(granted[0].tenant)
        waiting.remove(granted[0])
        a.leave(granted[0])
    return order


@DETERMINISTIC
@hypothesis.given(arrivals=st.lists(st.integers(0, 4), max_size=60), max_queue=st.integers(1, 30))
def test_no_tenant_waits_behind_more_than_one_grant_per_other_tenant(
    arrivals: list[int], max_queue: int
) -> None:
    """Between two grants of a tenant that still waits, no other tenant is granted twice."""
    order = asyncio.run(grant_order(arrivals, max_queue=max_queue))
    for index, tenant in enumerate(order):
        later = order[index + 1 :]
        if tenant not in later:
            continue
        between = later[: later.index(tenant)]
        assert len(between) == len(set(between)), (tenant, between)


async def test_a_newcomer_displaces_the_newest_ticket_of_the_tenant_holding_the_most() -> None:
    a = admission.Admission(max_queue=4, max_in_flight=1, demand=demand.Demand(), displaced=Displaced)
    hog = [a.enqueue(tenant="hog") for _ in range(4)]
    newcomer = a.enqueue(tenant="new")
    assert isinstance(hog[-1].future.exception(), Displaced)  # the hog's newest, not its oldest
    assert not any(t.future.done() for t in hog[:-1])
    assert a.queued_by_tenant() == {"hog": 3, "new": 1}
    a.enqueue(tenant="new")  # 2 < 3: the hog still holds more
    with pytest.raises(admission.QueueFull):
        a.enqueue(tenant="new")  # 2 vs 2: the newcomer is at its share now
    a.set_ready(True)
    assert hog[0].future.done() and not newcomer.future.done()  # the ring starts with the hog
    a.leave(hog[0])
    assert newcomer.future.done()  # then the newcomer, before the hog's second ticket
    assert not hog[1].future.done()


async def test_tenants_beyond_the_bound_share_one_overflow_tenant() -> None:
    a = admission.Admission(max_queue=10, max_in_flight=1, demand=demand.Demand(), max_tenants=2)
    a.enqueue(tenant="a")
    a.enqueue(tenant="b")
    assert a.enqueue(tenant="c").tenant == admission.OVERFLOW_TENANT
    assert a.enqueue(tenant="d").tenant == admission.OVERFLOW_TENANT
    assert a.tenants == 2 + 1 and a.queued_by_tenant()[admission.OVERFLOW_TENANT] == 2


async def test_a_new_tenant_takes_a_slot_when_the_overflow_tenant_holds_the_most() -> None:
    """Two tenants told apart, the rest (c, d) in the overflow tenant, which holds the most slots
    together; a new tenant e holds nothing, so it is under its share and takes a slot: the newest
    of a tenant holding the most (c's, each holding 2), not a refusal."""
    a = admission.Admission(
        max_queue=6, max_in_flight=1, demand=demand.Demand(), max_tenants=2, displaced=Displaced
    )
    a.enqueue(tenant="a")
    a.enqueue(tenant="b")
    c = [a.enqueue(tenant="c") for _ in range(2)]
    d = [a.enqueue(tenant="d") for _ in range(2)]
    assert a.queued_by_tenant() == {"a": 1, "b": 1, admission.OVERFLOW_TENANT: 4}
    e = a.enqueue(tenant="e")
    assert (e.tenant, e.member) == (admission.OVERFLOW_TENANT, "e")
    assert isinstance(c[-1].future.exception(), Displaced)
    assert not any(t.future.done() for t in (c[0], *d))
    a.enqueue(tenant="e")  # 1 < 2: d still holds more
    assert isinstance(d[-1].future.exception(), Displaced)
    with pytest.raises(admission.QueueFull):
        a.enqueue(tenant="e")  # e holds 2 now, as much as anyone: refused itself


async def test_the_429_goes_to_the_tenant_over_its_share_through_the_gateway(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession, reserve_port: Callable[[], int]
) -> None:
    """Cold backend (never ready), two slots, tenants told apart by a header: tenant a fills the
    queue, then b's arrival displaces a's newest request, which is answered 429 queue_full."""
    gateway = await gateways.start(
        # a port held for the test with nobody listening: the backend never becomes ready
        backendUrl=f"http://127.0.0.1:{reserve_port()}",
        maxQueue=2,
        tenantHeader="X-Team",
        activationTimeout="5s",
    )
    url = gateway.url + "/v1/chat/completions"
    body = {"model": "m", "messages": []}

    async def post(team: str) -> aiohttp.ClientResponse:
        return await http.post(url, json=body, headers={"X-Team": team})

    first = asyncio.create_task(post("a"))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    second = asyncio.create_task(post("a"))
    await gateway.wait_for(lambda: gateway.admission.queued == 2)
    third = asyncio.create_task(post("b"))
    refused = await second
    assert refused.status == 429
    assert (await refused.json())["error"]["code"] == "queue_full"
    assert "Retry-After" in refused.headers
    assert gateway.admission.queued_by_tenant() == {"a": 1, "b": 1}
    fourth = await post("a")  # a holds 1, b holds 1: a's new arrival is the one refused
    assert fourth.status == 429
    for task in (first, third):
        task.cancel()
    await asyncio.gather(first, third, return_exceptions=True)
    await gateway.wait_idle()


async def test_with_api_keys_the_tenant_is_the_key_never_the_header_and_never_the_key_itself(
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    tmp_path: pathlib.Path,
    reserve_port: Callable[[], int],
) -> None:
    """Keys configured: each key is a tenant (a header cannot make one key two tenants, nor two keys
    one), and what the gateway keeps of a tenant is a digest, never the key."""
    keys = tmp_path / "keys"
    keys.write_text("sk-team-a-secret\nsk-team-b-secret\n")
    gateway = await gateways.start(
        backendUrl=f"http://127.0.0.1:{reserve_port()}",  # held, nobody listening: never ready
        maxQueue=2,
        tenantHeader="X-Team",
        apiKeyFile=str(keys),
        activationTimeout="5s",
    )
    url = gateway.url + "/v1/chat/completions"
    body = {"model": "m", "messages": []}

    async def post(key: str, team: str) -> aiohttp.ClientResponse:
        return await http.post(url, json=body, headers={"Authorization": f"Bearer {key}", "X-Team": team})

    first = asyncio.create_task(post("sk-team-a-secret", "one"))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    second = asyncio.create_task(post("sk-team-a-secret", "two"))  # same key, other header: same tenant
    await gateway.wait_for(lambda: gateway.admission.queued == 2)
    assert list(gateway.admission.queued_by_tenant().values()) == [2]
    third = asyncio.create_task(post("sk-team-b-secret", "one"))
    refused = await second  # b's arrival displaced a's newest
    assert refused.status == 429 and (await refused.json())["error"]["code"] == "queue_full"
    tenants = gateway.admission.queued_by_tenant()
    assert sorted(tenants.values()) == [1, 1]
    assert not any("secret" in tenant for tenant in tenants)
    for task in (first, third):
        task.cancel()
    await asyncio.gather(first, third, return_exceptions=True)
    await gateway.wait_idle()


@pytest.mark.parametrize("setting", ["tenantKey: peer", "trustedProxies"])
async def test_invented_tenant_header_values_make_no_tenants_when_the_peer_decides(
    gateways: testing.GatewayStarter, reserve_port: Callable[[], int], setting: str
) -> None:
    """A client inventing eight tenant header values is one tenant when the tenant is its host
    (``tenantKey: peer``), or when only a trusted proxy's header is read (its own is not); a trusted
    proxy's header still names the tenant it sets."""
    overrides: dict[str, Any] = (
        {"tenantKey": "peer"} if setting == "tenantKey: peer" else {"trustedProxies": ["127.0.0.3/32"]}
    )
    gateway = await gateways.start(
        backendUrl=f"http://127.0.0.1:{reserve_port()}",  # held, nobody listening: never ready
        tenantHeader="X-Team",
        activationTimeout="5s",
        **overrides,
    )
    url = gateway.url + "/v1/chat/completions"
    body = {"model": "m", "messages": []}

    def client(address: str) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0)))

    async with client("127.0.0.1") as attacker, client("127.0.0.2") as victim, client("127.0.0.3") as proxy:
        waiting = [
            asyncio.create_task(attacker.post(url, json=body, headers={"X-Team": f"invented-{n}"}))
            for n in range(8)
        ]
        waiting.append(asyncio.create_task(victim.post(url, json=body, headers={"X-Team": "invented-0"})))
        waiting.append(asyncio.create_task(proxy.post(url, json=body, headers={"X-Team": "team-b"})))
        await gateway.wait_for(lambda: gateway.admission.queued == 10)
        tenants = gateway.admission.queued_by_tenant()
        if setting == "tenantKey: peer":
            assert tenants == {"peer:127.0.0.1": 8, "peer:127.0.0.2": 1, "peer:127.0.0.3": 1}
        else:
            assert tenants == {"peer:127.0.0.1": 8, "peer:127.0.0.2": 1, "team-b": 1}
        for task in waiting:
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
    await gateway.wait_idle()
