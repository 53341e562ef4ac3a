"""What the operator reports and logs when the API server refuses, and when it has not listed yet.

Aspects: a refusal other than ``400``/``422`` (a ResourceQuota's ``403``) becomes
``Reconciled=False/ApplyRefused`` naming the object and quoting the server, with one Warning Event, one
INFO line and no traceback; the retry backoff holds however many watch events arrive, and a spec change
retries at once; a runtime applied together with its service, or present when the operator starts, is
never reported missing; a new runtime that ranks first does not move a running service until its spec
changes or it opts in (``RuntimeKept``, an Event naming both runtimes).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest

from noctaya.operator import reconciliation
from tests.operator.apiserver import ApiServer
from tests.operator.cluster import SimulatedCluster
from tests.operator.conftest import StartOperator, WaitFor, ready_service, settled
from tests.operator.scenario import (
    LLMSERVICES,
    NS,
    RUNTIMES,
    condition,
    runtime_body,
    service_body,
    status_of,
)

pytestmark = pytest.mark.timeout(90)

DEPLOYMENTS = "apps/v1/deployments"
QUOTA = (
    'deployments.apps "qwen-backend" is forbidden: exceeded quota: compute, '
    "requested: count/deployments.apps=1, used: count/deployments.apps=4, limited: count/deployments.apps=4"
)
KEY = (NS, "qwen")


def events(server: ApiServer, reason: str) -> list[dict[str, Any]]:
    return [e for e in server.items("v1/events", NS) if e["reason"] == reason]


def update_spec(server: ApiServer, **changes: Any) -> None:
    obj = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    obj["spec"].update(changes)
    server.upsert(LLMSERVICES, obj)


async def test_a_quota_refusal_is_a_condition_an_event_and_one_log_line(
    server: ApiServer,
    cluster: SimulatedCluster,
    operators: StartOperator,
    wait_for: WaitFor,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="noctaya")
    server.refuse(DEPLOYMENTS, NS, status=403, reason="Forbidden", message=QUOTA)
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body())
    replica = await operators(requeue_base_backoff=0.2, requeue_max_backoff=0.4)
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "ApplyRefused")
    message = condition(server, "Reconciled")["message"]
    assert "Deployment ai/qwen-" in message and "(403 Forbidden)" in message and "exceeded quota" in message
    assert status_of(server)["phase"] == "Degraded" and condition(server, "Degraded")["status"] == "True"
    assert status_of(server)["observedGeneration"] == 1
    await wait_for(lambda: len(replica.passes_of(KEY)) >= 3, message="retries")  # backing off, still refused
    assert all(p.result == "refused" for p in replica.passes_of(KEY) if "ApplyRefused" in p.summary)
    [event] = events(server, "ApplyRefused")  # one per change, not per attempt
    assert event["type"] == "Warning" and "exceeded quota" in event["message"]
    assert "Traceback" not in caplog.text
    lines = [
        r
        for r in caplog.records
        if "LLMService ai/qwen:" in r.getMessage() and "ApplyRefused" in r.getMessage()
    ]
    # one line when the outcome changes (the first pass created what it could), not one per attempt
    assert len(lines) <= 2 < len(replica.passes_of(KEY)) and {r.levelno for r in lines} == {logging.INFO}
    assert 'noctaya_reconciles_total{result="refused"}' in replica.operator.metrics.exposition().decode()

    server.admit(DEPLOYMENTS, NS)  # the quota is raised: the next retry applies
    await wait_for(lambda: status_of(server).get("phase") == "Ready", message="Ready once admitted")
    assert condition(server, "Reconciled")["reason"] == "Applied"


async def test_the_backoff_holds_until_a_spec_change(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.refuse(DEPLOYMENTS, NS, status=403, reason="Forbidden", message=QUOTA)
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body())
    replica = await operators(requeue_base_backoff=60.0, requeue_max_backoff=60.0)
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "ApplyRefused")
    queue, inv = replica.operator.queue, replica.operator.inventory
    assert queue is not None and inv is not None
    await wait_for(lambda: queue.backing_off == 1)
    refused = len(replica.passes_of(KEY))
    config = server.must("v1/configmaps", NS, "qwen-gateway")  # applied in the first wave
    for i in range(10):  # watch events that mark the service (its owned ConfigMap changes)
        edited = copy.deepcopy(server.must("v1/configmaps", NS, "qwen-gateway"))
        edited["metadata"].setdefault("annotations", {})["touched"] = str(i)
        server.upsert("v1/configmaps", edited)
    rv = server.must("v1/configmaps", NS, "qwen-gateway")["metadata"]["resourceVersion"]
    await wait_for(  # the handler saw the last edit, so it has marked the service ten times
        lambda: (
            (inv.find(KEY, "v1", "ConfigMap", "qwen-gateway") or {})
            .get("metadata", {})
            .get("resourceVersion")
            == rv
        )
    )
    assert config["metadata"]["uid"] == server.must("v1/configmaps", NS, "qwen-gateway")["metadata"]["uid"]
    assert len(replica.passes_of(KEY)) == refused  # held: no pass before the backoff ends
    assert not queue.idle(KEY)  # the retry is scheduled

    server.admit(DEPLOYMENTS, NS)
    update_spec(server, endpoint={"maxQueue": 50})  # a new spec is retried at once
    await wait_for(lambda: status_of(server).get("phase") == "Ready", within=20, message="Ready at once")
    assert queue.backing_off == 0


def _runtime_not_found_writes(server: ApiServer) -> list[str]:
    seen: list[str] = []

    def check(event_type: str, resource: str, obj: dict[str, Any]) -> None:
        conditions = (obj.get("status") or {}).get("conditions") or [] if resource == LLMSERVICES else []
        seen.extend(c["reason"] for c in conditions if c["reason"] == "RuntimeNotFound")
        if resource == "v1/events" and obj.get("reason") == "RuntimeNotFound":
            seen.append("event")

    server.subscribe(check)
    return seen


async def test_a_runtime_applied_with_its_service_is_never_reported_missing(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    seen = _runtime_not_found_writes(server)
    replica = await operators()
    await wait_for(lambda: replica.operator.state()["leader"] and replica.operator.queue is not None)
    server.upsert(LLMSERVICES, service_body())  # the service first: its watch event may come first
    server.upsert(RUNTIMES, runtime_body())
    await wait_for(lambda: status_of(server).get("phase") == "Ready")
    assert seen == []


async def test_restarts_with_runtime_and_service_in_place_never_report_it_missing(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for, leader_election=False)
    seen = _runtime_not_found_writes(server)
    for identity in ("op-b", "op-c"):
        await replica.shutdown()
        replica = await operators(identity=identity, leader_election=False)
        reported = await wait_for(lambda r=replica: [p for p in r.passes_of(KEY) if p.summary])
        assert reported[0].summary.startswith("phase Ready; runtime vllm")  # its first pass knew it all
        await settled(replica, wait_for)
    assert seen == []


async def test_a_runtime_that_ranks_first_waits_for_the_spec_or_the_opt_in(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    selector = {"selector": {"vendor": ["nvidia"]}}
    replica = await ready_service(server, operators, wait_for, spec={"runtime": selector})
    assert status_of(server)["resolvedRuntime"] == "vllm"
    backend = copy.deepcopy(server.must(DEPLOYMENTS, NS, "qwen-backend"))
    server.upsert(RUNTIMES, runtime_body("vllm-l4", priority=50, image="vllm/vllm-openai:v0.7.0"))
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "RuntimeKept")
    message = condition(server, "Reconciled")["message"]
    assert (
        "vllm-l4" in message
        and "stays on vllm" in message
        and reconciliation.RUNTIME_SELECTION_ANNOTATION in message
    )
    assert condition(server, "Reconciled")["status"] == "True"
    await settled(replica, wait_for)
    assert status_of(server)["resolvedRuntime"] == "vllm"
    assert server.must(DEPLOYMENTS, NS, "qwen-backend")["spec"] == backend["spec"]  # nothing rolled
    [event] = events(server, "RuntimeKept")
    assert event["type"] == "Normal" and "vllm-l4" in event["message"] and "vllm" in event["message"]

    obj = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    obj["metadata"].setdefault("annotations", {})[reconciliation.RUNTIME_SELECTION_ANNOTATION] = "follow"
    server.upsert(LLMSERVICES, obj)
    await wait_for(lambda: status_of(server).get("resolvedRuntime") == "vllm-l4", message="moved on opt-in")
    assert condition(server, "Reconciled")["reason"] == "Applied"
