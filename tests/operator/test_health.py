"""Health derivation from Deployments, Pods and Jobs (pure functions, no API).

Aspects: which Pods count (selected by the backend Deployment, not terminating, not finished; gateway
Pods excluded); each failure reason from container states (image pull, OOM, crash loop, restarts),
a container that restarted and is ready again counts as recovered, from the Deployment (progress
deadline, ignored at zero replicas) and from the prewarm Job; the most specific failure wins; progress
reasons (unschedulable, starting, model loading, scaled to zero, activating); activation phase timings
and their Go-duration form.
"""

from __future__ import annotations

from typing import Any

import pytest

from noctaya.operator import health

SELECTOR = {"app.kubernetes.io/component": "backend", "serving.noctaya.io/llmservice": "qwen"}


def deployment(replicas: int | None = 1, progressing: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"selector": {"matchLabels": SELECTOR}}
    if replicas is not None:
        spec["replicas"] = replicas
    status = {"conditions": [progressing]} if progressing else {}
    return {"metadata": {"name": "qwen"}, "spec": spec, "status": status}


def pod(
    name: str = "qwen-1",
    *,
    labels: dict[str, str] | None = None,
    phase: str = "Running",
    conditions: list[dict[str, Any]] | None = None,
    containers: list[dict[str, Any]] | None = None,
    deleting: bool = False,
    created: str = "2026-01-01T00:00:00Z",
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "labels": SELECTOR if labels is None else labels,
        "creationTimestamp": created,
    }
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:10:00Z"
    return {
        "metadata": meta,
        "status": {"phase": phase, "conditions": conditions or [], "containerStatuses": containers or []},
    }


def cond(type_: str, status: str, at: str = "2026-01-01T00:00:00Z", **extra: Any) -> dict[str, Any]:
    return {"type": type_, "status": status, "lastTransitionTime": at, **extra}


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "server", "restartCount": 0, **fields}


RUNNING = container(state={"running": {"startedAt": "2026-01-01T00:00:30Z"}})
READY_POD = pod(
    conditions=[
        cond("PodScheduled", "True", "2026-01-01T00:00:02Z"),
        cond("Ready", "True", "2026-01-01T00:01:30.5Z"),
    ],
    containers=[RUNNING],
)


def test_only_selected_live_pods_count() -> None:
    gateway = pod(
        "gw",
        labels={"serving.noctaya.io/llmservice": "qwen", "app.kubernetes.io/component": "gateway"},
        conditions=[cond("Ready", "True")],
    )
    terminating = pod("old", deleting=True, conditions=[cond("Ready", "True")])
    finished = pod("done", phase="Succeeded", conditions=[cond("Ready", "True")])
    live = health.live_pods(deployment(), [READY_POD, gateway, terminating, finished])
    assert [p["metadata"]["name"] for p in live] == ["qwen-1"]
    assert health.live_pods(None, [READY_POD]) == []


def test_ready_backend() -> None:
    h = health.assess(deployment=deployment(), pods=[READY_POD], prewarm_job=None)
    assert h.ready_replicas == 1 and h.failure is None and h.progress is None
    assert h.activation is not None
    assert h.activation.scheduled == 2.0 and h.activation.started == 30.0 and h.activation.ready == 90.5


