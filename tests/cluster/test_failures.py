"""Backend failures made by KWOK Stages and the real scheduler, as the operator reports them.

One operator replica; each LLMService keeps one backend replica (``scaling.min: 1``), so the failure
shows without a request. A failure is asked for with the annotation ``fault.noctaya.test/kind`` on the
backend Deployment's Pod template, written under a field manager of the test's own (the operator does
not render that annotation, so its applies keep it); ``tests/cluster/stages.yaml`` turns it into the
kubelet's report. Removing the annotation rolls out healthy Pods again. Each LLMService's gateway runs
as a real process (``tests/cluster/gateways.py``), so KEDA finds its ExternalScaler and scales the
backend to ``scaling.min``.

Aspects:
- image pull failure, crash loop, OOM kill of a rolled-out replica: ``Degraded=True`` with reason
  ``ImagePullFailed``, ``CrashLoopBackOff``, ``OOMKilled``, phase Degraded, and a Warning Event with
  that reason on the LLMService, posted once and the condition not rewritten while the failure goes
  on; after the annotation goes, Ready with ``Degraded=False``;
- a Pod the real scheduler cannot place (more accelerators than the node has): ``Ready=False`` with
  ``SchedulingDelayed``; with the request lowered, Ready;
- a prewarm Job whose Pods exit 1 (a model revision that does not exist; the real Job controller,
  ``backoffLimit`` 3): ``PrewarmFailed``; with the revision fixed in the LLMService, the operator
  replaces the failed Job, the new one completes, ``CacheReady`` turns ``Prewarmed`` and the service
  Ready;
- a gateway Pod's eviction through the Eviction API is refused by the PodDisruptionBudget when only
  one gateway would be left (two gateways: the first eviction is allowed, the second refused, 429).
"""

from __future__ import annotations

import copy
import pathlib
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.cluster import gateways, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import ApiError, wait

pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("cluster")]

GROUP = "/apis/serving.noctaya.io/v1alpha1"
FAULT = "fault.noctaya.test/kind"
PREWARM_NAMESPACE = "noctaya-fault-prewarm"  # prewarm Job Pods of revision no-such-rev fail there


