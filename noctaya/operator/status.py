"""From what the reconciler did and what Kubernetes reports to ``LLMService.status`` — pure functions.

:func:`compose` builds the whole status (``phase``, ``resolvedRuntime``, ``replicas``, ``endpointURL``,
``conditions`` and ``lastActivation``). Conditions follow ``metav1.Condition``: ``lastTransitionTime``
only moves when ``status`` changes, every condition carries the reconciled ``observedGeneration``.
:func:`transitions` lists the condition changes worth a Kubernetes Event: a change of ``status`` or
``reason``; repeating the same observation yields nothing, so neither status writes nor events repeat.

Every condition type and reason comes from :mod:`noctaya.api.servicestatus` (``ConditionType``,
``Reason``): the writer only takes those enums, so the operator can write nothing the API does not
declare. Types: ``Ready``, ``Degraded``, ``AutoscalingReady`` (docs/api-reference.md) and the
extensions ``Reconciled`` (spec, runtime selection and apply problems) and ``CacheReady`` (prewarm,
create-once cache objects and replicas that do not fit on the node of a ReadWriteOnce cache).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final

from noctaya.api import servicestatus
from noctaya.operator import health as health_

ConditionType = servicestatus.ConditionType
Reason = servicestatus.Reason

WARNING_WHEN: Final[dict[str, str]] = {  # condition type -> the status that is bad news
    ConditionType.DEGRADED: "True",
    ConditionType.AUTOSCALING_READY: "False",
    ConditionType.RECONCILED: "False",
    ConditionType.CACHE_READY: "False",
}


#: reasons that are one observation seen at different moments, most specific first: a crash-looping
#: container is waiting in back-off, then running (not ready) after its restart, then in back-off again
SAME_OBSERVATION: Final = (Reason.CRASH_LOOP_BACK_OFF, Reason.CONTAINER_RESTARTING)

#: reasons that only say "on its way": never a Warning
PROGRESS: Final = servicestatus.PROGRESS_REASONS

Phase = servicestatus.Phase
_REASONS: Final = frozenset(r.value for r in Reason)

#: what keeps the spec from being applied (a pass that stops says why with one of these)
BLOCKING: Final = frozenset(
    {
        Reason.RUNTIME_NOT_FOUND,
        Reason.RUNTIME_AMBIGUOUS,
        Reason.INVALID_SPEC,
        Reason.NOT_IMPLEMENTED,
        Reason.OBJECT_NOT_CONTROLLED,
        Reason.APPLY_REFUSED,
    }
)
FAILURES: Final = servicestatus.FAILURE_REASONS
#: reasons whose message says what this pass found (which object was refused, which runtime is kept,
#: whether the ScaledObject is this spec's): rewritten whenever it changes, unlike observations
RESTATED: Final = BLOCKING | {
    Reason.OBJECT_SPEC_CHANGED,
    Reason.CACHE_SPEC_CHANGED,
    Reason.RUNTIME_KEPT,
    Reason.SCALED_OBJECT_APPLIED,
}
#: the progress reasons of a False ``Ready`` (health.assess) and the phase each stands for
_ON_ITS_WAY: Final = {
    Reason.ACTIVATING: Phase.LOADING,
    Reason.STARTING: Phase.LOADING,
    Reason.MODEL_LOADING: Phase.LOADING,
    Reason.SCHEDULING_DELAYED: Phase.LOADING,
    Reason.SCALED_TO_ZERO: Phase.SCALED_TO_ZERO,
}
#: the phase of each reason a False ``Ready`` can carry (failures and blocks come with
#: ``Degraded=True``, hence ``Degraded``)
PHASE_OF: Final[Mapping[Reason, Phase]] = {
    **_ON_ITS_WAY,
    Reason.AUTOSCALING_UNAVAILABLE: Phase.PENDING,
    **{r: Phase.DEGRADED for r in FAILURES | BLOCKING},
}


def _writes() -> frozenset[tuple[ConditionType, bool, Reason]]:
    c = ConditionType
    rows: list[tuple[ConditionType, bool, Reason]] = [(c.READY, True, Reason.AVAILABLE)]
    rows += [(c.READY, False, r) for r in PHASE_OF]
    rows += [(c.DEGRADED, True, r) for r in FAILURES | BLOCKING]
    rows += [(c.DEGRADED, False, r) for r in (Reason.HEALTHY, Reason.INACTIVE, Reason.PROGRESSING)]
    rows += [(c.AUTOSCALING_READY, True, Reason.SCALED_OBJECT_APPLIED)]
    rows += [
        (c.AUTOSCALING_READY, False, r)
        for r in {Reason.AUTOSCALING_UNAVAILABLE, Reason.SCALED_OBJECT_NOT_READY} | BLOCKING
    ]
    rows += [(c.RECONCILED, True, r) for r in (Reason.APPLIED, Reason.RUNTIME_KEPT)]
    rows += [
        (c.RECONCILED, False, r)
        for r in BLOCKING | {Reason.OBJECT_SPEC_CHANGED, Reason.AUTOSCALING_UNAVAILABLE}
    ]
    rows += [(c.CACHE_READY, True, Reason.PREWARMED)]
    rows += [
        (c.CACHE_READY, False, r)
        for r in (
            Reason.CACHE_SPEC_CHANGED,
            Reason.PREWARMING,
            Reason.PREWARM_FAILED,
            Reason.CACHE_NODE_FULL,
            Reason.CACHE_CLAIM_UNBOUND,
        )
    ]
    return frozenset(rows)


#: every (condition type, status, reason) the operator writes; docs/troubleshooting.md names each one
#: in the section of its reason (a test keeps both in step), and :func:`_condition` refuses any other
WRITES: Final = _writes()


class ScaledObject(enum.Enum):
    """Where the KEDA ScaledObject stands after a pass."""

    APPLIED = "applied"  # this pass applied it, or found it as its last apply left it
    EARLIER = "earlier"  # it exists from an earlier pass; this pass did not get as far as applying it
    ABSENT = "absent"  # it does not exist


@dataclasses.dataclass(frozen=True, kw_only=True)
class Outcome:
    """What one reconcile pass achieved, apart from the backend's health."""

    resolved_runtime: str | None = None
    endpoint_url: str | None = None
    autoscaling: health_.Finding | None = None  # AutoscalingUnavailable, or KEDA's ScaledObjectNotReady
    scaled_object: ScaledObject = ScaledObject.APPLIED
    blocked: health_.Finding | None = None  # spec/runtime/apply problem: the spec is not (fully) applied
    cache_problem: health_.Finding | None = None  # a create-once cache object differs from the spec
    other_problem: health_.Finding | None = None  # a create-once object differs, or a name is taken
    kept_runtime: health_.Finding | None = None  # RuntimeKept: another runtime ranks higher now
    warm_window: Mapping[str, Any] | None = None  # status.nextWarmWindow (noctaya.operator.schedules)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Transition:
    type: ConditionType
    status: str
    reason: Reason
    message: str

    @property
    def warning(self) -> bool:
        return WARNING_WHEN.get(self.type) == self.status and self.reason not in PROGRESS


