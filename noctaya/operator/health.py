"""What Kubernetes says about a service's backend: pure functions from watched objects to health.

Input is what the operator watches for one LLMService — the backend Deployment, the Pods with the
service label, the prewarm Job — as plain ``dict`` bodies. Output is a :class:`Health`: ready replicas,
the progress reason while not ready (``Activating``, ``Starting``, ``SchedulingDelayed``,
``ModelLoading``, ``ScaledToZero``), the active hard failure if any (``ImagePullFailed``, ``OOMKilled``,
``CrashLoopBackOff``, ``ContainerRestarting``, ``ProgressDeadlineExceeded``, ``PrewarmFailed``), whether
the Deployment is still rolling out or activating (``Degraded=False/Progressing``), the replicas that do
not fit on the node of a ReadWriteOnce cache they must share (``CacheNodeFull``) and the phase timings of
the activation that made the backend Ready. Reasons are :class:`noctaya.api.servicestatus.Reason` values.

Rules: only Pods selected by the backend Deployment's ``matchLabels`` count (the gateway Pods carry the
service label too); Pods being deleted and Pods that finished (``Succeeded``/``Failed``) are ignored;
a container that is ready again has recovered (its past termination no longer counts); when several
failures are present the most specific wins (:data:`FAILURE_ORDER`).
Nothing here does I/O, so every rule is unit-tested directly.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from noctaya.api import durations, servicestatus

Body = Mapping[str, Any]
Reason = servicestatus.Reason

IMAGE_PULL_REASONS: Final = frozenset(
    {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull", "RegistryUnavailable"}
)
FAILURE_ORDER: Final = (
    Reason.PREWARM_FAILED,
    Reason.IMAGE_PULL_FAILED,
    Reason.OOM_KILLED,
    Reason.CRASH_LOOP_BACK_OFF,
    Reason.CONTAINER_RESTARTING,
    Reason.PROGRESS_DEADLINE_EXCEEDED,
)
PROGRESS_ORDER: Final = (Reason.SCHEDULING_DELAYED, Reason.MODEL_LOADING, Reason.STARTING, Reason.ACTIVATING)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Finding:
    """One observation with a condition reason and a message a user can act on."""

    reason: Reason
    message: str


@dataclasses.dataclass(frozen=True, kw_only=True)
class Activation:
    """Phase timings of one backend Pod, in seconds since the Pod was created."""

    pod: str
    created_at: str
    scheduled: float | None
    started: float | None  # image pulled and every container started
    ready: float

    ready_at: str

    def stages(self) -> list[tuple[str, float]]:
        """Per-stage durations: Scheduled (created → bound), ImagePulled (→ containers running),
        ModelLoaded (→ Ready). A stage whose end is unknown is folded into the next one."""
        out: list[tuple[str, float]] = []
        last = 0.0
        for name, moment in (
            ("Scheduled", self.scheduled),
            ("ImagePulled", self.started),
            ("ModelLoaded", self.ready),
        ):
            if moment is None:
                continue
            moment = max(moment, last)
            out.append((name, moment - last))
            last = moment
        return out

    def as_status(self) -> dict[str, Any]:
        """The ``status.lastActivation`` shape of the API (``startedAt``, ``readyAt``, ``phases``)."""
        return {
            "startedAt": self.created_at,
            "readyAt": self.ready_at,
            "phases": [{"name": name, "duration": go_duration(seconds)} for name, seconds in self.stages()],
        }


def go_duration(seconds: float) -> str:
    """Seconds, rounded to the millisecond, in Go's duration form: ``850ms``, ``2.5s``, ``1m30.25s``."""
    return str(durations.Duration.of(milliseconds=round(seconds * 1000)))


@dataclasses.dataclass(frozen=True, kw_only=True)
class Health:
    ready_replicas: int
    desired_replicas: int | None  # None: no backend Deployment yet
    progress: Finding | None  # why not ready yet (None when ready)
    failure: Finding | None  # the active hard failure (None when healthy)
    prewarm: Finding | None  # prewarm Job state: Prewarming / Prewarmed / PrewarmFailed
    activation: Activation | None  # the earliest-ready current backend Pod
    rolling: bool = False  # the Deployment has not rolled every desired replica out and Ready yet
    node_full: Finding | None = None  # replicas pinned to the cache's node that do not fit there
    claim_unbound: Finding | None = None  # replicas waiting for a cache claim bound to no volume