def _condition(status: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions", []) if c["type"] == kind), {})


class Services:
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        self.cluster = cluster
        self.kube = cluster.kube
        self.namespace = namespace
        self.directory = directory
        self.gateways: dict[tuple[str, str], gateways.Process] = {}

    def path(self, name: str, namespace: str | None = None) -> str:
        return f"{GROUP}/namespaces/{namespace or self.namespace}/llmservices/{name}"

    def create(
        self, example: str, *, name: str, namespace: str | None = None, gateway: bool = True, **spec: Any
    ) -> str:
        doc = yaml.safe_load((ROOT / "examples" / example / "llmservice.yaml").read_text())
        doc["metadata"].update(name=name, namespace=namespace or self.namespace)
        doc["spec"].update(copy.deepcopy(spec))
        path = self.path(name, namespace)
        self.kube.apply(path, doc, manager="platform-team")
        key = (namespace or self.namespace, name)
        if (
            gateway and key not in self.gateways
        ):  # the gateway Pod's process, so KEDA finds the ExternalScaler
            address = gateways.loopback()
            gateways.map_scaler_host(self.cluster, namespace=key[0], name=name, address=address)
            self.gateways[key] = gateways.start(
                self.cluster,
                namespace=key[0],
                name=name,
                directory=self.directory,
                address=address,
                engine_address=gateways.loopback(),
            )
        return path

    def stop(self) -> None:
        for gateway in self.gateways.values():
            gateway.stop()

    def status(self, path: str) -> dict[str, Any]:
        return dict(self.kube.get(path).get("status") or {})

    def fault(self, name: str, kind: str | None) -> None:
        """Ask for (or, with None, withdraw) a failure of the backend's Pods."""
        deployment = f"/apis/apps/v1/namespaces/{self.namespace}/deployments/{name}-backend"
        patch = {"spec": {"template": {"metadata": {"annotations": {FAULT: kind}}}}}
        self.kube.patch(deployment, patch, manager="fault-injector")

    def events(self, name: str) -> list[dict[str, Any]]:
        return list(
            self.kube.get(
                f"/api/v1/namespaces/{self.namespace}/events",
                fieldSelector=f"involvedObject.kind=LLMService,involvedObject.name={name}",
            )["items"]
        )


@pytest.fixture(scope="module")
def services(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    kube = cluster.kube
    namespace = f"faults-{uuid.uuid4().hex[:6]}"
    for ns in (namespace, PREWARM_NAMESPACE):
        kube.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    cluster.apply_runtime("vllm-nvidia")
    directory = tmp_path_factory.mktemp("faults")
    with operators.replicas(
        cluster,
        identities=["f"],
        namespace=f"{namespace},{PREWARM_NAMESPACE}",
        directory=directory,
        timings=operators.Timings(),
    ) as replicas:
        services = Services(cluster=cluster, namespace=namespace, directory=directory)
        try:
            yield services
        finally:
            services.stop()
            print("---- operator (last lines)\n" + "\n".join(replicas["f"].text().splitlines()[-40:]))
            for ns in (namespace, PREWARM_NAMESPACE):
                for item in kube.get(f"{GROUP}/namespaces/{ns}/llmservices")["items"]:
                    kube.delete(f"{GROUP}/namespaces/{ns}/llmservices/{item['metadata']['name']}")
                kube.delete(f"/api/v1/namespaces/{ns}")


def _no_cache(**spec: Any) -> dict[str, Any]:
    return {"cache": {"strategy": "None"}, "scaling": {"min": 1, "max": 1}, **spec}


def _ready(services: Services, path: str) -> dict[str, Any]:
    return wait(
        f"{path} Ready",
        lambda: services.status(path),
        lambda s: s.get("phase") == "Ready" and _condition(s, "Ready").get("status") == "True",
        timeout=240,
    )


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("image-pull", "ImagePullFailed"), ("crash-loop", "CrashLoopBackOff"), ("oom", "OOMKilled")],
)
def test_a_failing_backend_is_degraded_with_the_reason_and_recovers(
    services: Services, fault: str, reason: str
) -> None:
    name = f"fail-{fault}"
    path = services.create("vllm-nvidia", name=name, **_no_cache())
    _ready(services, path)
    services.fault(name, fault)
    status = wait(
        f"Degraded={reason}",
        lambda: services.status(path),
        lambda s: (
            _condition(s, "Degraded").get("status") == "True"
            and _condition(s, "Degraded").get("reason") == reason
        ),
        timeout=240,
    )
    # the rollout keeps the old, healthy replica serving (Ready stays True) while the new one fails
    assert status["phase"] == "Degraded"
    events = wait(
        f"a Warning Event {reason}",
        lambda: services.events(name),
        lambda evs: any(e["reason"] == reason and e["type"] == "Warning" for e in evs),
        timeout=60,
    )
    assert events
    # repeated observations of the failure (the operator resyncs every 5 s, the Pods keep reporting it)
    # neither rewrite the condition nor post the Event again
    since = _condition(status, "Degraded")["lastTransitionTime"]
    deadline = time.time() + 4 * operators.Timings().resync_period
    wait("four resync periods", time.time, lambda now: now >= deadline, timeout=60)
    again = services.status(path)
    assert _condition(again, "Degraded").get("reason") == reason, again
    assert _condition(again, "Degraded")["lastTransitionTime"] == since, again
    warnings = [e for e in services.events(name) if e["reason"] == reason]
    assert len(warnings) == 1 and warnings[0].get("count", 1) == 1, warnings
    services.fault(name, None)
    status = _ready(services, path)
    assert _condition(status, "Degraded").get("status") == "False"


def test_an_unschedulable_backend_reports_scheduling_delayed_and_recovers(services: Services) -> None:
    name = "fail-unschedulable"
    # the node offers 16 GPUs (scripts/cluster.sh): 32 cannot be placed
    path = services.create(
        "vllm-nvidia", name=name, **_no_cache(resources={"accelerators": 32, "cpu": "4", "memory": "32Gi"})
    )
    status = wait(
        "Ready=False SchedulingDelayed",
        lambda: services.status(path),
        lambda s: _condition(s, "Ready").get("reason") == "SchedulingDelayed",
        timeout=240,
    )
    assert _condition(status, "Ready")["status"] == "False"
    services.create(
        "vllm-nvidia", name=name, **_no_cache(resources={"accelerators": 1, "cpu": "4", "memory": "32Gi"})
    )
    _ready(services, path)


