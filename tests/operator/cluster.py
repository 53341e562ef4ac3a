"""A simulated cluster for operator tests: the controllers and kubelets a real cluster would run.

Attached to an :class:`~apiserver.ApiServer`, it plays the Deployment controller (a Pod per replica,
with owner references, ``status.readyReplicas`` and the ``Progressing`` condition), the scheduler and
the kubelet (each Pod moves through scheduling, image pull, container start and readiness, with real
timestamps) and the Job controller (``Complete`` or ``Failed``). Acting as KEDA, a test scales a
Deployment with :meth:`SimulatedCluster.scale`.

Failures are injected per Deployment (:class:`Failure`) and healed with :meth:`SimulatedCluster.heal`,
which replaces the Pods as a rollout would. Scaled-down Pods terminate first (``deletionTimestamp``),
then disappear.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import enum
import uuid
from typing import Any

from tests.operator.apiserver import ApiServer, now_iso

DEPLOYMENTS = "apps/v1/deployments"
PODS = "v1/pods"
JOBS = "batch/v1/jobs"


class Failure(enum.Enum):
    UNSCHEDULABLE = "unschedulable"
    IMAGE_PULL = "image-pull"
    OOM = "oom"
    CRASH_LOOP = "crash-loop"
    RESTARTING = "restarting"
    PROGRESS_DEADLINE = "progress-deadline"
    SLOW_LOAD = "slow-load"  # the model takes very long to load (running, not ready)


@dataclasses.dataclass
class Timings:
    schedule: float = 0.02
    pull: float = 0.03
    load: float = 0.05
    job: float = 0.05
    terminate: float = 0.05


class SimulatedCluster:
    def __init__(self, server: ApiServer, *, timings: Timings | None = None) -> None:
        self.server = server
        self.timings = timings or Timings()
        self.faults: dict[tuple[str, str], Failure] = {}
        self.job_fails: set[tuple[str, str]] = set()
        #: (namespace, deployment) -> how many of its Pods the one node its Pods must share holds
        self.node_capacity: dict[tuple[str, str], int] = {}
        self._pods: dict[tuple[str, str], asyncio.Task[None]] = {}
        self._jobs: dict[tuple[str, str, str], asyncio.Task[None]] = {}
        self._work: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self._loop_task: asyncio.Task[None] | None = None
        self._unsubscribe = server.subscribe(self._on_change)

    async def __aenter__(self) -> SimulatedCluster:
        self._loop_task = asyncio.create_task(self._controller(), name="simulated deployment controller")
        for dep in self.server.items(DEPLOYMENTS):
            self._work.put_nowait((dep["metadata"]["namespace"], dep["metadata"]["name"]))
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._unsubscribe()
        tasks = [t for t in [self._loop_task, *self._pods.values(), *self._jobs.values()] if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ test controls
    def fail(self, namespace: str, deployment: str, failure: Failure) -> None:
        self.faults[namespace, deployment] = failure
        self._roll(namespace, deployment)

    def heal(self, namespace: str, deployment: str) -> None:
        self.faults.pop((namespace, deployment), None)
        self._roll(namespace, deployment)

    def fail_job(self, namespace: str, name: str) -> None:
        self.job_fails.add((namespace, name))

    def scale(self, namespace: str, deployment: str, replicas: int) -> None:
        dep = self.server.obj(DEPLOYMENTS, namespace, deployment)
        assert dep is not None, f"no Deployment {namespace}/{deployment}"
        dep = copy.deepcopy(dep)
        dep["spec"]["replicas"] = replicas
        self.server.upsert(DEPLOYMENTS, dep)

    def pods_of(self, namespace: str, deployment: str) -> list[dict[str, Any]]:
        dep = self.server.obj(DEPLOYMENTS, namespace, deployment)
        if dep is None:
            return []
        uid = dep["metadata"]["uid"]
        return [
            p
            for p in self.server.items(PODS, namespace)
            if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or [])
        ]

    # ------------------------------------------------------------------ controllers
    def _on_change(self, event_type: str, resource: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        ns, name, uid = str(meta.get("namespace")), str(meta.get("name")), str(meta.get("uid"))
        if resource == DEPLOYMENTS:
            self._work.put_nowait((ns, name))
        elif resource == PODS and event_type == "DELETED":
            task = self._pods.pop((ns, name), None)
            if task is not None:
                task.cancel()
            for ref in meta.get("ownerReferences") or []:
                if ref.get("kind") == "Deployment":
                    self._work.put_nowait((ns, str(ref["name"])))
        elif resource == JOBS:
            key = (ns, name, uid)
            if event_type == "ADDED" and key not in self._jobs:
                self._jobs[key] = asyncio.get_running_loop().create_task(self._run_job(ns, name, uid))
            elif event_type == "DELETED":
                task = self._jobs.pop(key, None)
                if task is not None:
                    task.cancel()

    def _roll(self, namespace: str, deployment: str) -> None:
        for pod in self.pods_of(namespace, deployment):
            self.server.remove(PODS, namespace, pod["metadata"]["name"])
        self._work.put_nowait((namespace, deployment))

    async def _controller(self) -> None:
        while True:
            ns, name = await self._work.get()
            dep = self.server.obj(DEPLOYMENTS, ns, name)
            if dep is None:
                continue
            pods = [p for p in self.pods_of(ns, name) if not p["metadata"].get("deletionTimestamp")]
            want = int(dep["spec"].get("replicas", 1))
            for _ in range(want - len(pods)):
                self._create_pod(dep)
            for pod in pods[want:] if want < len(pods) else []:
                self._terminate(ns, pod["metadata"]["name"])
            self._deployment_status(ns, name)

    def _create_pod(self, dep: dict[str, Any]) -> None:
        meta = dep["metadata"]
        template = dep["spec"].get("template") or {}
        name = f"{meta['name']}-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:5]}"
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "labels": dict((template.get("metadata") or {}).get("labels") or {}),
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": meta["name"],
                        "uid": meta["uid"],
                        "controller": True,
                    }
                ],
            },
            "spec": copy.deepcopy(template.get("spec") or {}),
            "status": {"phase": "Pending"},
        }
        self.server.upsert(PODS, pod)
        key = (meta["namespace"], name)
        self._pods[key] = asyncio.get_running_loop().create_task(
            self._kubelet(meta["namespace"], meta["name"], name)
        )

    def _terminate(self, namespace: str, name: str) -> None:
        self.server.mark_deleting(PODS, namespace, name)

        async def finish() -> None:
            await asyncio.sleep(self.timings.terminate)
            self.server.remove(PODS, namespace, name)

        task = self._pods.pop((namespace, name), None)
        if task is not None:
            task.cancel()
        self._pods[(namespace, name)] = asyncio.get_running_loop().create_task(finish())

    def _deployment_status(self, namespace: str, name: str) -> None:
        dep = self.server.obj(DEPLOYMENTS, namespace, name)
        if dep is None:
            return
        pods = [p for p in self.pods_of(namespace, name) if not p["metadata"].get("deletionTimestamp")]
        ready = sum(1 for p in pods if _ready(p))
        progressing = {
            "type": "Progressing",
            "status": "True",
            "reason": "NewReplicaSetAvailable",
            "message": f'ReplicaSet "{name}" has successfully progressed.',
        }
        if self.faults.get((namespace, name)) == Failure.PROGRESS_DEADLINE and ready == 0:
            progressing = {
                "type": "Progressing",
                "status": "False",
                "reason": "ProgressDeadlineExceeded",
                "message": f'ReplicaSet "{name}" has timed out progressing.',
            }
        status = {
            "observedGeneration": dep["metadata"]["generation"],
            "replicas": len(pods),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "updatedReplicas": len(pods),
            "conditions": [{"type": "Available", "status": "True" if ready else "False"}, progressing],
        }
        if dep.get("status") != status:
            self.server.patch_status(DEPLOYMENTS, namespace, name, status)

    async def _kubelet(self, namespace: str, deployment: str, name: str) -> None:
        t = self.timings
        fault = self.faults.get((namespace, deployment))
        pod = self.server.obj(PODS, namespace, name)
        assert pod is not None
        containers = [c.get("name", "main") for c in (pod["spec"].get("containers") or [{"name": "main"}])]

        def update(**status: Any) -> None:
            current = self.server.obj(PODS, namespace, name)
            if current is not None:
                self.server.patch_status(PODS, namespace, name, {**(current.get("status") or {}), **status})
                self._deployment_status(namespace, deployment)

        def waiting(reason: str, message: str = "") -> list[dict[str, Any]]:
            return [
                {
                    "name": c,
                    "ready": False,
                    "restartCount": 0,
                    "image": "img",
                    "state": {"waiting": {"reason": reason, "message": message}},
                }
                for c in containers
            ]

        await asyncio.sleep(t.schedule)
        capacity = self.node_capacity.get((namespace, deployment))
        placed = [
            p
            for p in self.pods_of(namespace, deployment)
            if p["metadata"]["name"] != name
            and not p["metadata"].get("deletionTimestamp")
            and any(c.get("type") == "PodScheduled" and c.get("status") == "True" for c in _conditions(p))
        ]
        if capacity is not None and len(placed) >= capacity:
            update(
                conditions=[
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, "
                        "2 node(s) didn't match pod affinity rules.",
                        "lastTransitionTime": now_iso(),
                    }
                ]
            )
            return
        if fault is Failure.UNSCHEDULABLE:
            update(
                conditions=[
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "Unschedulable",
                        "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                        "lastTransitionTime": now_iso(),
                    }
                ]
            )
            return
        scheduled = {"type": "PodScheduled", "status": "True", "lastTransitionTime": now_iso()}
        update(conditions=[scheduled], containerStatuses=waiting("ContainerCreating"))
        await asyncio.sleep(t.pull)
        if fault is Failure.IMAGE_PULL:
            update(containerStatuses=waiting("ErrImagePull", 'pull access denied for "img"'))
            await asyncio.sleep(t.pull)
            update(containerStatuses=waiting("ImagePullBackOff", 'Back-off pulling image "img"'))
            return
        started = now_iso()
        running = [
            {
                "name": c,
                "ready": False,
                "restartCount": 0,
                "image": "img",
                "state": {"running": {"startedAt": started}},
            }
            for c in containers
        ]
        not_ready = {"type": "Ready", "status": "False", "lastTransitionTime": started}
        update(phase="Running", conditions=[scheduled, not_ready], containerStatuses=running)
        if fault in {Failure.OOM, Failure.CRASH_LOOP}:
            await asyncio.sleep(t.load / 2)
            reason, code = ("OOMKilled", 137) if fault is Failure.OOM else ("Error", 1)
            update(
                containerStatuses=[
                    {
                        **c,
                        "restartCount": 3,
                        "state": {
                            "waiting": {
                                "reason": "CrashLoopBackOff",
                                "message": "back-off 40s restarting failed container",
                            }
                        },
                        "lastState": {"terminated": {"reason": reason, "exitCode": code}},
                    }
                    for c in running
                ]
            )
            return
        if fault is Failure.RESTARTING:
            await asyncio.sleep(t.load / 2)
            update(
                containerStatuses=[
                    {**c, "restartCount": 1, "lastState": {"terminated": {"reason": "Error", "exitCode": 2}}}
                    for c in running
                ]
            )
            return
        if fault in {Failure.SLOW_LOAD, Failure.PROGRESS_DEADLINE}:
            return  # loading "forever"
        await asyncio.sleep(t.load)
        ready = {"type": "Ready", "status": "True", "lastTransitionTime": now_iso()}
        update(conditions=[scheduled, ready], containerStatuses=[{**c, "ready": True} for c in running])

    async def _run_job(self, namespace: str, name: str, uid: str) -> None:
        await asyncio.sleep(self.timings.job)
        job = self.server.obj(JOBS, namespace, name)
        if job is None or job["metadata"]["uid"] != uid:
            return
        now = now_iso()
        if (namespace, name) in self.job_fails:
            status = {
                "failed": 4,
                "conditions": [
                    {
                        "type": "Failed",
                        "status": "True",
                        "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit",
                        "lastTransitionTime": now,
                    }
                ],
            }
        else:
            status = {
                "succeeded": 1,
                "completionTime": now,
                "conditions": [{"type": "Complete", "status": "True", "lastTransitionTime": now}],
            }
        with contextlib.suppress(KeyError):
            self.server.patch_status(JOBS, namespace, name, status)


def _conditions(pod: dict[str, Any]) -> list[dict[str, Any]]:
    return list((pod.get("status") or {}).get("conditions") or [])


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or []
    )