def parse_time(text: object) -> datetime.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        value = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=datetime.UTC)


def _condition(obj: Body, type_: str) -> Mapping[str, Any] | None:
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return None


def selects(selector: Mapping[str, Any] | None, pod: Body) -> bool:
    """Whether a Deployment's ``spec.selector`` (``matchLabels`` only) selects the Pod."""
    match = (selector or {}).get("matchLabels") or {}
    if not match:
        return False
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in match.items())


def live_pods(deployment: Body | None, pods: Iterable[Body]) -> list[Body]:
    """Backend Pods that count: selected by the Deployment, not terminating, not finished."""
    if deployment is None:
        return []
    selector = (deployment.get("spec") or {}).get("selector")
    return [
        p
        for p in pods
        if selects(selector, p)
        and not (p.get("metadata") or {}).get("deletionTimestamp")
        and (p.get("status") or {}).get("phase") not in {"Succeeded", "Failed"}
    ]


def is_ready(pod: Body) -> bool:
    cond = _condition(pod, "Ready")
    return bool(cond and cond.get("status") == "True")


def _containers(pod: Body) -> list[Mapping[str, Any]]:
    status = pod.get("status") or {}
    found = list(status.get("initContainerStatuses") or []) + list(status.get("containerStatuses") or [])
    return [c for c in found if isinstance(c, Mapping)]


def pod_failure(pod: Body) -> Finding | None:
    """The hard failure one Pod shows, most specific first."""
    name = (pod.get("metadata") or {}).get("name", "?")
    found: dict[str, Finding] = {}
    for c in _containers(pod):
        cname = c.get("name", "?")
        waiting = (c.get("state") or {}).get("waiting") or {}
        terminated = (c.get("state") or {}).get("terminated") or {}
        # a past termination matters while the container has not recovered; once it is ready again the
        # kubelet still keeps ``lastState`` and ``restartCount`` for the Pod's lifetime
        last = {} if c.get("ready") else (c.get("lastState") or {}).get("terminated") or {}
        restarts = int(c.get("restartCount") or 0)
        if waiting.get("reason") in IMAGE_PULL_REASONS:
            found.setdefault(
                Reason.IMAGE_PULL_FAILED,
                Finding(
                    reason=Reason.IMAGE_PULL_FAILED,
                    message=f"pod {name} container {cname}: {waiting.get('reason')}: "
                    f"{waiting.get('message') or c.get('image', '')}".rstrip(": "),
                ),
            )
        if "OOMKilled" in {last.get("reason"), terminated.get("reason")}:
            found.setdefault(
                Reason.OOM_KILLED,
                Finding(
                    reason=Reason.OOM_KILLED,
                    message=f"pod {name} container {cname} was killed for exceeding its memory limit "
                    f"({restarts} restarts); raise spec.resources.memory",
                ),
            )
        if waiting.get("reason") == "CrashLoopBackOff":
            code = last.get("exitCode")
            found.setdefault(
                Reason.CRASH_LOOP_BACK_OFF,
                Finding(
                    reason=Reason.CRASH_LOOP_BACK_OFF,
                    message=f"pod {name} container {cname} keeps exiting"
                    f"{f' (exit code {code})' if code is not None else ''}; {restarts} restarts",
                ),
            )
        elif restarts > 0 and last:
            found.setdefault(
                Reason.CONTAINER_RESTARTING,
                Finding(
                    reason=Reason.CONTAINER_RESTARTING,
                    message=f"pod {name} container {cname} restarted {restarts} times "
                    f"(last exit: {last.get('reason') or 'Error'}, code {last.get('exitCode')})",
                ),
            )
    for reason in FAILURE_ORDER:
        if reason in found:
            return found[reason]
    return None


def pod_progress(pod: Body) -> Finding:
    """Why a live, not-ready Pod is not ready yet (assuming no hard failure)."""
    name = (pod.get("metadata") or {}).get("name", "?")
    scheduled = _condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        if scheduled.get("reason") == "Unschedulable":
            return Finding(
                reason=Reason.SCHEDULING_DELAYED,
                message=f"pod {name} is unschedulable: {scheduled.get('message') or 'no fit'}",
            )
        return Finding(reason=Reason.STARTING, message=f"pod {name} is waiting to be scheduled")
    if scheduled is None:
        return Finding(reason=Reason.STARTING, message=f"pod {name} is waiting to be scheduled")
    containers = [
        c for c in (pod.get("status") or {}).get("containerStatuses") or [] if isinstance(c, Mapping)
    ]
    if containers and all((c.get("state") or {}).get("running") for c in containers):
        return Finding(
            reason=Reason.MODEL_LOADING,
            message=f"pod {name} is running and loading the model (not Ready yet)",
        )
    return Finding(reason=Reason.STARTING, message=f"pod {name} is pulling its image and starting")


