"""A service with a schedule on real KEDA, and what the operator says once everything has settled.

One namespace of this module's own and one operator replica under its rendered ServiceAccount
(resync every 5 s). The scheduled service is ``examples/vllm-nvidia`` with its office-hours window
moved to an hour that is 12 hours away (the cron trigger's metric is in KEDA's HPA whether or not its
window is open; a closed one keeps the backend at 0 whatever the time of day). Aspects, in order:

- the gateway comes up late: KEDA builds the HPA while the ExternalScaler does not answer, so it holds
  only the cron trigger's metric; the operator sees the missing metric and deletes the HPA at once,
  and again one recheck later (not on each of the passes KEDA's status changes cause in between: the
  audit log), KEDA builds it again, and once the gateway answers the HPA carries every trigger's
  metric (the external-push demand metric and the cron one);
- a quiet minute: once the service has settled, 60 s (twelve of the operator's resync periods, four
  of the HPA check's first recheck delay, twelve of KEDA's polling intervals) pass with no write of
  the operator's to the service or anything of its (no status patch, no Event, no apply, no HPA
  delete), while a second service of the same namespace (``examples/vllm-rocm``) is created,
  reported and moved to a new runtime beside it:
- the second service's cache claim names no StorageClass and the cluster has no default one: its
  backend Pod waits (the real scheduler: unbound immediate claims), and it reports
  ``CacheReady=False/CacheClaimUnbound`` naming the claim and the StorageClass/PV problem (never
  ``CacheNodeFull``);
- ``kubectl get llmservices`` shows each service's phase, Ready status and reason (the CRD's printer
  columns, as the real API server renders its Table);
- a new InferenceRuntime of higher priority for the second service's vendor does not roll its
  backend: ``Reconciled=True/RuntimeKept`` and a Normal Event name both runtimes; the opt-in
  annotation then moves it.
"""

from __future__ import annotations

import datetime
import pathlib
import time
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from noctaya.operator import reconciliation, triggers
from tests.cluster import gateways, llmservice, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]

IDENTITY = "s"
TIMINGS = operators.Timings()
QUIET = 12.0 * TIMINGS.resync_period  # 60 s: twelve resync periods of the replica
NEXT = "vllm-rocm-next"  # a runtime a platform team stages: it ranks above vllm-rocm


def _condition(status: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), {})


def _parse_time(value: str) -> float:
    return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


class Scheduled(llmservice.Service):
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        doc = llmservice.example("vllm-nvidia", namespace=namespace)
        doc["metadata"]["name"] = "sched"
        hour = (datetime.datetime.now(datetime.UTC).hour + 12) % 24
        [window] = doc["spec"]["scaling"]["schedules"]
        window.update(start=f"0 {hour} * * *", duration="1h", timezone="UTC")
        super().__init__(cluster=cluster, doc=doc, directory=directory)
        self.gateway_address = gateways.loopback()

    @property
    def scaled_object(self) -> str:
        return f"/apis/keda.sh/v1alpha1/namespaces/{self.namespace}/scaledobjects/{self.name}"

    def writes(self, *, since: float, of: str | None = None) -> list[dict[str, Any]]:
        """The operator's writes (not its Lease's) to this service (or service ``of``) or anything named
        for it, since."""
        name = of or self.name
        user = operators.username(IDENTITY)
        return [
            e
            for e in operators.audit_events(self.cluster)
            if e.get("user", {}).get("username") == user
            and e.get("verb") in ("create", "update", "patch", "delete")
            and e.get("stage") == "ResponseComplete"
            and e.get("objectRef", {}).get("namespace") == self.namespace
            and e["objectRef"].get("resource") != "leases"
            and name in (e["objectRef"].get("name") or "")
            and _parse_time(e["requestReceivedTimestamp"]) >= since
        ]


@pytest.fixture(scope="module")
def scheduled(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scheduled]:
    namespace = cluster.namespace("settled")
    cluster.apply_runtime("vllm-nvidia")
    cluster.apply_runtime("vllm-rocm")
    service = Scheduled(cluster=cluster, namespace=namespace, directory=tmp_path_factory.mktemp("settled"))
    try:
        with llmservice.deployed(
            cluster, service=service, identity=IDENTITY, scaler_address=service.gateway_address
        ):
            yield service
    finally:
        for runtime in ("vllm-rocm", NEXT):
            cluster.kube.delete(f"{llmservice.GROUP}/inferenceruntimes/{runtime}")


def _external(hpa: dict[str, Any]) -> list[str]:
    return [
        str(m["external"]["metric"]["name"])
        for m in (hpa.get("spec") or {}).get("metrics") or []
        if m.get("type") == "External"
    ]


def _deletes(scheduled: Scheduled) -> list[dict[str, Any]]:
    """The operator's deletes of the service's HPA (the audit log), oldest first."""
    return [
        e
        for e in scheduled.writes(since=0)
        if e["verb"] == "delete" and e["objectRef"]["resource"] == "horizontalpodautoscalers"
    ]


