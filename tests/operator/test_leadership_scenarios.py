"""Two real operator replicas share one Lease: exactly one reconciles, and leadership moves safely.

Aspects: a standby does nothing while the leader holds the Lease; a graceful exit releases the Lease
and the standby takes over at once (well before the Lease would expire); a crashed leader is replaced
after the Lease expires; a leader that sees the Lease taken stops reconciling at once; reconcile passes
of the two replicas never overlap in time; a partitioned leader (cannot renew) stops writing before
the standby takes over, and keeps running as a standby; a replica that cannot reach the API server at
all stands by instead of exiting, while an unexpected failure of the elector surfaces instead of
ending the replica silently; the new leader reconciles changes made after the handover.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable

import pytest

from noctaya.operator import leadership
from tests.operator.apiserver import ApiServer
from tests.operator.cluster import SimulatedCluster
from tests.operator.conftest import (
    LEASE_DURATION,
    RENEW_DEADLINE,
    RETRY_PERIOD,
    Replica,
    StartOperator,
    WaitFor,
)
from tests.operator.scenario import (
    LLMSERVICES,
    NS,
    RUNTIMES,
    max_queue,
    runtime_body,
    service_body,
    status_of,
)

pytestmark = pytest.mark.timeout(90)

LEASES = "coordination.k8s.io/v1/leases"


def holder(server: ApiServer) -> str | None:
    lease = server.obj(LEASES, "noctaya-system", "noctaya-operator")
    return None if lease is None else lease["spec"].get("holderIdentity")


def passes(replica: Replica) -> list[tuple[float, float]]:
    return [(p.started, p.ended) for p in replica.passes]


def change_queue(server: ApiServer, name: str, max_queue: int) -> None:
    obj = copy.deepcopy(server.must(LLMSERVICES, NS, name))
    obj["spec"]["endpoint"] = {"maxQueue": max_queue}
    server.upsert(LLMSERVICES, obj)


async def two_replicas(
    server: ApiServer, operators: StartOperator, wait_for: WaitFor, services: int = 3
) -> tuple[Replica, Replica]:
    server.upsert(RUNTIMES, runtime_body())
    for i in range(services):
        server.upsert(LLMSERVICES, service_body(f"svc-{i}"))
    a = await operators(identity="op-a")
    await wait_for(lambda: holder(server) == "op-a", message="op-a leads")
    b = await operators(identity="op-b")
    for i in range(services):
        await wait_for(lambda i=i: status_of(server, f"svc-{i}").get("phase") == "Ready")
    await asyncio.sleep(0.5)  # several renewals and acquisition attempts
    assert a.operator.state()["leader"] and not b.operator.state()["leader"]
    assert b.operator.reconciler is None  # the standby never reconciled
    return a, b


async def test_graceful_exit_hands_over_at_once(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    a, b = await two_replicas(server, operators, wait_for)
    loop = asyncio.get_running_loop()
    await a.shutdown()
    stopped = loop.time()
    assert holder(server) == ""  # released
    await wait_for(lambda: b.operator.state()["leader"], within=5, message="op-b leads")
    # released: op-b takes it on its next attempt, no waiting for the lease to expire
    assert loop.time() - stopped < LEASE_DURATION - 0.5
    assert holder(server) == "op-b"

    change_queue(server, "svc-0", 9)
    await wait_for(lambda: max_queue(server, "svc-0") == 9)
    await wait_for(lambda: passes(b), message="op-b's passes recorded")
    a_last_end = max(end for _, end in passes(a))
    assert min(start for start, _ in passes(b)) >= a_last_end  # never both at once


async def test_crashed_leader_is_replaced_after_expiry(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    a, b = await two_replicas(server, operators, wait_for, services=1)
    loop = asyncio.get_running_loop()
    await a.crash()
    crashed = loop.time()
    assert holder(server) == "op-a"  # not released
    await wait_for(
        lambda: b.operator.state()["leader"], within=LEASE_DURATION * 4, message="op-b leads after expiry"
    )
    waited = loop.time() - crashed
    # the lease lasts LEASE_DURATION from the last renewal op-b observed (at most one retry before the crash)
    assert LEASE_DURATION - RETRY_PERIOD * 2 <= waited < LEASE_DURATION * 3, waited
    change_queue(server, "svc-0", 11)
    await wait_for(lambda: max_queue(server, "svc-0") == 11)


async def test_losing_the_lease_stops_reconciling_at_once(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body("svc-0"))
    a = await operators(identity="op-a")
    await wait_for(lambda: status_of(server, "svc-0").get("phase") == "Ready")
    lease = copy.deepcopy(server.must(LEASES, "noctaya-system", "noctaya-operator"))
    lease["spec"].update(holderIdentity="intruder", leaseDurationSeconds=3, renewTime=leadership.micro_time())
    server.upsert(LEASES, lease)
    # at its next renewal attempt (every RETRY_PERIOD): well before its own renew deadline
    await wait_for(lambda: not a.operator.state()["leader"], within=RENEW_DEADLINE, message="op-a steps down")
    assert not a.operator.may_write()
    change_queue(server, "svc-0", 13)
    await asyncio.sleep(0.5)
    assert max_queue(server, "svc-0") == 100  # nobody reconciles
    await wait_for(lambda: a.operator.state()["leader"], within=8, message="op-a leads again after expiry")
    await wait_for(lambda: max_queue(server, "svc-0") == 13)
    assert a.operator.terms == 2


async def test_elector_never_admits_two_leaders(server: ApiServer) -> None:
    from kubernetes_asyncio import client as k8s_client

    from noctaya.operator import apiclient

    url = str(server.url).rstrip("/")
    async with k8s_client.ApiClient(k8s_client.Configuration(host=url)) as api:
        client = apiclient.Client(api=api)
        electors = [
            leadership.LeaseElector(
                client=client,
                config=leadership.LeaseConfig(
                    name="race",
                    namespace="noctaya-system",
                    identity=f"c{i}",
                    lease_duration=1.0,
                    renew_deadline=0.6,
                    retry_period=0.05,
                ),
            )
            for i in range(5)
        ]
        results = await asyncio.gather(*(e.try_acquire_or_renew() for e in electors))
        assert sum(results) == 1
        for _ in range(10):
            await asyncio.gather(*(e.try_acquire_or_renew() for e in electors))
            assert sum(e.is_leader for e in electors) == 1


async def test_a_partitioned_leader_stops_writing_before_the_standby_starts(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    a, b = await two_replicas(server, operators, wait_for, services=1)
    loop = asyncio.get_running_loop()
    moments: dict[str, float] = {}

    async def unreachable(*args: object, **kwargs: object) -> dict[str, object]:
        raise ConnectionRefusedError("network partition")

    a.operator.client.api.call_api = unreachable  # type: ignore[method-assign]  # A can no longer renew
    partitioned = loop.time()

    async def watch() -> None:
        while "b" not in moments:
            if "a" not in moments and not a.operator.may_write():
                moments["a"] = loop.time()
            if b.operator.state()["leader"]:
                moments["b"] = loop.time()
            await asyncio.sleep(0.005)

    await asyncio.wait_for(watch(), 10)
    assert "a" in moments, "the standby took over while the partitioned leader could still write"
    assert moments["a"] < moments["b"]
    assert moments["a"] - partitioned <= RENEW_DEADLINE + RETRY_PERIOD * 3  # its renew deadline, + retries
    assert not a.task.done(), "the partitioned replica exited instead of standing by"
    change_queue(server, "svc-0", 17)
    await wait_for(lambda: max_queue(server, "svc-0") == 17)


async def test_a_replica_without_an_api_server_stands_by(
    operators: StartOperator, reserve_port: Callable[[], int]
) -> None:
    url = f"http://127.0.0.1:{reserve_port()}"  # held for the test, nobody listening: every request refused
    replica = await operators(server=url)
    await asyncio.sleep(1.0)  # several acquisition attempts
    assert not replica.task.done(), "the replica exited during an API outage"
    assert not replica.operator.state()["leader"]


async def test_an_unexpected_elector_failure_is_not_a_silent_stop(
    server: ApiServer, operators: StartOperator
) -> None:
    replica = await operators(identity="op-a")
    assert replica.operator.elector is not None

    async def broken() -> None:
        raise RuntimeError("elector bug")

    replica.operator.elector.acquire = broken  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="elector bug"):
        await asyncio.wait_for(replica.task, 5)
