"""Status composition and condition transitions (pure functions).

Aspects: the phase for every combination (blocked, waiting for KEDA, failure, ready, scaled to zero,
loading, pending); ``Ready``/``Degraded``/``AutoscalingReady``/``Reconciled``/``CacheReady``;
``lastTransitionTime`` kept while the status holds, message kept while the reason holds; a crash loop
seen between back-offs keeps its reason (no alternating reason, no event per restart);
``observedGeneration`` on every condition; lastActivation kept; transitions give one event per reason,
none for repeats and none for the initial healthy ``Degraded``; equality ignoring timestamps.
"""

from __future__ import annotations

import pathlib
import re
from typing import Any

import hypothesis
import pytest
from hypothesis import strategies as st

from noctaya.operator import health, status

R = status.Reason
T = status.ConditionType

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
        (h(progress=F(reason=R.SCALED_TO_ZERO, message="")), status.Outcome(), "ScaledToZero"),
        (h(progress=F(reason=R.MODEL_LOADING, message="")), status.Outcome(), "Loading"),
        (h(progress=F(reason=R.SCHEDULING_DELAYED, message="")), status.Outcome(), "Loading"),
        (h(progress=F(reason=R.ACTIVATING, message="")), status.Outcome(), "Loading"),
        (h(failure=F(reason=R.OOM_KILLED, message="")), status.Outcome(), "Degraded"),
        (h(ready=1, failure=F(reason=R.OOM_KILLED, message="")), status.Outcome(), "Degraded"),
        (h(desired=None), status.Outcome(blocked=F(reason=R.INVALID_SPEC, message="")), "Degraded"),
        (h(ready=1), status.Outcome(blocked=F(reason=R.RUNTIME_NOT_FOUND, message="")), "Ready"),
        (
            h(desired=None, progress=F(reason=R.ACTIVATING, message="")),
            status.Outcome(autoscaling=F(reason=R.AUTOSCALING_UNAVAILABLE, message="")),
            "Pending",
        ),
    ],
)
def test_phase(health_: health.Health, outcome: status.Outcome, phase: str) -> None:
    assert compose(health_, outcome=outcome)["phase"] == phase


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
        "Ready": ("True", "Available"),
        "Degraded": ("False", "Healthy"),
        "AutoscalingReady": ("True", "ScaledObjectApplied"),
        "Reconciled": ("True", "Applied"),
    }
    assert {c["observedGeneration"] for c in s["conditions"]} == {3}
    assert {c["lastTransitionTime"] for c in s["conditions"]} == {"T0"}


def test_failure_and_blocked_reasons_reach_ready() -> None:
    s = compose(h(failure=F(reason=R.IMAGE_PULL_FAILED, message="m")))
    assert conditions(s)["Ready"] == ("False", "ImagePullFailed")
    assert conditions(s)["Degraded"] == ("True", "ImagePullFailed")
    s = compose(
        h(desired=None), outcome=status.Outcome(blocked=F(reason=R.RUNTIME_AMBIGUOUS, message="a, b"))
    )
    assert conditions(s)["Ready"] == ("False", "RuntimeAmbiguous")
    assert conditions(s)["Reconciled"] == ("False", "RuntimeAmbiguous")


def test_cache_conditions() -> None:
    s = compose(h(prewarm=F(reason=R.PREWARMING, message="")))
    assert conditions(s)["CacheReady"] == ("False", "Prewarming")
    s = compose(h(prewarm=F(reason=R.PREWARMED, message="")))
    assert conditions(s)["CacheReady"] == ("True", "Prewarmed")
    s = compose(
        h(prewarm=F(reason=R.PREWARMED, message="")),
        outcome=status.Outcome(cache_problem=F(reason=R.CACHE_SPEC_CHANGED, message="pvc")),
    )
    assert conditions(s)["CacheReady"] == ("False", "CacheSpecChanged")
    assert "CacheReady" not in conditions(compose(h()))


