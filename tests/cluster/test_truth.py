"""What the operator reports on the real API server: refusals, restarts, and each workload's Pod Security.

Aspects (one namespace of this module's own, one operator replica under its rendered ServiceAccount):
- a ResourceQuota that forbids the backend Deployment: ``Reconciled=False/ApplyRefused`` naming the
  Deployment and quoting the server (``exceeded quota``), one Warning Event however many retries (two
  or more, counted in the audit log), no traceback in the log; once the quota goes, the service
  reconciles (its Deployment's owner reference carries ``blockOwnerDeletion``, which the tier's
  ``OwnerReferencesPermissionEnforcement`` admits only for a writer that may update the owner's
  finalizers);
- three restarts of the operator with the runtime and the service in place: no ``RuntimeNotFound``
  ever, in status or Events; the scaler token Secret of two gateways, whose spec went back to one
  gateway while no operator ran, is pruned by the next term (Secrets are not watched: it is read by
  name) and deleted once in all;
- every Pod template the chart renders (backend, gateway, prewarm Job on a claim) is admitted by the
  real Pod Security admission at the level docs/architecture.md states (server-side dry run in
  namespaces that enforce it), and a backend is refused where ``restricted`` is enforced.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import settings, synthesis
from tests.cluster import operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import ApiError, wait

pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("cluster")]

GROUP = "/apis/serving.noctaya.io/v1alpha1"
TIMINGS = operators.Timings()


def _service(namespace: str) -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "examples" / "vllm-nvidia" / "llmservice.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    doc["spec"]["scaling"].pop("schedules", None)
    return dict(doc)


def _condition(status: dict[str, Any], type_: str) -> dict[str, Any]:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), {})


def _events(cluster: Cluster, namespace: str, reason: str) -> list[dict[str, Any]]:
    items = cluster.kube.get(f"/api/v1/namespaces/{namespace}/events")["items"]
    return [e for e in items if e.get("reason") == reason]


def _refused_writes(cluster: Cluster, *, namespace: str, name: str) -> int:
    """How many writes of the Deployment ``name`` the API server answered 403 (from its audit log)."""
    return sum(
        1
        for e in operators.audit_events(cluster)
        if e.get("objectRef", {}).get("resource") == "deployments"
        and e["objectRef"].get("namespace") == namespace
        and e["objectRef"].get("name") == name
        and e.get("stage") == "ResponseComplete"
        and e.get("responseStatus", {}).get("code") == 403
    )


@pytest.fixture(scope="module")
def namespace(cluster: Cluster) -> Iterator[str]:
    name = cluster.namespace("truth")
    cluster.apply_runtime("vllm-nvidia")
    yield name
    cluster.kube.delete(f"/api/v1/namespaces/{name}")


def test_a_quota_refusal_is_reported_once_and_clears(
    cluster: Cluster, namespace: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    kube = cluster.kube
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "no-deployments", "namespace": namespace},
        "spec": {"hard": {"count/deployments.apps": "0"}},
    }
    kube.create(f"/api/v1/namespaces/{namespace}/resourcequotas", quota)
    doc = _service(namespace)
    path = f"{GROUP}/namespaces/{namespace}/llmservices/{doc['metadata']['name']}"
    directory = tmp_path_factory.mktemp("truth")
    with operators.replicas(
        cluster, identities=["t"], namespace=namespace, directory=directory, timings=TIMINGS
    ) as replicas:
        kube.apply(path, doc, manager="platform-team")
        status = wait(
            "ApplyRefused",
            lambda: kube.get(path).get("status") or {},
            lambda s: _condition(s, "Reconciled").get("reason") == "ApplyRefused",
            timeout=120,
        )
        message = _condition(status, "Reconciled")["message"]
        assert "Deployment " in message and "exceeded quota" in message and "(403 Forbidden)" in message
        assert status["phase"] == "Degraded"
        log = replicas["t"]
        wait(
            "the outcome line",
            log.text,
            lambda text: "ApplyRefused: the API server refused" in text,
            timeout=30,
        )
        backend = f"{doc['metadata']['name']}-backend"
        wait(  # the backoff's retries happened: the API server refused the Deployment twice or more
            "a retried refusal",
            lambda: _refused_writes(cluster, namespace=namespace, name=backend),
            lambda refused: refused >= 2,
            timeout=60,
        )
        [event] = _events(cluster, namespace, "ApplyRefused")
        assert event["type"] == "Warning"
        assert "Traceback" not in log.text()

        kube.delete(f"/api/v1/namespaces/{namespace}/resourcequotas/no-deployments")
        doc["spec"].setdefault("endpoint", {})["maxQueue"] = 64  # a spec change: retried at once
        kube.apply(path, doc, manager="platform-team")
        wait(
            "Reconciled=True",
            lambda: kube.get(path).get("status") or {},
            lambda s: _condition(s, "Reconciled").get("status") == "True",
            timeout=120,
        )
        assert len(_events(cluster, namespace, "ApplyRefused")) == 1
        [owner] = kube.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{backend}")["metadata"][
            "ownerReferences"
        ]
        assert owner["kind"] == "LLMService" and owner["blockOwnerDeletion"] is True
        doc["spec"]["endpoint"]["replicas"] = 2  # two gateways: the aggregate scaler and its token
        kube.apply(path, doc, manager="platform-team")
        token = f"/api/v1/namespaces/{namespace}/secrets/{doc['metadata']['name']}-scaler-token"
        wait("the scaler token Secret", lambda: kube.exists(token), bool, timeout=120)

    # one gateway again while no operator runs: the next term prunes the token Secret, though Secrets
    # are not watched, and deletes it once (not on each pass, nor at each restart)
    doc["spec"]["endpoint"]["replicas"] = 1
    kube.apply(path, doc, manager="platform-team")
    for restart in range(3):  # the runtime and the service in place at every start
        with operators.replicas(
            cluster, identities=[f"r{restart}"], namespace=namespace, directory=directory, timings=TIMINGS
        ) as started:
            wait(
                "the first pass",
                started[f"r{restart}"].text,
                lambda text: "LLMService " in text and "phase " in text,
                timeout=120,
            )
            if restart == 0:
                wait("the token Secret pruned", lambda: kube.exists(token), lambda e: not e, timeout=60)
    assert _events(cluster, namespace, "RuntimeNotFound") == []
    assert _condition(kube.get(path).get("status") or {}, "Reconciled").get("status") == "True"
    deletes = [
        e
        for e in operators.audit_events(cluster)
        if e.get("verb") == "delete"
        and e.get("stage") == "ResponseComplete"
        and e.get("objectRef", {}).get("resource") == "secrets"
        and e["objectRef"].get("namespace") == namespace
    ]
    assert [(e["objectRef"]["name"], e["responseStatus"]["code"]) for e in deletes] == [
        (f"{doc['metadata']['name']}-scaler-token", 200)
    ]


def _pods(level_of: dict[str, str]) -> list[tuple[str, str, dict[str, Any]]]:
    """(workload, expected level, Pod) for each Deployment and Job of a service with a prewarmed claim."""
    runtime_doc = yaml.safe_load((ROOT / "examples" / "runtimes" / "vllm-nvidia.yaml").read_text())
    service_doc = yaml.safe_load((ROOT / "examples" / "vllm-nvidia" / "llmservice.yaml").read_text())
    service_doc["spec"]["cache"] = {"strategy": "SharedPVC", "prewarm": True}
    manifests = synthesis.render_llmservice(
        service=llmservice.LLMService.model_validate(service_doc),
        runtime=inferenceruntime.InferenceRuntime.model_validate(runtime_doc),
        settings=settings.RenderSettings(),
    )
    out = []
    for m in manifests:
        if m["kind"] not in {"Deployment", "Job"}:
            continue
        component = m["metadata"]["labels"].get("app.kubernetes.io/component", "")
        template = copy.deepcopy(m["spec"]["template"])
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": f"{m['metadata']['name']}-"}}
        pod["spec"] = template["spec"]
        out.append((m["metadata"]["name"], level_of.get(component, "restricted"), pod))
    return out


def test_each_workload_is_admitted_at_its_pod_security_level(cluster: Cluster) -> None:
    kube = cluster.kube
    levels = {}
    for level in ("baseline", "restricted"):
        name = cluster.namespace(f"pss-{level}")
        kube.patch(
            f"/api/v1/namespaces/{name}",
            {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": level}}},
            manager="platform-team",
        )
        levels[level] = name
    try:
        pods = _pods({"backend": "baseline"})
        assert {level for _, level, _ in pods} == {"baseline", "restricted"}
        for workload, level, pod in pods:
            kube.create(f"/api/v1/namespaces/{levels[level]}/pods", pod, dry_run=True)  # admitted
            if level == "baseline":
                with pytest.raises(ApiError) as refused:
                    kube.create(f"/api/v1/namespaces/{levels['restricted']}/pods", pod, dry_run=True)
                assert refused.value.status == 403 and "restricted" in str(refused.value.body), workload
    finally:
        for name in levels.values():
            kube.delete(f"/api/v1/namespaces/{name}")
