"""Status composition and condition transitions (pure functions).

Aspects: the phase for every combination (blocked, waiting for KEDA, failure, ready, scaled to zero,
loading, pending); ``Ready``/``Degraded``/``AutoscalingReady``/``Reconciled``/``CacheReady``;
``lastTransitionTime`` kept while the status holds, message kept while the reason holds; a crash loop
seen between back-offs keeps its reason (no alternating reason, no event per restart);
``observedGeneration`` on every condition; lastActivation kept; transitions give one event per reason,
none for repeats and none for the initial healthy ``Degraded``; equality ignoring timestamps.
"""

from __future__ import annotations

from typing import Any

import pytest

from noctaya.operator import health, status

F = health.Finding


def h(
    ready: int = 0,
    desired: int | None = 1,
    progress: F | None = None,
    failure: F | None = None,
    prewarm: F | None = None,
) -> health.Health:
    return health.Health(
        ready_replicas=ready,
        desired_replicas=desired,
        progress=progress,
        failure=failure,
        prewarm=prewarm,
        activation=None,
    )


def conditions(s: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in s["conditions"]}


def compose(
    health_: health.Health,
    *,
    outcome: status.Outcome | None = None,
    previous: dict[str, Any] | None = None,
    generation: int = 1,
    activation: health.Activation | None = None,
    now: str | None = None,
) -> dict[str, Any]:
    return status.compose(
        previous=previous,
        generation=generation,
        health=health_,
        outcome=outcome or status.Outcome(),
        activation=activation,
        now=now,
    )


@pytest.mark.parametrize(
    ("health_", "outcome", "phase"),
    [
        (h(ready=1), status.Outcome(), "Ready"),
        (h(progress=F(reason="ScaledToZero", message="")), status.Outcome(), "ScaledToZero"),
        (h(progress=F(reason="ModelLoading", message="")), status.Outcome(), "Loading"),
        (h(progress=F(reason="SchedulingDelayed", message="")), status.Outcome(), "Loading"),
        (h(progress=F(reason="Activating", message="")), status.Outcome(), "Pending"),
        (h(failure=F(reason="OOMKilled", message="")), status.Outcome(), "Degraded"),
        (h(ready=1, failure=F(reason="OOMKilled", message="")), status.Outcome(), "Degraded"),
        (h(desired=None), status.Outcome(blocked=F(reason="InvalidSpec", message="")), "Degraded"),
        (h(ready=1), status.Outcome(blocked=F(reason="RuntimeNotFound", message="")), "Ready"),
        (
            h(desired=None, progress=F(reason="Activating", message="")),
            status.Outcome(autoscaling=F(reason="ScaledObjectCRDMissing", message="")),
            "Pending",
        ),
    ],
)
def test_phase(health_: health.Health, outcome: status.Outcome, phase: str) -> None:
    assert status.phase_of(health=health_, outcome=outcome) == phase


def test_ready_service() -> None:
    s = compose(
        h(ready=2),
        outcome=status.Outcome(resolved_runtime="vllm", endpoint_url="http://x/v1"),
        generation=3,
        now="T0",
    )
    assert s["phase"] == "Ready" and s["replicas"] == 2 and s["resolvedRuntime"] == "vllm"
    assert s["endpointURL"] == "http://x/v1" and s["observedGeneration"] == 3
    assert conditions(s) == {
        "Ready": ("True", "Serving"),
        "Degraded": ("False", "Healthy"),
        "AutoscalingReady": ("True", "Configured"),
        "Reconciled": ("True", "Applied"),
    }
    assert {c["observedGeneration"] for c in s["conditions"]} == {3}
    assert {c["lastTransitionTime"] for c in s["conditions"]} == {"T0"}


def test_failure_and_blocked_reasons_reach_ready() -> None:
    s = compose(h(failure=F(reason="ImagePullFailed", message="m")))
    assert conditions(s)["Ready"] == ("False", "ImagePullFailed")
    assert conditions(s)["Degraded"] == ("True", "ImagePullFailed")
    s = compose(h(desired=None), outcome=status.Outcome(blocked=F(reason="RuntimeAmbiguous", message="a, b")))
    assert conditions(s)["Ready"] == ("False", "RuntimeAmbiguous")
    assert conditions(s)["Reconciled"] == ("False", "RuntimeAmbiguous")