def test_transition_time_and_message_are_kept_while_nothing_changes() -> None:
    first = compose(h(failure=F(reason=R.IMAGE_PULL_FAILED, message="ErrImagePull")), now="T0")
    again = compose(
        h(failure=F(reason=R.IMAGE_PULL_FAILED, message="ImagePullBackOff")), previous=first, now="T1"
    )
    assert again == first
    assert status.same_status(first, again)
    assert status.transitions(first, again) == []
    fixed = compose(h(ready=1), previous=again, now="T2")
    degraded = next(c for c in fixed["conditions"] if c["type"] == "Degraded")
    autoscaling = next(c for c in fixed["conditions"] if c["type"] == "AutoscalingReady")
    assert degraded["lastTransitionTime"] == "T2" and autoscaling["lastTransitionTime"] == "T0"


def test_transitions_one_event_per_reason() -> None:
    first = compose(h(progress=F(reason=R.ACTIVATING, message="")))
    changes = status.transitions(None, first)
    assert {(c.type, c.reason) for c in changes} == {
        ("Ready", "Activating"),
        ("AutoscalingReady", "ScaledObjectApplied"),
        ("Reconciled", "Applied"),
    }  # no "Degraded=False" event
    failed = compose(
        h(failure=F(reason=R.PREWARM_FAILED, message="m"), prewarm=F(reason=R.PREWARM_FAILED, message="m")),
        previous=first,
    )
    changes = status.transitions(first, failed)
    assert [(c.type, c.reason, c.warning) for c in changes] == [("Degraded", "PrewarmFailed", True)]


def test_warning_classification() -> None:
    assert status.Transition(type=T.DEGRADED, status="True", reason=R.OOM_KILLED, message="").warning
    assert not status.Transition(type=T.DEGRADED, status="False", reason=R.HEALTHY, message="").warning
    assert status.Transition(type=T.RECONCILED, status="False", reason=R.INVALID_SPEC, message="").warning
    assert not status.Transition(type=T.CACHE_READY, status="False", reason=R.PREWARMING, message="").warning
    assert not status.Transition(type=T.READY, status="False", reason=R.MODEL_LOADING, message="").warning


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
    crash = F(
        reason=R.CRASH_LOOP_BACK_OFF, message="pod p container c keeps exiting (exit code 1); 3 restarts"
    )
    between = F(reason=R.CONTAINER_RESTARTING, message="pod p container c restarted 4 times")
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


@pytest.mark.parametrize(
    ("health_", "reason"),
    [
        (h(desired=0, progress=F(reason=R.SCALED_TO_ZERO, message="")), "Inactive"),
        (h(desired=None), "Inactive"),
        (h(ready=0, desired=1, progress=F(reason=R.MODEL_LOADING, message="")), "Progressing"),
        (h(ready=1, desired=2), "Progressing"),
        (
            health.Health(
                ready_replicas=2,
                desired_replicas=2,
                progress=None,
                failure=None,
                prewarm=None,
                activation=None,
                rolling=True,
            ),
            "Progressing",
        ),
        (h(ready=2, desired=2), "Healthy"),
    ],
)
def test_degraded_false_says_inactive_progressing_or_healthy(health_: health.Health, reason: str) -> None:
    assert conditions(compose(health_))["Degraded"] == ("False", reason)


def test_no_event_between_the_quiet_degraded_reasons() -> None:
    loading = compose(h(ready=0, desired=1, progress=F(reason=R.MODEL_LOADING, message="")))
    serving = compose(h(ready=1, desired=1), previous=loading)
    zero = compose(h(desired=0, progress=F(reason=R.SCALED_TO_ZERO, message="")), previous=serving)
    assert all(t.type != "Degraded" for t in status.transitions(loading, serving))
    assert all(t.type != "Degraded" for t in status.transitions(serving, zero))


def test_replicas_beyond_the_cache_node_are_explained() -> None:
    full = F(reason=R.CACHE_NODE_FULL, message="1 backend pod(s) cannot be scheduled")
    s = compose(
        health.Health(
            ready_replicas=1,
            desired_replicas=2,
            progress=None,
            failure=None,
            prewarm=None,
            activation=None,
            node_full=full,
        )
    )
    assert conditions(s)["CacheReady"] == ("False", "CacheNodeFull")
    assert conditions(s)["Ready"] == ("True", "Available")
    [change] = [t for t in status.transitions(None, s) if t.type == "CacheReady"]
    assert change.warning