@pytest.mark.parametrize(
    ("status", "reason", "fragment"),
    [
        (
            {"state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}},
            "ImagePullFailed",
            "not found",
        ),
        ({"state": {"waiting": {"reason": "ImagePullBackOff"}}}, "ImagePullFailed", "ImagePullBackOff"),
        (
            {
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "restartCount": 5,
                "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
            },
            "OOMKilled",
            "memory",
        ),
        (
            {
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "restartCount": 5,
                "lastState": {"terminated": {"reason": "Error", "exitCode": 3}},
            },
            "CrashLoopBackOff",
            "exit code 3",
        ),
        (
            {
                "state": {"running": {}},
                "restartCount": 2,
                "lastState": {"terminated": {"reason": "Error", "exitCode": 1}},
            },
            "ContainerRestarting",
            "2 times",
        ),
    ],
)
def test_container_failures(status: dict[str, Any], reason: str, fragment: str) -> None:
    p = pod(conditions=[cond("PodScheduled", "True")], containers=[container(**status)])
    h = health.assess(deployment=deployment(), pods=[p], prewarm_job=None)
    assert h.failure is not None
    assert h.failure.reason == reason
    assert fragment in h.failure.message and "qwen-1" in h.failure.message


@pytest.mark.parametrize("reason", ["OOMKilled", "Error"])
def test_a_container_ready_again_has_recovered(reason: str) -> None:
    recovered = container(
        state={"running": {"startedAt": "2026-01-01T00:00:30Z"}},
        ready=True,
        restartCount=1,
        lastState={"terminated": {"reason": reason, "exitCode": 137}},
    )
    p = pod(conditions=[cond("PodScheduled", "True"), cond("Ready", "True")], containers=[recovered])
    h = health.assess(deployment=deployment(), pods=[p], prewarm_job=None)
    assert h.ready_replicas == 1
    assert h.failure is None


def test_init_container_failures_count() -> None:
    p = pod(conditions=[cond("PodScheduled", "True")])
    p["status"]["initContainerStatuses"] = [container(state={"waiting": {"reason": "ErrImagePull"}})]
    assert health.pod_failure(p) is not None


def test_most_specific_failure_wins_across_pods() -> None:
    crash = pod(
        "a",
        containers=[
            container(
                state={"waiting": {"reason": "CrashLoopBackOff"}},
                restartCount=3,
                lastState={"terminated": {"reason": "Error"}},
            )
        ],
    )
    pull = pod("b", containers=[container(state={"waiting": {"reason": "ErrImagePull"}})])
    h = health.assess(deployment=deployment(2), pods=[crash, pull], prewarm_job=None)
    assert h.failure is not None and h.failure.reason == "ImagePullFailed"


def test_progress_deadline_and_its_absence_at_zero() -> None:
    stuck = cond("Progressing", "False", reason="ProgressDeadlineExceeded", message="timed out")
    h = health.assess(deployment=deployment(1, stuck), pods=[], prewarm_job=None)
    assert h.failure is not None and h.failure.reason == "ProgressDeadlineExceeded"
    assert health.assess(deployment=deployment(0, stuck), pods=[], prewarm_job=None).failure is None


@pytest.mark.parametrize(
    ("p", "reason"),
    [
        (
            pod(
                phase="Pending",
                conditions=[cond("PodScheduled", "False", reason="Unschedulable", message="0/3 nodes")],
            ),
            "SchedulingDelayed",
        ),
        (pod(phase="Pending"), "Starting"),
        (
            pod(
                phase="Pending",
                conditions=[cond("PodScheduled", "True")],
                containers=[container(state={"waiting": {"reason": "ContainerCreating"}})],
            ),
            "Starting",
        ),
        (
            pod(conditions=[cond("PodScheduled", "True"), cond("Ready", "False")], containers=[RUNNING]),
            "ModelLoading",
        ),
    ],
)
def test_progress_reasons(p: dict[str, Any], reason: str) -> None:
    h = health.assess(deployment=deployment(), pods=[p], prewarm_job=None)
    assert h.failure is None
    assert h.progress is not None and h.progress.reason == reason


def test_scheduling_delay_outranks_loading_across_pods() -> None:
    loading = pod(
        "a", conditions=[cond("PodScheduled", "True"), cond("Ready", "False")], containers=[RUNNING]
    )
    pending = pod("b", phase="Pending", conditions=[cond("PodScheduled", "False", reason="Unschedulable")])
    h = health.assess(deployment=deployment(2), pods=[loading, pending], prewarm_job=None)
    assert h.progress is not None and h.progress.reason == "SchedulingDelayed"


def test_without_pods() -> None:
    assert health.assess(deployment=None, pods=[], prewarm_job=None).progress == health.Finding(
        reason=health.Reason.ACTIVATING, message="the backend Deployment is not created yet"
    )
    zero = health.assess(deployment=deployment(0), pods=[], prewarm_job=None)
    assert zero.progress is not None and zero.progress.reason == "ScaledToZero"
    assert zero.desired_replicas == 0
    waiting = health.assess(deployment=deployment(1), pods=[], prewarm_job=None)
    assert waiting.progress is not None and waiting.progress.reason == "Activating"


@pytest.mark.parametrize(
    ("conditions", "reason"),
    [
        ([], "Prewarming"),
        ([cond("Complete", "True")], "Prewarmed"),
        ([cond("Failed", "True", reason="BackoffLimitExceeded", message="backoff limit")], "PrewarmFailed"),
    ],
)
def test_prewarm_job(conditions: list[dict[str, Any]], reason: str) -> None:
    job = {"metadata": {"name": "qwen-prewarm"}, "status": {"conditions": conditions}}
    h = health.assess(deployment=deployment(), pods=[], prewarm_job=job)
    assert h.prewarm is not None and h.prewarm.reason == reason
    assert (h.failure is not None and h.failure.reason == "PrewarmFailed") == (reason == "PrewarmFailed")


def test_activation_stages_and_status_shape() -> None:
    activation = health.activation_of(READY_POD)
    assert activation is not None
    assert activation.stages() == [("Scheduled", 2.0), ("ImagePulled", 28.0), ("ModelLoaded", 60.5)]
    assert activation.as_status() == {
        "startedAt": "2026-01-01T00:00:00Z",
        "readyAt": "2026-01-01T00:01:30.5Z",
        "phases": [
            {"name": "Scheduled", "duration": "2s"},
            {"name": "ImagePulled", "duration": "28s"},
            {"name": "ModelLoaded", "duration": "1m0.5s"},
        ],
    }
    not_ready = pod(conditions=[cond("Ready", "False")])
    assert health.activation_of(not_ready) is None


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0, "0s"), (0.85, "850ms"), (2.5, "2.5s"), (60.0, "1m0s"), (90.25, "1m30.25s"), (3723.0, "1h2m3s")],
)
def test_go_duration(seconds: float, text: str) -> None:
    assert health.go_duration(seconds) == text