def test_the_hpa_carries_every_triggers_metric_though_the_gateway_came_up_late(
    scheduled: Scheduled,
) -> None:
    so = wait(
        "the operator's ScaledObject", lambda: scheduled.kube.get(scheduled.scaled_object), bool, timeout=180
    )
    kinds = sorted(t["type"] for t in so["spec"]["triggers"])
    assert kinds == ["cron", "external-push"], kinds
    # the ExternalScaler does not answer yet: KEDA builds the HPA from the cron trigger alone
    first = wait("KEDA's first HPA", scheduled.hpa, bool, timeout=180)
    assert len(_external(first)) == 1, first["spec"]
    started = time.monotonic()
    # while the scaler does not answer, every rebuild changes the ScaledObject's status (a pass each):
    # the HPA is deleted at once, then once per recheck, never on every pass
    deleted = wait(
        "the operator to delete the incomplete HPA twice",
        lambda: _deletes(scheduled),
        lambda deletes: len(deletes) >= 2,
        timeout=triggers.RECHECK + 120,
    )
    first_at, second_at = (_parse_time(e["requestReceivedTimestamp"]) for e in deleted[:2])
    assert second_at - first_at >= triggers.RECHECK - 1, deleted  # timestamps are whole microseconds
    assert {e["objectRef"]["name"] for e in deleted} == {f"keda-hpa-{scheduled.name}"}
    assert {e["responseStatus"]["code"] for e in deleted} == {200}
    assert len(_external(scheduled.hpa())) <= 1  # built again without the demand metric
    gateway_at = time.monotonic()
    scheduled.start_gateway(address=scheduled.gateway_address, engine_address=gateways.loopback())
    hpa = wait(
        "KEDA's HPA with both triggers' metrics",
        scheduled.hpa,
        lambda h: len(_external(h)) == 2,
        # the next rebuild is due 2 * RECHECK after the second; KEDA's next connect to the scaler on top
        timeout=2 * triggers.RECHECK + 120,
    )
    complete_at = time.monotonic()
    print(
        f"{len(_deletes(scheduled))} HPA deletes; the gateway started {gateway_at - started:.1f} s after "
        f"KEDA built the HPA; complete {complete_at - gateway_at:.1f} s after that"
    )
    push = next(t for t in so["spec"]["triggers"] if t["type"] == "external-push")
    names = _external(hpa)
    assert any(n.endswith(push["metadata"]["metricName"]) for n in names), names
    assert any("cron" in n for n in names), names
    assert len(_deletes(scheduled)) <= 2 + (complete_at - started) // triggers.RECHECK


def _settled(scheduled: Scheduled) -> bool:
    so = scheduled.kube.get(scheduled.scaled_object)
    status = scheduled.status()
    return (
        len(_external(scheduled.hpa())) == 2
        and _condition(so.get("status") or {}, "Ready").get("status") == "True"
        and status.get("observedGeneration") == scheduled.kube.get(scheduled.path)["metadata"]["generation"]
        and status.get("phase") == "ScaledToZero"
        and _condition(status, "AutoscalingReady").get("status") == "True"
    )


def _path(scheduled: Scheduled, name: str) -> str:
    return f"{llmservice.GROUP}/namespaces/{scheduled.namespace}/llmservices/{name}"


@pytest.fixture(scope="module")
def quiet_since(scheduled: Scheduled) -> float:
    """When the scheduled service had settled (its HPA complete, KEDA's and its own status final)."""
    wait("the scheduled service to settle", lambda: _settled(scheduled), bool, timeout=180)
    return time.time()


