"""Backend failures observed by the real operator appear as conditions, then clear when fixed.

Aspects: each failure the simulated kubelet/Deployment controller can show (unschedulable, image pull,
OOM, crash loop, restarts, progress deadline, slow model load) becomes its reason on ``Ready`` (and on
``Degraded`` for hard failures) with one Warning event; healing the Deployment (as a rollout would)
clears it without touching the LLMService; a repeated observation writes no status and posts no event.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.operator.apiserver import ApiServer
from tests.operator.cluster import Failure, SimulatedCluster
from tests.operator.conftest import StartOperator, WaitFor, ready_service
from tests.operator.scenario import (
    LLMSERVICES,
    NS,
    condition,
    status_of,
)

pytestmark = pytest.mark.timeout(90)

HARD = {
    Failure.IMAGE_PULL: ("ImagePullFailed", "ErrImagePull"),
    Failure.OOM: ("OOMKilled", "memory limit"),
    Failure.CRASH_LOOP: ("CrashLoopBackOff", "exit code 1"),
    Failure.RESTARTING: ("ContainerRestarting", "restarted 1 times"),
    Failure.PROGRESS_DEADLINE: ("ProgressDeadlineExceeded", "timed out progressing"),
}
SOFT = {
    Failure.UNSCHEDULABLE: ("SchedulingDelayed", "Insufficient nvidia.com/gpu", "Loading"),
    Failure.SLOW_LOAD: ("ModelLoading", "loading the model", "Loading"),
}


def warnings(server: ApiServer, reason: str) -> list[dict[str, Any]]:
    return [e for e in server.items("v1/events", NS) if e["reason"] == reason and e["type"] == "Warning"]


@pytest.mark.parametrize("failure", list(HARD), ids=[f.value for f in HARD])
async def test_hard_failure_degrades_then_clears(
    server: ApiServer,
    cluster: SimulatedCluster,
    operators: StartOperator,
    wait_for: WaitFor,
    failure: Failure,
) -> None:
    await ready_service(server, operators, wait_for)
    generation = server.must(LLMSERVICES, NS, "qwen")["metadata"]["generation"]
    reason, fragment = HARD[failure]

    cluster.fail(NS, "qwen-backend", failure)
    await wait_for(lambda: condition(server, "Degraded").get("reason") == reason, message=reason)
    assert condition(server, "Degraded")["status"] == "True"
    assert fragment in condition(server, "Degraded")["message"]
    assert (condition(server, "Ready")["status"], condition(server, "Ready")["reason"]) == ("False", reason)
    assert status_of(server)["phase"] == "Degraded"
    await wait_for(lambda: len(warnings(server, reason)) == 1, message="one warning event")

    # the same observation again: no status write, no second event
    seen: list[str] = []
    unsubscribe = server.subscribe(lambda t, r, o: seen.append(r) if r == LLMSERVICES else None)
    await asyncio.sleep(0.3)
    unsubscribe()
    assert seen == []
    assert len(warnings(server, reason)) == 1

    cluster.heal(NS, "qwen-backend")
    await wait_for(lambda: status_of(server).get("phase") == "Ready", message="Ready after the fix")
    assert condition(server, "Degraded")["status"] == "False"
    assert condition(server, "Degraded")["reason"] == "Healthy"
    assert server.must(LLMSERVICES, NS, "qwen")["metadata"]["generation"] == generation


@pytest.mark.parametrize("failure", list(SOFT), ids=[f.value for f in SOFT])
async def test_slow_progress_is_not_a_failure(
    server: ApiServer,
    cluster: SimulatedCluster,
    operators: StartOperator,
    wait_for: WaitFor,
    failure: Failure,
) -> None:
    await ready_service(server, operators, wait_for)
    reason, fragment, phase = SOFT[failure]
    cluster.fail(NS, "qwen-backend", failure)
    await wait_for(lambda: condition(server, "Ready").get("reason") == reason, message=reason)
    assert fragment in condition(server, "Ready")["message"]
    assert condition(server, "Degraded")["status"] == "False"
    assert status_of(server)["phase"] == phase
    cluster.heal(NS, "qwen-backend")
    await wait_for(lambda: status_of(server).get("phase") == "Ready", message="Ready after the fix")


async def test_terminating_pods_are_ignored(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(server, operators, wait_for)
    cluster.timings.terminate = 1.0  # a crash-looping pod that takes its time to go away
    cluster.fail(NS, "qwen-backend", Failure.CRASH_LOOP)
    await wait_for(lambda: condition(server, "Degraded").get("reason") == "CrashLoopBackOff")
    (pod,) = cluster.pods_of(NS, "qwen-backend")
    cluster.scale(NS, "qwen-backend", 0)  # the failing pod is now terminating
    await wait_for(
        lambda: server.must("v1/pods", NS, pod["metadata"]["name"])["metadata"].get("deletionTimestamp")
    )
    await wait_for(lambda: condition(server, "Degraded").get("status") == "False", message="cleared")
    assert status_of(server)["phase"] == "ScaledToZero"