def now_iso() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(type_: ConditionType, ok: bool, reason: Reason, message: str) -> dict[str, Any]:
    """One condition; only the declared combinations (:data:`WRITES`) are accepted."""
    if not isinstance(type_, ConditionType) or not isinstance(reason, Reason):
        raise TypeError(f"undeclared condition {type_!r}/{reason!r}: declare it in noctaya.api.servicestatus")
    if (type_, ok, reason) not in WRITES:
        raise TypeError(f"undeclared condition {type_}={ok}/{reason}: add it to status.WRITES and the docs")
    return {
        "type": str(type_),
        "status": "True" if ok else "False",
        "reason": str(reason),
        "message": message,
    }


def merge_conditions(
    previous: Sequence[Mapping[str, Any]], wanted: Sequence[Mapping[str, Any]], *, generation: int, now: str
) -> list[dict[str, Any]]:
    """Wanted conditions with ``lastTransitionTime`` kept from ``previous`` while the status holds.

    While a condition keeps its status and reason, its message is kept too (except for the
    :data:`RESTATED` reasons, whose message says what this pass found: which object the server
    refused, which runtime is kept): a repeated observation of the same class (``ErrImagePull`` then
    ``ImagePullBackOff``) does not rewrite the status. A crash loop seen between two back-offs
    (:data:`SAME_OBSERVATION`) keeps the reason it already has, so the loop does not alternate the
    reason (and post an event) on every restart.
    """
    old = {c.get("type"): c for c in previous if isinstance(c, Mapping)}
    merged: list[dict[str, Any]] = []
    for cond in wanted:
        before = old.get(cond["type"])
        same = before is not None and before.get("status") == cond["status"]
        since = before.get("lastTransitionTime") if same and before is not None else None
        entry = {**cond, "observedGeneration": generation, "lastTransitionTime": since or now}
        if (
            same
            and before is not None
            and cond["reason"] not in RESTATED
            and _same_class(before.get("reason"), cond["reason"])
        ):
            entry["reason"] = before["reason"]
            if before.get("message"):
                entry["message"] = before["message"]  # same class of observation: no rewrite
        merged.append(entry)
    return merged