def test_cache_conditions() -> None:
    s = compose(h(prewarm=F(reason="Prewarming", message="")))
    assert conditions(s)["CacheReady"] == ("False", "Prewarming")
    s = compose(h(prewarm=F(reason="Prewarmed", message="")))
    assert conditions(s)["CacheReady"] == ("True", "Prewarmed")
    s = compose(
        h(prewarm=F(reason="Prewarmed", message="")),
        outcome=status.Outcome(cache_problem=F(reason="CacheSpecChanged", message="pvc")),
    )
    assert conditions(s)["CacheReady"] == ("False", "CacheSpecChanged")
    assert "CacheReady" not in conditions(compose(h()))


def test_transition_time_and_message_are_kept_while_nothing_changes() -> None:
    first = compose(h(failure=F(reason="ImagePullFailed", message="ErrImagePull")), now="T0")
    again = compose(
        h(failure=F(reason="ImagePullFailed", message="ImagePullBackOff")), previous=first, now="T1"
    )
    assert again == first
    assert status.same_status(first, again)
    assert status.transitions(first, again) == []
    fixed = compose(h(ready=1), previous=again, now="T2")
    degraded = next(c for c in fixed["conditions"] if c["type"] == "Degraded")
    autoscaling = next(c for c in fixed["conditions"] if c["type"] == "AutoscalingReady")
    assert degraded["lastTransitionTime"] == "T2" and autoscaling["lastTransitionTime"] == "T0"


def test_transitions_one_event_per_reason() -> None:
    first = compose(h(progress=F(reason="Activating", message="")))
    changes = status.transitions(None, first)
    assert {(c.type, c.reason) for c in changes} == {
        ("Ready", "Activating"),
        ("AutoscalingReady", "Configured"),
        ("Reconciled", "Applied"),
    }  # no "Degraded=False" event
    failed = compose(
        h(failure=F(reason="PrewarmFailed", message="m"), prewarm=F(reason="PrewarmFailed", message="m")),
        previous=first,
    )
    changes = status.transitions(first, failed)
    assert [(c.type, c.reason, c.warning) for c in changes] == [("Degraded", "PrewarmFailed", True)]


def test_warning_classification() -> None:
    assert status.Transition(type="Degraded", status="True", reason="OOMKilled", message="").warning
    assert not status.Transition(type="Degraded", status="False", reason="Healthy", message="").warning
    assert status.Transition(type="Reconciled", status="False", reason="InvalidSpec", message="").warning
    assert not status.Transition(type="CacheReady", status="False", reason="Prewarming", message="").warning
    assert not status.Transition(type="Ready", status="False", reason="ModelLoading", message="").warning


def test_last_activation_is_kept_and_replaced() -> None:
    activation = health.Activation(
        pod="p", created_at="C", scheduled=1.0, started=2.0, ready=3.0, ready_at="R"
    )
    s = compose(h(ready=1), activation=activation)
    assert s["lastActivation"]["startedAt"] == "C"
    ready = next(c for c in s["conditions"] if c["type"] == "Ready")
    assert (
        ready["message"]
        == "1 backend replica(s) ready; activation: Scheduled 1s, ImagePulled 1s, ModelLoaded 1s"
    )
    kept = compose(h(ready=1), previous=s)
    assert kept["lastActivation"] == s["lastActivation"]


def test_a_crash_loop_between_back_offs_keeps_its_reason() -> None:
    crash = F(reason="CrashLoopBackOff", message="pod p container c keeps exiting (exit code 1); 3 restarts")
    between = F(reason="ContainerRestarting", message="pod p container c restarted 4 times")
    first = compose(h(failure=crash))
    running = compose(h(failure=between), previous=first)
    assert conditions(running)["Degraded"] == ("True", "CrashLoopBackOff")
    assert conditions(running)["Ready"] == ("False", "CrashLoopBackOff")
    assert status.same_status(first, running) and status.transitions(first, running) == []
    again = compose(h(failure=crash), previous=running)
    assert status.same_status(running, again) and status.transitions(running, again) == []

    restarting = compose(h(failure=between))  # restarts first, then the back-off: one change, one event
    looping = compose(h(failure=crash), previous=restarting)
    assert conditions(looping)["Degraded"] == ("True", "CrashLoopBackOff")
    assert [t.reason for t in status.transitions(restarting, looping)] == ["CrashLoopBackOff"]
    healed = compose(h(ready=1), previous=looping)
    assert conditions(healed)["Degraded"] == ("False", "Healthy")