def test_a_claim_with_no_storage_class_is_reported_unbound(scheduled: Scheduled, quiet_since: float) -> None:
    doc = llmservice.example("vllm-rocm", namespace=scheduled.namespace)
    doc["metadata"]["name"] = "unbound"
    doc["spec"]["scaling"] = {"min": 1, "max": 1}  # one backend Pod, without a request
    path = _path(scheduled, "unbound")
    scheduled.kube.apply(path, doc, manager="platform-team")
    status = wait(
        "CacheReady=False/CacheClaimUnbound",
        lambda: scheduled.kube.get(path).get("status") or {},
        lambda s: _condition(s, "CacheReady").get("reason") == "CacheClaimUnbound",
        timeout=180,
    )
    cache = _condition(status, "CacheReady")
    assert cache["status"] == "False"
    assert "the cache claim unbound-cache is not bound" in cache["message"], cache
    assert "names no StorageClass" in cache["message"] and "PersistentVolume" in cache["message"], cache
    ready = _condition(status, "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "SchedulingDelayed"), ready
    assert "unbound immediate PersistentVolumeClaims" in ready["message"], ready
    events = scheduled.kube.get(
        f"/api/v1/namespaces/{scheduled.namespace}/events",
        fieldSelector="involvedObject.kind=LLMService,involvedObject.name=unbound",
    )["items"]
    assert "CacheNodeFull" not in {e["reason"] for e in events}, events


def test_kubectl_get_shows_ready_and_its_reason(
    cluster: Cluster, scheduled: Scheduled, quiet_since: float
) -> None:
    table = cluster.kubectl("-n", scheduled.namespace, "get", "llmservices").stdout.splitlines()
    header = table[0].split()
    assert header[:4] == ["NAME", "PHASE", "READY", "REASON"], table
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["sched"][1:4] == ["ScaledToZero", "False", "ScaledToZero"], table
    assert rows["unbound"][2:4] == ["False", "SchedulingDelayed"], table


def test_a_new_runtime_of_higher_priority_is_staged_not_rolled_out(
    cluster: Cluster, scheduled: Scheduled, quiet_since: float
) -> None:
    kube = scheduled.kube
    path = _path(scheduled, "unbound")
    backend = f"/apis/apps/v1/namespaces/{scheduled.namespace}/deployments/unbound-backend"
    before = kube.get(backend)
    assert kube.get(path)["status"]["resolvedRuntime"] == "vllm-rocm"
    runtime = yaml.safe_load((ROOT / "examples" / "runtimes" / "vllm-rocm.yaml").read_text())
    runtime["metadata"]["name"] = NEXT
    runtime["spec"]["priority"] = 50
    runtime["spec"]["container"]["image"] = "docker.io/rocm/vllm:rocm7.0_vllm_0.10.1"
    kube.apply(f"{llmservice.GROUP}/inferenceruntimes/{NEXT}", runtime, manager="platform-team")
    status = wait(
        "Reconciled=True/RuntimeKept",
        lambda: kube.get(path).get("status") or {},
        lambda s: _condition(s, "Reconciled").get("reason") == "RuntimeKept",
        timeout=120,
    )
    kept = _condition(status, "Reconciled")
    assert kept["status"] == "True" and NEXT in kept["message"] and "vllm-rocm " in kept["message"], kept
    assert status["resolvedRuntime"] == "vllm-rocm"
    [event] = wait(
        "a RuntimeKept Event",
        lambda: kube.get(
            f"/api/v1/namespaces/{scheduled.namespace}/events",
            fieldSelector="involvedObject.kind=LLMService,involvedObject.name=unbound,reason=RuntimeKept",
        )["items"],
        bool,
        timeout=60,
    )
    assert event["type"] == "Normal" and NEXT in event["message"] and "vllm-rocm " in event["message"]
    after = kube.get(backend)  # the running backend is not rolled
    assert after["metadata"]["generation"] == before["metadata"]["generation"]
    # the opt-in moves it
    kube.patch(
        path,
        {"metadata": {"annotations": {reconciliation.RUNTIME_SELECTION_ANNOTATION: "follow"}}},
        manager="platform-team",
    )
    wait(
        f"the service to move to {NEXT}",
        lambda: kube.get(backend)["spec"]["template"]["spec"]["containers"][0]["image"],
        lambda image: image == runtime["spec"]["container"]["image"],
        timeout=120,
    )
    moved = wait(
        f"resolvedRuntime {NEXT}",
        lambda: kube.get(path).get("status") or {},
        lambda s: s.get("resolvedRuntime") == NEXT and _condition(s, "Reconciled").get("reason") == "Applied",
        timeout=60,
    )
    assert _condition(moved, "Reconciled")["status"] == "True"


def test_a_settled_service_is_quiet_for_a_minute(scheduled: Scheduled, quiet_since: float) -> None:
    """No write of the operator's for the settled service over 60 s (twelve resync periods), while the
    other service of the namespace was created, reported, and moved to a new runtime: no status patch,
    no Event, no apply, no delete."""
    version = scheduled.kube.get(scheduled.path)["metadata"]["resourceVersion"]
    end = quiet_since + QUIET
    wait("the quiet minute to pass", time.time, lambda now: now >= end, timeout=QUIET + 5)
    writes = scheduled.writes(since=quiet_since)
    assert writes == [], [(w["verb"], w["objectRef"], w["requestReceivedTimestamp"]) for w in writes]
    # not a quiet operator: it wrote the other service's objects, status and Events meanwhile
    assert len(scheduled.writes(since=quiet_since, of="unbound")) >= 10
    assert scheduled.kube.get(scheduled.path)["metadata"]["resourceVersion"] == version
    events = scheduled.kube.get(
        f"/api/v1/namespaces/{scheduled.namespace}/events",
        fieldSelector=f"involvedObject.kind=LLMService,involvedObject.name={scheduled.name}",
    )["items"]
    late = [
        e
        for e in events
        if _parse_time(e.get("lastTimestamp") or e.get("eventTime") or "1970-01-01T00:00:00Z") >= quiet_since
    ]
    assert late == [], [(e["reason"], e.get("count"), e.get("lastTimestamp")) for e in late]