def _same_class(before: object, now: str) -> bool:
    """Whether the reason ``now`` is the observation ``before`` already stands for."""
    if before == now:
        return True
    order: tuple[str, ...] = SAME_OBSERVATION
    return before in order and now in order and order.index(str(before)) < order.index(now)


def phase_of(conditions: Sequence[Mapping[str, Any]]) -> Phase:
    """The phase the conditions stand for: ``Degraded`` exactly while ``Degraded=True``; else
    ``Ready`` exactly while ``Ready=True``; else what ``Ready``'s reason says (:data:`PHASE_OF`)."""
    by_type = {c.get("type"): c for c in conditions}
    degraded, ready = by_type.get(ConditionType.DEGRADED) or {}, by_type.get(ConditionType.READY) or {}
    if degraded.get("status") == "True":
        return Phase.DEGRADED
    if ready.get("status") == "True":
        return Phase.READY
    reason = ready.get("reason")
    return PHASE_OF.get(Reason(reason), Phase.PENDING) if reason in _REASONS else Phase.PENDING


def ready_condition(
    *, health: health_.Health, outcome: Outcome, activation: health_.Activation | None
) -> dict[str, Any]:
    if health.ready_replicas > 0:
        message = f"{health.ready_replicas} backend replica(s) ready"
        if activation is not None:  # the event for this transition tells where the cold start went
            stages = ", ".join(f"{name} {health_.go_duration(sec)}" for name, sec in activation.stages())
            message += f"; activation: {stages}"
        return _condition(ConditionType.READY, True, Reason.AVAILABLE, message)
    unavailable = outcome.autoscaling
    if unavailable is not None and unavailable.reason != Reason.AUTOSCALING_UNAVAILABLE:
        unavailable = None  # KEDA's own verdict is AutoscalingReady's; Ready says where the backend is
    why = (
        outcome.blocked
        or unavailable
        or health.failure
        or health.progress
        or health_.Finding(reason=Reason.ACTIVATING, message="waiting for the backend")
    )
    return _condition(ConditionType.READY, False, why.reason, why.message)


def degraded_condition(*, health: health_.Health, outcome: Outcome) -> dict[str, Any]:
    """True with the active failure, or with what blocks the spec while no replica serves; else
    Inactive (nothing runs), Progressing (on its way) or Healthy."""
    if health.failure is not None:
        return _condition(ConditionType.DEGRADED, True, health.failure.reason, health.failure.message)
    if outcome.blocked is not None and health.ready_replicas == 0:
        return _condition(ConditionType.DEGRADED, True, outcome.blocked.reason, outcome.blocked.message)
    if not health.desired_replicas and health.ready_replicas == 0:
        return _condition(
            ConditionType.DEGRADED, False, Reason.INACTIVE, "no backend replica is running (scaled to zero)"
        )
    if health.rolling or health.ready_replicas < (health.desired_replicas or 0):
        ready, desired = health.ready_replicas, health.desired_replicas
        return _condition(
            ConditionType.DEGRADED,
            False,
            Reason.PROGRESSING,
            f"{ready} of {desired} backend replica(s) ready, no failure so far",
        )
    return _condition(ConditionType.DEGRADED, False, Reason.HEALTHY, "no activation failure observed")


def autoscaling_condition(*, outcome: Outcome) -> dict[str, Any]:
    """What KEDA has to scale the backend with: only a ScaledObject that exists is claimed."""
    if outcome.autoscaling is not None and (
        outcome.autoscaling.reason == Reason.AUTOSCALING_UNAVAILABLE
        or outcome.scaled_object is not ScaledObject.ABSENT
    ):
        return _condition(
            ConditionType.AUTOSCALING_READY, False, outcome.autoscaling.reason, outcome.autoscaling.message
        )
    if outcome.scaled_object is ScaledObject.ABSENT:
        why = outcome.blocked or health_.Finding(
            reason=Reason.SCALED_OBJECT_NOT_READY, message="the ScaledObject is not applied yet"
        )
        return _condition(
            ConditionType.AUTOSCALING_READY,
            False,
            why.reason,
            f"no KEDA ScaledObject is applied: {why.message}",
        )
    message = "KEDA ScaledObject with the external-push trigger is applied"
    if outcome.scaled_object is ScaledObject.EARLIER:
        message = (
            "the KEDA ScaledObject of an earlier apply scales the backend; the current spec is not "
            "applied (see Reconciled)"
        )
    return _condition(ConditionType.AUTOSCALING_READY, True, Reason.SCALED_OBJECT_APPLIED, message)


