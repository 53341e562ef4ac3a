"""``noctaya operator`` (two replicas, real Lease election) against the real API server and real KEDA.

Aspects, in order (one LLMService, ``examples/vllm-nvidia``, in a namespace of this module's own):
- every object the chart renders is created with server-side apply under the one field manager
  ``noctaya-operator`` (create-once objects, the cache PVC, are created under it), owned by the
  LLMService (controller reference); no other writer but Kubernetes' controllers and KEDA;
- a field changed by hand on an owned object (the gateway Deployment's image) is put back;
- the backend Deployment is created with its ``min: 0`` replicas: no Pod of it is created before a
  request (the audit log); its ``replicas`` are then held by the hand-over manager, the operator's
  applied fields never include them (KEDA 2.20's scale writes leave them with no managedFields
  entry), and no apply of the operator is refused for a conflict;
- stopping the leader (SIGSTOP: it cannot renew, nor release) hands the Lease to the other replica
  within the lease duration; the old leader, resumed, writes nothing but Lease attempts until it holds
  the Lease again (the audit log of the real API server, per replica's ServiceAccount);
- deleting the LLMService lets the real garbage collector remove every object it owned.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from noctaya.operator import applying
from tests.cluster import gateways, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("cluster")]

GROUP = "/apis/serving.noctaya.io/v1alpha1"
MANAGER = "noctaya-operator"
TIMINGS = operators.Timings()
OWNED = {
    ("apps/v1", "Deployment"): "deployments",
    ("v1", "Service"): "services",
    ("v1", "ConfigMap"): "configmaps",
    ("v1", "PersistentVolumeClaim"): "persistentvolumeclaims",
    ("keda.sh/v1alpha1", "ScaledObject"): "scaledobjects",
}


def collection(api_version: str, plural: str, namespace: str) -> str:
    prefix = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
    return f"{prefix}/namespaces/{namespace}/{plural}"


class Service:
    def __init__(self, *, cluster: Cluster, namespace: str, replicas: dict[str, operators.Replica]) -> None:
        self.cluster = cluster
        self.kube = cluster.kube
        self.namespace = namespace
        self.replicas = replicas
        doc = yaml.safe_load((ROOT / "examples" / "vllm-nvidia" / "llmservice.yaml").read_text())
        doc["metadata"]["namespace"] = namespace
        # the example keeps a replica warm through office hours (a cron trigger): the test would see
        # KEDA's minReplicaCount or the schedule's by the time of day
        doc["spec"]["scaling"].pop("schedules", None)
        self.doc = doc
        self.name = doc["metadata"]["name"]
        self.path = f"{GROUP}/namespaces/{namespace}/llmservices/{self.name}"

    def get(self) -> dict[str, Any]:
        return dict(self.kube.get(self.path))

    def owned(self) -> list[dict[str, Any]]:
        out = []
        for (api_version, _kind), plural in OWNED.items():
            items = self.kube.get(
                collection(api_version, plural, self.namespace),
                labelSelector=f"serving.noctaya.io/llmservice={self.name}",
            )["items"]
            for item in items:
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", _kind)
            out.extend(items)
        return out

    def object(self, api_version: str, plural: str, name: str) -> dict[str, Any]:
        return dict(self.kube.get(f"{collection(api_version, plural, self.namespace)}/{name}"))

    def leader(self) -> str:
        return str(self.kube.get(operators.LEASE)["spec"].get("holderIdentity") or "")


@pytest.fixture(scope="module")
def service(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    kube = cluster.kube
    namespace = cluster.namespace("op")
    cluster.apply_runtime("vllm-nvidia")
    directory = tmp_path_factory.mktemp("operators")
    with operators.replicas(
        cluster, identities=["a", "b"], namespace=namespace, directory=directory, timings=TIMINGS
    ) as replicas:
        svc = Service(cluster=cluster, namespace=namespace, replicas=replicas)
        kube.apply(svc.path, svc.doc, manager="platform-team")
        # the gateway Pod's process, so KEDA finds the ExternalScaler (tests/cluster/gateways.py)
        address = gateways.loopback()
        gateways.map_scaler_host(cluster, namespace=namespace, name=svc.name, address=address)
        gateway = gateways.start(
            cluster,
            namespace=namespace,
            name=svc.name,
            directory=directory,
            address=address,
            engine_address=gateways.loopback(),
        )
        try:
            yield svc
        finally:
            gateway.stop()
            for replica in replicas.values():
                print(
                    f"---- operator {replica.identity} (last lines)\n"
                    + "\n".join(replica.text().splitlines()[-40:])
                )
            kube.delete(svc.path)
            kube.delete(f"/api/v1/namespaces/{namespace}")


def _applied_by_operator(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in obj["metadata"].get("managedFields", []) if m["manager"] == MANAGER]


def test_every_rendered_object_is_applied_under_one_field_manager_and_owned(service: Service) -> None:
    expected = {
        ("apps/v1", "Deployment", f"{service.name}-backend"),
        ("apps/v1", "Deployment", f"{service.name}-gateway"),
        ("v1", "Service", service.name),
        ("v1", "Service", f"{service.name}-backend"),
        ("v1", "Service", f"{service.name}-scaler"),
        ("v1", "ConfigMap", f"{service.name}-gateway"),
        ("v1", "PersistentVolumeClaim", f"{service.name}-cache"),
        ("keda.sh/v1alpha1", "ScaledObject", service.name),
    }
    objs = wait(
        "the operator to create every rendered object",
        service.owned,
        lambda objs: {(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objs} >= expected,
        timeout=180,
    )
    uid = service.get()["metadata"]["uid"]
    for obj in objs:
        name = f"{obj['kind']} {obj['metadata']['name']}"
        refs = [r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")]
        assert [(r["kind"], r["name"], r["uid"]) for r in refs] == [("LLMService", service.name, uid)], name
        entries = _applied_by_operator(obj)
        assert entries, f"{name}: no managedFields entry of {MANAGER}"
        # create-once objects (the cache PVC) are created, never patched; everything else is applied
        once = "serving.noctaya.io/spec-hash" in obj["metadata"].get("annotations", {})
        assert {e["operation"] for e in entries} == ({"Update"} if once else {"Apply"}), f"{name}: {entries}"
        others = {m["manager"] for m in obj["metadata"].get("managedFields", [])} - {MANAGER}
        allowed = {"kube-controller-manager", "keda", applying.INITIAL_REPLICAS_MANAGER}
        assert others <= allowed, f"{name}: written by {others}"


def test_a_field_changed_by_hand_is_put_back(service: Service) -> None:
    name = f"{service.name}-gateway"
    before = service.object("apps/v1", "deployments", name)
    image = before["spec"]["template"]["spec"]["containers"][0]["image"]
    patch = {
        "spec": {"template": {"spec": {"containers": [{"name": "gateway", "image": "example.invalid/x:1"}]}}}
    }
    # the patch's answer is the object as written: a later read may already see the operator's fix
    edited = service.kube.patch(
        f"{collection('apps/v1', 'deployments', service.namespace)}/{name}",
        patch,
        manager="kubectl-edit",
        content_type="application/strategic-merge-patch+json",
    )
    assert edited["spec"]["template"]["spec"]["containers"][0]["image"] == "example.invalid/x:1"
    wait(
        "the operator to put the image back",
        lambda: service.object("apps/v1", "deployments", name),
        lambda d: d["spec"]["template"]["spec"]["containers"][0]["image"] == image,
        timeout=TIMINGS.resync_period * 4 + 30,
    )


def _owners_of_replicas(deployment: dict[str, Any]) -> list[str]:
    return [
        m["manager"] + (f"/{m['subresource']}" if m.get("subresource") else "")
        for m in deployment["metadata"].get("managedFields", [])
        if "f:replicas" in m.get("fieldsV1", {}).get("f:spec", {})
    ]


def test_a_new_backend_starts_at_zero_and_its_replicas_are_never_the_operators(service: Service) -> None:
    """``min: 0``: the backend is created with 0 replicas (not the API server's default 1), so none of
    its ReplicaSets ever asked for a Pod before a request; ``replicas`` is held by the hand-over
    manager (KEDA's scale writes leave no managedFields entry), never by the operator's applies, and
    nobody fights."""
    path = f"{collection('apps/v1', 'deployments', service.namespace)}/{service.name}-backend"
    backend = wait(
        "the operator to create the backend",
        lambda: dict(service.kube.get(path)) if service.kube.exists(path) else {},
        lambda d: bool(d) and d["spec"].get("replicas") == 0,
        timeout=180,
    )
    # created at 0 and its spec never changed since (a Deployment created at the default 1 and scaled
    # to 0 by KEDA would be at generation 2): no ReplicaSet of it ever asked for a Pod
    assert backend["metadata"]["generation"] == 1, backend["metadata"]
    replica_sets = service.kube.get(
        collection("apps/v1", "replicasets", service.namespace),
        labelSelector=f"serving.noctaya.io/llmservice={service.name},app.kubernetes.io/component=backend",
    )["items"]
    assert all(rs["spec"].get("replicas") == 0 for rs in replica_sets), replica_sets
    assert all(not rs.get("status", {}).get("replicas") for rs in replica_sets), replica_sets
    assert MANAGER not in [o.split("/")[0] for o in _owners_of_replicas(backend)], _owners_of_replicas(
        backend
    )
    assert set(_owners_of_replicas(backend)) <= {
        applying.INITIAL_REPLICAS_MANAGER,
        "keda",
        "kube-controller-manager",
    }
    hpa = wait(
        "KEDA's HPA",
        lambda: service.kube.get(
            f"/apis/autoscaling/v2/namespaces/{service.namespace}/horizontalpodautoscalers"
        )["items"],
        lambda items: len(items) == 1,
        timeout=120,
    )[0]
    assert hpa["spec"]["scaleTargetRef"]["name"] == f"{service.name}-backend"
    for replica in service.replicas.values():
        # a 409 is always a Conflict (kopf's APIConflictError, the API server's "Apply failed with N
        # conflicts"); its digits alone also turn up in timestamps and generated names. Two candidates
        # racing for the leader Lease is election, not a fight over an object the operator applies.
        fights = [line for line in replica.text().splitlines() if "onflict" in line and "Lease" not in line]
        assert not fights, f"operator {replica.identity} saw an apply conflict"
    assert service.kube.get(path)["spec"].get("replicas") == 0


def _parse_time(value: str) -> float:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def test_a_stopped_leader_hands_over_within_the_lease_duration_and_writes_nothing_after(
    service: Service, cluster: Cluster
) -> None:
    leader_id = wait("a leader", service.leader, lambda h: h in service.replicas, timeout=60)
    other_id = next(i for i in service.replicas if i != leader_id)
    leader = service.replicas[leader_id]
    lease = service.kube.get(operators.LEASE)
    leader.pause()
    paused_at = time.time()
    try:
        # the leader's last renewal is the last renewTime seen under its name: a renewal it sent just
        # before it stopped may land after a first read
        renewals: list[float] = []

        def holder() -> str:
            spec = service.kube.get(operators.LEASE)["spec"]
            if spec.get("holderIdentity") == leader_id:
                renewals.append(_parse_time(spec["renewTime"]))
            return str(spec.get("holderIdentity") or "")

        wait("the other replica to take the Lease", holder, lambda h: h == other_id, timeout=60)
        took_over = time.time()
        assert renewals, "the Lease changed hands before it was read"
        renewed = max(renewals)
        # within the lease duration after the last renewal, plus the candidate's retry period and the
        # time this test takes to see it
        assert took_over - renewed <= TIMINGS.lease_duration + 2 * TIMINGS.retry_period + 3, (
            took_over - renewed,
            lease["spec"],
        )
        # the new leader works: a hand edit is put back by it
        name = f"{service.name}-gateway"
        dep_path = f"{collection('apps/v1', 'deployments', service.namespace)}/{name}"
        image = service.object("apps/v1", "deployments", name)["spec"]["template"]["spec"]["containers"][0][
            "image"
        ]
        service.kube.patch(
            dep_path,
            {
                "spec": {
                    "template": {
                        "spec": {"containers": [{"name": "gateway", "image": "example.invalid/y:1"}]}
                    }
                }
            },
            manager="kubectl-edit",
            content_type="application/strategic-merge-patch+json",
        )
        wait(
            "the new leader to put the image back",
            lambda: service.object("apps/v1", "deployments", name),
            lambda d: d["spec"]["template"]["spec"]["containers"][0]["image"] == image,
            timeout=TIMINGS.resync_period * 4 + 30,
        )
    finally:
        leader.resume()
    resumed_at = time.time()
    # give the resumed replica a few of its retry periods to misbehave, then read the audit log
    deadline = resumed_at + 4 * TIMINGS.retry_period + TIMINGS.resync_period
    wait("the resumed replica to observe the Lease", time.time, lambda now: now >= deadline, timeout=60)
    assert service.leader() == other_id
    user = operators.username(leader_id)
    writes = [
        e
        for e in operators.audit_events(cluster)
        if e.get("user", {}).get("username") == user
        and e.get("verb") in ("create", "update", "patch", "delete")
        and e.get("objectRef", {}).get("resource") != "leases"
        and e.get("stage") == "ResponseComplete"
        and _parse_time(e["requestReceivedTimestamp"]) >= paused_at
    ]
    assert writes == [], [(w["verb"], w["objectRef"], w["requestReceivedTimestamp"]) for w in writes]


def test_deleting_the_llmservice_lets_the_garbage_collector_remove_what_it_owned(service: Service) -> None:
    assert service.owned()
    service.kube.delete(service.path)
    wait("the LLMService to be gone", lambda: service.kube.exists(service.path), lambda e: not e, timeout=60)
    wait(
        "the garbage collector to delete every owned object",
        service.owned,
        lambda objs: objs == [],
        timeout=120,
    )
    hpas = f"/apis/autoscaling/v2/namespaces/{service.namespace}/horizontalpodautoscalers"
    wait(
        "KEDA's HPA to go with its ScaledObject",
        lambda: service.kube.get(hpas)["items"],
        lambda i: i == [],
        timeout=60,
    )
