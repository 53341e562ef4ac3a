"""The Lease elector against the API server emulator, with a controllable monotonic clock.

Aspects: a missing Lease is created; a held Lease is not taken before it expires by the candidate's own
observation, and is taken after (with ``leaseTransitions`` and ``acquireTime``); a released Lease
(empty holder) is taken at once; ``is_leader`` turns false after ``renew_deadline`` without renewal,
before a standby may take over even when the durations are not whole seconds;
release empties the holder only when we hold it; a 409 on a racing write loses the round; an API server
that cannot be reached loses the round too (no exception escapes).
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable

import pytest
from kubernetes_asyncio import client as k8s_client

from noctaya.operator import apiclient, leadership
from tests.operator.apiserver import ApiServer

LEASES = "coordination.k8s.io/v1/leases"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[apiclient.Client]:
    async with k8s_client.ApiClient(k8s_client.Configuration(host=str(server.url).rstrip("/"))) as api:
        yield apiclient.Client(api=api)


def elector(
    client: apiclient.Client,
    identity: str,
    clock: Clock,
    *,
    lease_duration: float = 15,
    renew_deadline: float = 10,
) -> leadership.LeaseElector:
    return leadership.LeaseElector(
        client=client,
        clock=clock,
        config=leadership.LeaseConfig(
            name="op",
            namespace="noctaya-system",
            identity=identity,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=2,
        ),
    )


def lease(server: ApiServer) -> dict[str, object]:
    spec: dict[str, object] = server.must(LEASES, "noctaya-system", "op")["spec"]
    return spec


async def test_create_hold_expire_take_over(server: ApiServer, client: apiclient.Client) -> None:
    clock = Clock()
    a, b = elector(client, "a", clock), elector(client, "b", clock)
    assert await a.try_acquire_or_renew()
    assert lease(server)["holderIdentity"] == "a" and lease(server)["leaseTransitions"] == 0
    assert not await b.try_acquire_or_renew()  # b starts observing a's record now
    clock.now += 14
    assert not await b.try_acquire_or_renew()  # a's record unchanged for 14 s < 15 s
    assert not a.is_leader  # a did not renew for 14 s > renew_deadline
    clock.now += 1.5
    assert await b.try_acquire_or_renew()
    spec = lease(server)
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
    assert b.is_leader and b.transitions == 1


async def test_a_fractional_duration_never_lets_the_standby_in_early(
    server: ApiServer, client: apiclient.Client
) -> None:
    clock = Clock()
    a, b = (elector(client, i, clock, lease_duration=10.4, renew_deadline=10.2) for i in "ab")
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    clock.now += 10.1
    assert a.is_leader  # still within its renew deadline
    assert not await b.try_acquire_or_renew()  # so the Lease must not look expired to b yet
    assert lease(server)["leaseDurationSeconds"] == 11  # rounded up, never down


async def test_renewals_keep_the_standby_out(server: ApiServer, client: apiclient.Client) -> None:
    clock = Clock()
    a, b = elector(client, "a", clock), elector(client, "b", clock)
    assert await a.try_acquire_or_renew()
    for _ in range(20):
        clock.now += 5
        assert await a.try_acquire_or_renew()
        assert not await b.try_acquire_or_renew()
    assert a.is_leader and a.transitions == 1


async def test_release_hands_over_at_once(server: ApiServer, client: apiclient.Client) -> None:
    clock = Clock()
    a, b = elector(client, "a", clock), elector(client, "b", clock)
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    await a.release()
    assert lease(server)["holderIdentity"] == "" and not a.is_leader
    assert await b.try_acquire_or_renew()
    await a.release()  # not ours: nothing happens
    assert lease(server)["holderIdentity"] == "b"


async def test_a_racing_write_loses(
    server: ApiServer, client: apiclient.Client, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    a = elector(client, "a", clock)
    assert await a.try_acquire_or_renew()
    original = client.replace

    async def racing_replace(obj: dict[str, object]) -> dict[str, object]:
        theirs = copy.deepcopy(server.must(LEASES, "noctaya-system", "op"))
        theirs["spec"]["holderIdentity"] = "intruder"
        server.upsert(LEASES, theirs)  # someone else wrote first: our resourceVersion is stale
        return await original(obj)

    client.replace = racing_replace  # type: ignore[method-assign]
    clock.now += 5
    with caplog.at_level("INFO", logger=leadership.__name__):
        assert not await a.try_acquire_or_renew()
    assert lease(server)["holderIdentity"] == "intruder"
    # losing a race is election, said as such: not the server's "409 Conflict" text, which reads as a fault
    assert "another candidate updated Lease noctaya-system/op first" in caplog.messages
    assert not [m for m in caplog.messages if "onflict" in m]


async def test_hold_raises_when_the_lease_is_taken(server: ApiServer, client: apiclient.Client) -> None:
    a = leadership.LeaseElector(
        client=client,
        config=leadership.LeaseConfig(
            name="op",
            namespace="noctaya-system",
            identity="a",
            lease_duration=1.0,
            renew_deadline=0.6,
            retry_period=0.05,
        ),
    )
    await a.acquire()
    theirs = copy.deepcopy(server.must(LEASES, "noctaya-system", "op"))
    theirs["spec"].update(holderIdentity="intruder", renewTime=leadership.micro_time())
    server.upsert(LEASES, theirs)
    with pytest.raises(leadership.LeadershipLostError):
        await a.hold()
    assert not a.is_leader


async def test_an_unreachable_server_loses_the_round(reserve_port: Callable[[], int]) -> None:
    port = reserve_port()  # held for the test with nobody listening: every connection is refused
    async with k8s_client.ApiClient(k8s_client.Configuration(host=f"http://127.0.0.1:{port}")) as api:
        a = elector(apiclient.Client(api=api), "a", Clock())
        assert not await a.try_acquire_or_renew()
        assert not a.is_leader
        await a.release()  # nothing held: nothing to release, no error


async def test_a_racing_create_loses(
    server: ApiServer, client: apiclient.Client, caplog: pytest.LogCaptureFixture
) -> None:
    """Both candidates found no Lease; the other one's create landed first: ours is AlreadyExists (409)."""
    clock = Clock()
    a, b = elector(client, "a", clock), elector(client, "b", clock)
    original = client.create

    async def racing_create(obj: dict[str, object]) -> dict[str, object]:
        client.create = original  # type: ignore[method-assign]
        assert await b.try_acquire_or_renew()  # b reads no Lease either, and creates it first
        return await original(obj)

    client.create = racing_create  # type: ignore[method-assign]
    with caplog.at_level("INFO", logger=leadership.__name__):
        assert not await a.try_acquire_or_renew()
    assert lease(server)["holderIdentity"] == "b"
    assert "another candidate created Lease noctaya-system/op first" in caplog.messages
    assert not [m for m in caplog.messages if "onflict" in m]