def reconciled_condition(*, outcome: Outcome) -> dict[str, Any]:
    problem = outcome.blocked or outcome.other_problem
    if (
        problem is None
        and outcome.autoscaling is not None
        and outcome.autoscaling.reason == Reason.AUTOSCALING_UNAVAILABLE
    ):
        problem = health_.Finding(
            reason=outcome.autoscaling.reason, message=f"nothing is applied: {outcome.autoscaling.message}"
        )
    if problem is not None:
        return _condition(ConditionType.RECONCILED, False, problem.reason, problem.message)
    if outcome.kept_runtime is not None:
        return _condition(ConditionType.RECONCILED, True, Reason.RUNTIME_KEPT, outcome.kept_runtime.message)
    return _condition(ConditionType.RECONCILED, True, Reason.APPLIED, "every owned object matches the spec")


def cache_condition(*, health: health_.Health, outcome: Outcome) -> dict[str, Any] | None:
    """Present only when there is something to say about the cache."""
    problem = outcome.cache_problem or health.claim_unbound or health.node_full
    if problem is not None:
        return _condition(ConditionType.CACHE_READY, False, problem.reason, problem.message)
    if health.prewarm is not None:
        ok = health.prewarm.reason == Reason.PREWARMED
        return _condition(ConditionType.CACHE_READY, ok, health.prewarm.reason, health.prewarm.message)
    return None


def conditions_of(
    *, health: health_.Health, outcome: Outcome, activation: health_.Activation | None
) -> list[dict[str, Any]]:
    """The conditions of one pass, before they are merged with the previous ones."""
    wanted = [
        ready_condition(health=health, outcome=outcome, activation=activation),
        degraded_condition(health=health, outcome=outcome),
        autoscaling_condition(outcome=outcome),
        reconciled_condition(outcome=outcome),
    ]
    if (cache := cache_condition(health=health, outcome=outcome)) is not None:
        wanted.append(cache)
    return wanted


def compose(
    *,
    previous: Mapping[str, Any] | None,
    generation: int,
    health: health_.Health,
    outcome: Outcome,
    activation: health_.Activation | None,
    now: str | None = None,
    warm_window: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The complete ``status`` for one LLMService (``warm_window``: ``nextWarmWindow``, see
    ``noctaya.operator.schedules``); the phase is read off the conditions, so the two always agree."""
    now = now or now_iso()
    previous = previous or {}
    conditions = merge_conditions(
        previous.get("conditions") or [],
        conditions_of(health=health, outcome=outcome, activation=activation),
        generation=generation,
        now=now,
    )
    status: dict[str, Any] = {
        "phase": str(phase_of(conditions)),
        "resolvedRuntime": outcome.resolved_runtime or previous.get("resolvedRuntime"),
        "replicas": health.ready_replicas,
        "endpointURL": outcome.endpoint_url or previous.get("endpointURL"),
        "observedGeneration": generation,
        "conditions": conditions,
    }
    if activation is not None:
        status["lastActivation"] = activation.as_status()
    elif previous.get("lastActivation"):
        status["lastActivation"] = previous["lastActivation"]
    if warm_window is not None:
        status["nextWarmWindow"] = dict(warm_window)
    return {k: v for k, v in status.items() if v is not None}


def transitions(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> list[Transition]:
    """Condition changes (status or reason) from ``previous`` to ``current``, for events.

    One event per reason: when several conditions change to the same reason at once (``Degraded`` and
    ``CacheReady`` both to ``PrewarmFailed``, ``Ready`` to the failure ``Degraded`` reports), only the
    most telling one — a warning first — is kept.
    """
    old = {c.get("type"): c for c in (previous or {}).get("conditions") or [] if isinstance(c, Mapping)}
    changes: dict[str, Transition] = {}
    for cond in current.get("conditions") or []:
        before = old.get(cond["type"])
        if (
            cond["type"] == ConditionType.DEGRADED
            and cond["status"] == "False"
            and (before is None or before.get("status") == "False")
        ):
            continue  # "nothing wrong" (Healthy, Inactive, Progressing) needs no event; a recovery does
        if before is None or (before.get("status"), before.get("reason")) != (cond["status"], cond["reason"]):
            change = Transition(
                type=ConditionType(cond["type"]),
                status=cond["status"],
                reason=Reason(cond["reason"]),
                message=cond.get("message", ""),
            )
            kept = changes.get(change.reason)
            if kept is None or (change.warning and not kept.warning):
                changes[change.reason] = change
    return list(changes.values())


def same_status(a: Mapping[str, Any] | None, b: Mapping[str, Any]) -> bool:
    """Equal apart from timestamps: the write can be skipped."""

    def strip(s: Mapping[str, Any] | None) -> dict[str, Any]:
        s = dict(s or {})
        s["conditions"] = [
            {k: v for k, v in c.items() if k != "lastTransitionTime"}
            for c in s.get("conditions") or []
            if isinstance(c, Mapping)
        ]
        return s

    return strip(a) == strip(b)