def deployment_failure(deployment: Body | None) -> Finding | None:
    if deployment is None or (deployment.get("spec") or {}).get("replicas") == 0:
        return None
    cond = _condition(deployment, "Progressing")
    if cond and cond.get("status") == "False" and cond.get("reason") == "ProgressDeadlineExceeded":
        return Finding(
            reason=Reason.PROGRESS_DEADLINE_EXCEEDED,
            message=cond.get("message") or "the backend Deployment exceeded its progress deadline",
        )
    return None


def deployment_rolling(deployment: Body | None, *, ready: int) -> bool:
    """Whether the Deployment is still on its way to ``spec.replicas`` Ready Pods of its newest template."""
    if deployment is None:
        return False
    spec = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    desired = int(spec.get("replicas") or 0)
    generation = (deployment.get("metadata") or {}).get("generation")
    if generation is not None and int(status.get("observedGeneration") or 0) < int(generation):
        return True
    return (
        ready < desired
        or int(status.get("updatedReplicas") or 0) < desired
        or (int(status.get("replicas") or 0) > desired)
    )


def pinned_to_one_node(deployment: Body | None) -> bool:
    """Whether the backend's Pods must share a node (required pod affinity on the hostname), as
    replicas sharing one ReadWriteOnce cache claim are rendered."""
    template = ((deployment or {}).get("spec") or {}).get("template") or {}
    affinity = ((template.get("spec") or {}).get("affinity") or {}).get("podAffinity") or {}
    terms = affinity.get("requiredDuringSchedulingIgnoredDuringExecution") or []
    return any(isinstance(t, Mapping) and t.get("topologyKey") == "kubernetes.io/hostname" for t in terms)


def _unschedulable(pod: Body) -> str | None:
    """The scheduler's message for a Pod it cannot place, or None."""
    c = _condition(pod, "PodScheduled")
    if c is None or c.get("status") != "False" or c.get("reason") != "Unschedulable":
        return None
    return str(c.get("message") or "")


#: what the scheduler says of a Pod whose claim has no volume yet (kube-scheduler's VolumeBinding)
UNBOUND_CLAIM: Final = "unbound immediate PersistentVolumeClaims"


def node_full(deployment: Body | None, live: Sequence[Body]) -> Finding | None:
    """Backend Pods that cannot be scheduled while every replica must run on the cache's node."""
    if not pinned_to_one_node(deployment):
        return None
    stuck = [p for p in live if (m := _unschedulable(p)) is not None and UNBOUND_CLAIM not in m]
    if not stuck:
        return None
    names = ", ".join(sorted(str((p.get("metadata") or {}).get("name", "?")) for p in stuck)[:5])
    return Finding(
        reason=Reason.CACHE_NODE_FULL,
        message=f"{len(stuck)} backend pod(s) cannot be scheduled ({names}): replicas share the "
        "ReadWriteOnce cache claim, so they all run on one node, and that node fits no more of them; "
        "use cache strategy SharedPVC (a ReadWriteMany class) or HostPath to spread replicas, or lower "
        "spec.scaling.max to what one node holds",
    )


def claim_unbound(live: Sequence[Body], claims: Sequence[Body]) -> Finding | None:
    """Backend Pods waiting because a claim they mount is bound to no volume, naming the claim."""
    stuck = [p for p in live if UNBOUND_CLAIM in (_unschedulable(p) or "")]
    if not stuck:
        return None
    pending = [c for c in claims if ((c.get("status") or {}).get("phase") or "Pending") == "Pending"]
    names = ", ".join(sorted(str((p.get("metadata") or {}).get("name", "?")) for p in stuck)[:5])
    if pending:
        claim = pending[0]
        name = (claim.get("metadata") or {}).get("name", "?")
        klass = (claim.get("spec") or {}).get("storageClassName")
        where = (
            f"StorageClass {klass!r} provisions no volume for it"
            if klass
            else "it names no StorageClass and the cluster has no default one, or no PersistentVolume "
            "matches it"
        )
        what = f"the cache claim {name} is not bound: {where}"
    else:
        what = "a claim they mount is not bound to a volume"
    return Finding(
        reason=Reason.CACHE_CLAIM_UNBOUND,
        message=f"{len(stuck)} backend pod(s) wait for storage ({names}): {what}; set spec.cache."
        "storageClassName to a class that provisions volumes, or create a matching PersistentVolume "
        "(kubectl get storageclass, kubectl describe pvc)",
    )