def test_garbage_in_is_tolerated() -> None:
    weird = {
        "metadata": {"name": "x", "labels": SELECTOR, "creationTimestamp": "not a time"},
        "status": {
            "conditions": ["nope", {"type": "Ready", "status": "True", "lastTransitionTime": 5}],
            "containerStatuses": [None, {"state": None}],
        },
    }
    h = health.assess(deployment=deployment(), pods=[weird], prewarm_job=None)
    assert h.ready_replicas == 1 and h.activation is None


def test_pods_that_do_not_fit_the_node_of_the_cache_are_named() -> None:
    pinned = deployment(2)
    pinned["spec"]["template"] = {
        "spec": {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": SELECTOR}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                }
            }
        }
    }
    stuck = pod("qwen-2", phase="Pending", conditions=[cond("PodScheduled", "False", reason="Unschedulable")])
    h = health.assess(deployment=pinned, pods=[READY_POD, stuck], prewarm_job=None)
    assert h.node_full is not None and h.node_full.reason == health.Reason.CACHE_NODE_FULL
    assert "qwen-2" in h.node_full.message and "SharedPVC" in h.node_full.message
    assert h.rolling  # 1 of 2 ready
    free = health.assess(deployment=deployment(2), pods=[READY_POD, stuck], prewarm_job=None)
    assert free.node_full is None  # not pinned: an ordinary scheduling delay
    fits = health.assess(deployment=pinned, pods=[READY_POD], prewarm_job=None)
    assert fits.node_full is None


def test_a_pod_waiting_for_an_unbound_claim_names_the_claim_not_a_full_node() -> None:
    pinned = deployment(1)
    pinned["spec"]["template"] = {
        "spec": {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": {"matchLabels": SELECTOR}, "topologyKey": "kubernetes.io/hostname"}
                    ]
                }
            }
        }
    }
    waiting = pod(
        phase="Pending",
        conditions=[
            cond(
                "PodScheduled",
                "False",
                reason="Unschedulable",
                message="0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims.",
            )
        ],
    )
    claim = {"metadata": {"name": "qwen-cache"}, "spec": {}, "status": {"phase": "Pending"}}
    h = health.assess(deployment=pinned, pods=[waiting], prewarm_job=None, claims=[claim])
    assert h.node_full is None
    assert h.claim_unbound is not None and h.claim_unbound.reason == health.Reason.CACHE_CLAIM_UNBOUND
    assert "qwen-cache" in h.claim_unbound.message and "no StorageClass" in h.claim_unbound.message
    claim["spec"]["storageClassName"] = "fast-ssd"
    h = health.assess(deployment=pinned, pods=[waiting], prewarm_job=None, claims=[claim])
    assert h.claim_unbound is not None and "'fast-ssd'" in h.claim_unbound.message
    assert (
        health.assess(deployment=pinned, pods=[READY_POD], prewarm_job=None, claims=[claim]).claim_unbound
        is None
    )