def test_a_failing_prewarm_job_reports_prewarm_failed_and_a_fixed_spec_recovers(services: Services) -> None:
    name = "fail-prewarm"
    # the shared cache's PVC binds to a pre-provisioned ReadWriteMany volume of its storage class
    services.kube.create(
        "/api/v1/persistentvolumes",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": f"{PREWARM_NAMESPACE}-{uuid.uuid4().hex[:6]}"},
            "spec": {
                "capacity": {"storage": "100Gi"},
                "accessModes": ["ReadWriteMany"],
                "storageClassName": "nfs-rwx",
                "persistentVolumeReclaimPolicy": "Retain",
                "nfs": {"server": "nfs.example.invalid", "path": "/models"},
                "claimRef": {"namespace": PREWARM_NAMESPACE, "name": f"{name}-cache"},
            },
        },
    )
    model = {"source": {"uri": "hf://Qwen/Qwen2.5-14B-Instruct@no-such-rev"}}  # fails (stages.yaml)
    path = services.create(
        "shared-prewarm", name=name, namespace=PREWARM_NAMESPACE, model=model, scaling={"min": 1, "max": 1}
    )
    job = f"/apis/batch/v1/namespaces/{PREWARM_NAMESPACE}/jobs/{name}-prewarm"

    def job_now() -> dict[str, Any]:
        """The Job, or {} while there is none (the operator deletes a failed one before it replaces it,
        so it may go between any two reads)."""
        try:
            return dict(services.kube.get(job))
        except ApiError as exc:
            if exc.status == 404:
                return {}
            raise

    def finished(j: dict[str, Any], kind: str) -> bool:
        return any(
            c["type"] == kind and c["status"] == "True" for c in (j.get("status") or {}).get("conditions", [])
        )

    failed = wait(
        "the Job controller to fail the prewarm Job",
        job_now,
        lambda j: finished(j, "Failed"),
        timeout=300,
    )
    wait(
        "Degraded=PrewarmFailed",
        lambda: services.status(path),
        lambda s: _condition(s, "Degraded").get("reason") == "PrewarmFailed",
        timeout=120,
    )
    # the fix: a revision that exists. The operator replaces the failed Job (nobody deletes it by hand),
    # the real Job controller runs the new one to completion, and the service proceeds
    fixed = {"source": {"uri": "hf://Qwen/Qwen2.5-14B-Instruct@main"}}
    services.create(
        "shared-prewarm", name=name, namespace=PREWARM_NAMESPACE, model=fixed, scaling={"min": 1, "max": 1}
    )
    replaced = wait(
        "the fixed prewarm Job to complete",
        job_now,
        lambda j: (
            j.get("metadata", {}).get("uid") not in (None, failed["metadata"]["uid"])
            and finished(j, "Complete")
        ),
        timeout=300,
    )
    env = replaced["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "REVISION", "value": "main"} in env, env
    status = wait(
        "PrewarmFailed to clear and the service to turn Ready",
        lambda: services.status(path),
        lambda s: (
            _condition(s, "CacheReady").get("reason") == "Prewarmed"
            and _condition(s, "Degraded").get("status") == "False"
            and s.get("phase") == "Ready"
        ),
        timeout=300,
    )
    assert _condition(status, "CacheReady")["status"] == "True", status


def test_the_pdb_refuses_evicting_the_last_gateway_but_one(services: Services) -> None:
    name = "two-gateways"
    # the gateway Pods alone are under test: no gateway process, no aggregate scaler for KEDA
    services.create("two-gateways", name=name, gateway=False, **_no_cache())
    selector = f"serving.noctaya.io/llmservice={name},app.kubernetes.io/component=gateway"
    pods_path = f"/api/v1/namespaces/{services.namespace}/pods"

    def ready_gateways() -> list[dict[str, Any]]:
        return [
            p
            for p in services.kube.get(pods_path, labelSelector=selector)["items"]
            if not p["metadata"].get("deletionTimestamp")
            and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", []))
        ]

    pods = wait("two Ready gateways", ready_gateways, lambda p: len(p) == 2, timeout=240)
    pdb = f"/apis/policy/v1/namespaces/{services.namespace}/poddisruptionbudgets"
    wait(
        "the disruption controller to allow one disruption",
        lambda: services.kube.get(pdb)["items"],
        lambda items: len(items) == 1 and (items[0].get("status") or {}).get("disruptionsAllowed") == 1,
        timeout=120,
    )

    def evict(pod: dict[str, Any]) -> Any:
        return services.kube.request(
            "POST",
            f"{pods_path}/{pod['metadata']['name']}/eviction",
            body={
                "apiVersion": "policy/v1",
                "kind": "Eviction",
                "metadata": {"name": pod["metadata"]["name"], "namespace": services.namespace},
            },
        )

    # drain the node as kubectl drain does: cordoned, the evicted gateway's replacement cannot be placed,
    # so one Ready gateway is left
    node = "/api/v1/nodes/kwok-node-0"
    services.kube.patch(node, {"spec": {"unschedulable": True}}, manager="drain")
    try:
        evict(pods[0])
        wait("one Ready gateway left", ready_gateways, lambda p: len(p) == 1, timeout=60)
        with pytest.raises(ApiError) as refused:
            evict(pods[1])
        assert refused.value.status == 429, refused.value.body
        assert "disruption budget" in refused.value.body.get("message", ""), refused.value.body
        assert len(ready_gateways()) == 1
    finally:
        services.kube.patch(node, {"spec": {"unschedulable": False}}, manager="drain")
    wait("two Ready gateways again", ready_gateways, lambda p: len(p) == 2, timeout=120)