def prewarm_state(job: Body | None) -> Finding | None:
    if job is None:
        return None
    name = (job.get("metadata") or {}).get("name", "?")
    failed = _condition(job, "Failed")
    if failed and failed.get("status") == "True":
        detail = failed.get("message") or failed.get("reason") or "the Job failed"
        return Finding(reason=Reason.PREWARM_FAILED, message=f"prewarm job {name} failed: {detail}")
    complete = _condition(job, "Complete")
    if complete and complete.get("status") == "True":
        return Finding(reason=Reason.PREWARMED, message=f"prewarm job {name} completed")
    return Finding(reason=Reason.PREWARMING, message=f"prewarm job {name} is downloading the model")


def activation_of(pod: Body) -> Activation | None:
    meta = pod.get("metadata") or {}
    created = parse_time(meta.get("creationTimestamp"))
    ready_cond = _condition(pod, "Ready")
    ready = parse_time(ready_cond.get("lastTransitionTime")) if ready_cond else None
    if created is None or ready is None or not is_ready(pod):
        return None
    sched_cond = _condition(pod, "PodScheduled")
    scheduled = parse_time(sched_cond.get("lastTransitionTime")) if sched_cond else None
    starts = [
        parse_time(((c.get("state") or {}).get("running") or {}).get("startedAt"))
        for c in (pod.get("status") or {}).get("containerStatuses") or []
    ]
    started = max((s for s in starts if s is not None), default=None)

    def since(moment: datetime.datetime | None) -> float | None:
        return None if moment is None else max(0.0, (moment - created).total_seconds())

    return Activation(
        pod=str(meta.get("name", "")),
        created_at=str(meta.get("creationTimestamp")),
        scheduled=since(scheduled),
        started=since(started),
        ready=since(ready) or 0.0,
        ready_at=str(ready_cond.get("lastTransitionTime") if ready_cond else ""),
    )


def assess(
    *, deployment: Body | None, pods: Sequence[Body], prewarm_job: Body | None, claims: Sequence[Body] = ()
) -> Health:
    """Everything the status needs to know about the backend, from the watched objects."""
    live = live_pods(deployment, pods)
    ready = [p for p in live if is_ready(p)]
    desired = None if deployment is None else int((deployment.get("spec") or {}).get("replicas") or 0)
    prewarm = prewarm_state(prewarm_job)

    failures = [f for f in (pod_failure(p) for p in live) if f is not None]
    if (dep := deployment_failure(deployment)) is not None:
        failures.append(dep)
    if prewarm is not None and prewarm.reason == Reason.PREWARM_FAILED:
        failures.append(prewarm)
    failure = min(failures, key=lambda f: FAILURE_ORDER.index(f.reason)) if failures else None

    progress: Finding | None = None
    if not ready:
        not_ready = [pod_progress(p) for p in live]
        if not_ready:
            progress = min(not_ready, key=lambda f: PROGRESS_ORDER.index(f.reason))
        elif deployment is None:
            progress = Finding(reason=Reason.ACTIVATING, message="the backend Deployment is not created yet")
        elif desired == 0:
            progress = Finding(
                reason=Reason.SCALED_TO_ZERO,
                message="the backend is scaled to zero; the next request activates it",
            )
        elif prewarm is not None and prewarm.reason == Reason.PREWARMING:
            progress = Finding(reason=Reason.ACTIVATING, message=prewarm.message)
        else:
            progress = Finding(
                reason=Reason.ACTIVATING, message=f"waiting for {desired} backend pod(s) to be created"
            )
    activations = [a for a in (activation_of(p) for p in ready) if a is not None]
    earliest = min(activations, key=lambda a: (a.created_at, a.ready), default=None)
    return Health(
        ready_replicas=len(ready),
        desired_replicas=desired,
        progress=progress,
        failure=failure,
        prewarm=prewarm,
        activation=earliest,
        rolling=deployment_rolling(deployment, ready=len(ready)),
        node_full=node_full(deployment, live),
        claim_unbound=claim_unbound(live, claims),
    )