def test_the_writer_takes_only_declared_types_and_reasons() -> None:
    undeclared: Any = "Serving"
    with pytest.raises(TypeError, match="undeclared"):
        status.compose(
            previous=None,
            generation=1,
            health=h(progress=F(reason=undeclared, message="")),
            outcome=status.Outcome(),
            activation=None,
        )
    with pytest.raises(ValueError):
        status.transitions(None, {"conditions": [{"type": "Reconciled", "status": "True", "reason": "Nope"}]})


TROUBLESHOOTING = pathlib.Path(__file__).resolve().parents[2] / "docs" / "troubleshooting.md"


def _documented() -> dict[str, tuple[set[str], set[str]]]:
    """Per reason section of docs/troubleshooting.md: the `Type=Status` and phases of its first paragraph."""
    text = TROUBLESHOOTING.read_text(encoding="utf-8")
    found = {}
    for match in re.finditer(r"^### (\w+)\n\n(.*?)\n\n", text, re.M | re.S):
        paragraph = match.group(2)
        pairs = set(
            re.findall(
                r"`((?:Ready|Degraded|AutoscalingReady|Reconciled|CacheReady)=(?:True|False))`", paragraph
            )
        )
        phases = set(re.findall(r"phase `(\w+)`", paragraph))
        found[match.group(1)] = (pairs, phases)
    return found


def test_troubleshooting_names_every_condition_the_operator_writes_and_no_other() -> None:
    documented = _documented()
    for reason in R:
        pairs = {f"{t}={'True' if ok else 'False'}" for t, ok, r in status.WRITES if r == reason}
        phases = {str(status.PHASE_OF[reason])} if reason in status.PHASE_OF else set()
        if reason == R.AVAILABLE:
            phases = {"Ready"}
        assert reason.value in documented, f"no section for {reason}"
        assert documented[reason.value] == (pairs, phases), reason


@hypothesis.settings(max_examples=300, deadline=None)
@hypothesis.given(
    ready=st.integers(0, 2),
    desired=st.one_of(st.none(), st.integers(0, 2)),
    progress=st.one_of(st.none(), st.sampled_from([*status.PHASE_OF][:5])),
    failure=st.one_of(st.none(), st.sampled_from(sorted(status.FAILURES))),
    prewarm=st.one_of(st.none(), st.sampled_from([R.PREWARMING, R.PREWARMED, R.PREWARM_FAILED])),
    blocked=st.one_of(st.none(), st.sampled_from(sorted(status.BLOCKING))),
    autoscaling=st.one_of(st.none(), st.sampled_from([R.AUTOSCALING_UNAVAILABLE, R.SCALED_OBJECT_NOT_READY])),
    placed=st.sampled_from(list(status.ScaledObject)),
    kept=st.booleans(),
)
def test_phase_and_conditions_agree_whatever_the_pass_found(
    ready: int,
    desired: int | None,
    progress: Any,
    failure: Any,
    prewarm: Any,
    blocked: Any,
    autoscaling: Any,
    placed: status.ScaledObject,
    kept: bool,
) -> None:
    def f(reason: Any) -> F | None:
        return None if reason is None else F(reason=reason, message=str(reason))

    outcome = status.Outcome(
        blocked=f(blocked),
        autoscaling=f(autoscaling),
        scaled_object=placed,
        kept_runtime=f(R.RUNTIME_KEPT) if kept else None,
    )
    s = compose(
        h(ready=ready, desired=desired, progress=f(progress), failure=f(failure), prewarm=f(prewarm)),
        outcome=outcome,
    )
    c = conditions(s)
    for type_, (state, reason) in c.items():
        assert (T(type_), state == "True", R(reason)) in status.WRITES
    assert (s["phase"] == "Degraded") == (c["Degraded"][0] == "True")
    if s["phase"] not in ("Degraded",):
        assert (s["phase"] == "Ready") == (c["Ready"][0] == "True")
    if placed is status.ScaledObject.ABSENT:  # nothing applied: no "applied" claim
        assert c["AutoscalingReady"][0] == "False"
    if blocked is not None:
        assert c["Reconciled"] == ("False", str(blocked))
