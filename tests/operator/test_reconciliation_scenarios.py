"""The real operator (kopf + work queue + SSA) against the API server emulator and a simulated cluster.

Aspects: a create renders and applies every object (owner references, labels, applied hashes, no
backend ``replicas``), status (valid per the API model) and events; resyncs write nothing; deleted or
hand-edited objects are applied again; periodic resync; the KEDA CRD missing, then installed; KEDA
reporting a broken ScaledObject; runtime missing, ambiguous, changed (only its users requeued through
the kopf index), deleted (workload kept); a malformed spec; a spec the API server rejects in what it
renders (a condition naming the object, nothing that depends on it applied); the aggregate scaler's
token created once and read back; fewer gateways prune the aggregate scaler; create-once cache objects
refused by name and left untouched; prewarm success and failure; delete cleans up; 0 → 1 → 0 with
activation timings; the API server going away and coming back, and liveness through a long outage;
a failing task of the term is logged and the replica carries on; a replica that may no longer write
writes no status either.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import gc
import logging
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from noctaya.api import llmservice
from noctaya.constructs import synthesis
from noctaya.operator import (
    apiclient,
    applying,
    discovery,
    inventory,
    metrics,
    reconciliation,
    rendering,
    running,
)
from noctaya.operator import events as events_
from tests.operator.apiserver import ApiServer
from tests.operator.cluster import Failure, SimulatedCluster
from tests.operator.conftest import (
    StartOperator,
    WaitFor,
    declare_keda,
    ready_service,
    scale_up_as_keda,
    settled,
)
from tests.operator.scenario import (
    LLMSERVICES,
    NS,
    RUNTIMES,
    condition,
    max_queue,
    runtime_body,
    service_body,
    status_of,
)

pytestmark = pytest.mark.timeout(90)

DEPLOYMENTS = "apps/v1/deployments"
PVCS = "v1/persistentvolumeclaims"
JOBS = "batch/v1/jobs"
SECRETS = "v1/secrets"


def phase(server: ApiServer, name: str = "qwen") -> str | None:
    return status_of(server, name).get("phase")


def owned(server: ApiServer, name: str = "qwen") -> list[tuple[str, str]]:
    return [
        (key[0], key[2])
        for key, obj in server.store.items()
        if key[1] == NS
        and (obj["metadata"].get("labels") or {}).get("serving.noctaya.io/llmservice") == name
        and key[0] != "v1/pods"
    ]


def events(server: ApiServer, reason: str | None = None) -> list[dict[str, Any]]:
    found = [e for e in server.items("v1/events", NS)]
    return [e for e in found if reason is None or e["reason"] == reason]


def update_spec(server: ApiServer, name: str = "qwen", **changes: Any) -> None:
    obj = copy.deepcopy(server.must(LLMSERVICES, NS, name))
    obj["spec"].update(changes)
    server.upsert(LLMSERVICES, obj)


async def test_create_applies_every_object_and_reports_ready(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for)

    service = server.must(LLMSERVICES, NS, "qwen")
    kinds = {resource for resource, _ in owned(server)}
    assert {DEPLOYMENTS, "v1/services", "v1/configmaps", "keda.sh/v1alpha1/scaledobjects", PVCS} <= kinds
    for resource, name in owned(server):
        obj = server.must(resource, NS, name)
        refs = obj["metadata"]["ownerReferences"]
        assert refs == [
            {
                "apiVersion": "serving.noctaya.io/v1alpha1",
                "kind": "LLMService",
                "name": "qwen",
                "uid": service["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
        annotations = obj["metadata"].get("annotations") or {}
        assert applying.APPLIED_HASH in annotations or applying.SPEC_HASH in annotations, (resource, name)
    backend = server.must(DEPLOYMENTS, NS, "qwen-backend")
    assert backend["metadata"]["annotations"][applying.INITIAL_REPLICAS] == "1"  # created with min
    status = status_of(server)
    assert status["resolvedRuntime"] == "vllm"
    assert status["endpointURL"] == "http://qwen.ai.svc/v1"
    assert status["replicas"] == 1
    assert {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]} == {
        "Ready": ("True", "Available"),
        "Degraded": ("False", "Healthy"),
        "AutoscalingReady": ("True", "ScaledObjectApplied"),
        "Reconciled": ("True", "Applied"),
    }
    assert all(c["observedGeneration"] == service["metadata"]["generation"] for c in status["conditions"])
    llmservice.LLMServiceStatus.model_validate(status)  # what we write is what the API defines
    await wait_for(lambda: [e["reason"] for e in events(server, "Available")] == ["Available"])
    await settled(replica, wait_for)
    assert len(events(server, "Available")) == 1


async def test_resync_skips_unchanged_objects(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for)
    op = replica.operator
    assert op.queue is not None
    await settled(replica, wait_for)  # the echoes of the first applies are in
    seen = []
    server.subscribe(lambda t, r, o: seen.append((t, r, o["metadata"]["name"], o.get("status"))))
    since = len(replica.passes)
    for _ in range(5):
        op.queue.add((NS, "qwen"))
    await settled(replica, wait_for)
    assert replica.passes_of((NS, "qwen"), since=since)  # the marks ran (deduplicated)
    assert [s for s in seen if "leases" not in s[1]] == []  # nothing applied, no status written


async def test_drifted_object_is_applied_again(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(server, operators, wait_for)
    server.remove("v1/services", NS, "qwen")
    await wait_for(lambda: server.obj("v1/services", NS, "qwen") is not None, message="re-created")


@pytest.mark.parametrize("keda", [False])
async def test_missing_keda_crd_blocks_the_backend_until_installed(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body())
    await operators()
    await wait_for(lambda: condition(server, "AutoscalingReady").get("status") == "False")
    cond = condition(server, "AutoscalingReady")
    assert cond["reason"] == "AutoscalingUnavailable"
    assert "scaledobjects.keda.sh" in cond["message"]
    assert condition(server, "Reconciled")["reason"] == "AutoscalingUnavailable"
    assert server.obj(DEPLOYMENTS, NS, "qwen-backend") is None
    assert owned(server) == []
    assert phase(server) == "Pending"

    declare_keda(server)
    await scale_up_as_keda(server, wait_for)
    await wait_for(lambda: phase(server) == "Ready", message="Ready after KEDA installed")
    assert condition(server, "AutoscalingReady")["status"] == "True"


async def test_runtime_missing_then_created(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(LLMSERVICES, service_body())
    await operators()
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "RuntimeNotFound")
    assert "vllm" in condition(server, "Reconciled")["message"]
    assert phase(server) == "Degraded"
    assert owned(server) == []
    server.upsert(RUNTIMES, runtime_body())
    await scale_up_as_keda(server, wait_for)
    await wait_for(lambda: phase(server) == "Ready", message="Ready once the runtime exists")


async def test_a_name_taken_by_an_object_we_do_not_control_is_left_alone(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    foreign = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "qwen", "namespace": NS, "labels": {"app": "someone-else"}},
        "spec": {"selector": {"app": "someone-else"}, "ports": [{"name": "web", "port": 8081}]},
    }
    server.upsert(RUNTIMES, runtime_body())
    before = server.upsert("v1/services", foreign)
    server.upsert(LLMSERVICES, service_body())
    await operators()
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "ObjectNotControlled")
    message = condition(server, "Reconciled")["message"]
    assert "Service ai/qwen already exists and is not controlled by LLMService qwen" in message
    assert phase(server) == "Degraded"
    assert server.must("v1/services", NS, "qwen") == before  # untouched
    assert owned(server) == []  # nothing of the service is applied while its name is taken
    await wait_for(lambda: events(server, "ObjectNotControlled"))
    [event] = events(server, "ObjectNotControlled")
    assert event["type"] == "Warning"
    assert "already exists and is not controlled by LLMService" in event["message"]

    server.remove("v1/services", NS, "qwen")
    update_spec(server, endpoint={"maxQueue": 50})  # the foreign object is not watched: a spec change
    await wait_for(lambda: phase(server) == "Ready", message="Ready once the name is free")
    assert condition(server, "Reconciled")["reason"] == "Applied"
    mine = server.must("v1/services", NS, "qwen")
    assert mine["metadata"]["ownerReferences"][0]["name"] == "qwen"


async def test_runtime_ambiguous_then_disambiguated(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body("vllm-a"))
    server.upsert(RUNTIMES, runtime_body("vllm-b"))
    server.upsert(LLMSERVICES, service_body(runtime={"selector": {"vendor": ["nvidia"]}}))
    await operators()
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "RuntimeAmbiguous")
    message = condition(server, "Reconciled")["message"]
    assert "vllm-a" in message and "vllm-b" in message
    server.upsert(RUNTIMES, runtime_body("vllm-b", priority=5))
    await wait_for(lambda: status_of(server).get("resolvedRuntime") == "vllm-b")
    await wait_for(lambda: phase(server) == "Ready")


async def test_runtime_change_requeues_its_users_only(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body("vllm"))
    server.upsert(RUNTIMES, runtime_body("other", vendor="amd"))
    server.upsert(LLMSERVICES, service_body("qwen"))
    server.upsert(LLMSERVICES, service_body("llama", runtime={"name": "other"}))
    replica = await operators()
    await wait_for(lambda: phase(server, "qwen") == "Ready" and phase(server, "llama") == "Ready")
    await settled(replica, wait_for, (NS, "qwen"))
    await settled(replica, wait_for, (NS, "llama"))
    queue = replica.operator.queue
    assert queue is not None
    before = len(replica.passes)
    server.upsert(RUNTIMES, runtime_body("vllm", image="vllm/vllm-openai:v0.7.0"))

    def image() -> list[str]:
        dep = server.must(DEPLOYMENTS, NS, "qwen-backend")
        return [c["image"] for c in dep["spec"]["template"]["spec"]["containers"]]

    await wait_for(lambda: "vllm/vllm-openai:v0.7.0" in image(), message="new image rolled out")
    # the runtime's handler marked every user at once, before qwen's pass could run: once nothing is
    # pending for llama, a llama pass it caused would be recorded
    await wait_for(lambda: queue.idle((NS, "llama")) and queue.idle((NS, "qwen")))
    touched = {p.key for p in replica.passes[before:]}
    assert (NS, "qwen") in touched
    assert (NS, "llama") not in touched


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ({"scaling": {"min": 3, "max": 1}}, "scaling"),
        ({"model": {"source": {"uri": "ftp://example.com/model"}}}, "uri"),
        ({"cache": {"strategy": "Floppy"}}, "strategy"),
    ],
)
async def test_malformed_spec_becomes_a_condition(
    server: ApiServer,
    cluster: SimulatedCluster,
    operators: StartOperator,
    wait_for: WaitFor,
    spec: dict[str, Any],
    fragment: str,
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(**spec))
    replica = await operators()
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "InvalidSpec")
    assert fragment in condition(server, "Reconciled")["message"]
    assert phase(server) == "Degraded"
    assert owned(server) == []
    assert not replica.task.done()
    fixed = service_body()
    obj = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    obj["spec"] = fixed["spec"]
    server.upsert(LLMSERVICES, obj)
    await wait_for(lambda: phase(server) == "Ready", message="Ready once fixed")


async def test_a_rejected_object_becomes_a_condition(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(cache={"strategy": "SharedPVC", "storageClassName": "Fast_SSD"}))
    replica = await operators()
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "InvalidSpec")
    message = condition(server, "Reconciled")["message"]
    assert condition(server, "AutoscalingReady")["status"] == "False"  # no ScaledObject was applied
    assert "PersistentVolumeClaim ai/qwen-cache" in message and "storageClassName" in message
    assert phase(server) == "Degraded"
    assert server.obj(DEPLOYMENTS, NS, "qwen-backend") is None  # the backend would wait for the claim forever
    queue = replica.operator.queue
    assert queue is not None
    # no retry loop: once the echoes of what was applied have been handled, nothing is queued, timed
    # or backing off for the service; the next spec change triggers the next pass
    await settled(replica, wait_for)
    assert queue.idle((NS, "qwen")) and queue.backing_off == 0
    assert condition(server, "Reconciled").get("reason") == "InvalidSpec"
    obj = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    obj["spec"]["cache"]["storageClassName"] = "fast-ssd"
    server.upsert(LLMSERVICES, obj)
    await wait_for(lambda: phase(server) == "Ready", message="Ready once fixed")
    assert condition(server, "Reconciled")["status"] == "True"


async def test_scaler_token_is_generated_once_and_kept(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(endpoint={"replicas": 2}))
    await operators()
    await wait_for(lambda: server.obj(SECRETS, NS, "qwen-scaler-token") is not None)
    secret = server.must(SECRETS, NS, "qwen-scaler-token")
    assert "stringData" not in secret
    token = base64.b64decode(secret["data"]["token"]).decode()
    assert len(token) >= 32
    rv = secret["metadata"]["resourceVersion"]
    update_spec(server, endpoint={"replicas": 2, "maxQueue": 50})
    await wait_for(lambda: status_of(server).get("observedGeneration") == 2)
    # a second pass read the token back from the Secret: never regenerated, the Secret never rewritten
    kept = server.must(SECRETS, NS, "qwen-scaler-token")
    assert kept["metadata"]["resourceVersion"] == rv
    assert base64.b64decode(kept["data"]["token"]).decode() == token
    assert condition(server, "Reconciled")["status"] == "True"


async def test_cache_spec_change_is_refused_by_name(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(
        server, operators, wait_for, spec={"cache": {"strategy": "SharedPVC", "size": "20Gi"}}
    )
    pvc = copy.deepcopy(server.must(PVCS, NS, "qwen-cache"))
    update_spec(server, cache={"strategy": "SharedPVC", "size": "40Gi"})
    await wait_for(lambda: condition(server, "CacheReady").get("reason") == "CacheSpecChanged")
    message = condition(server, "CacheReady")["message"]
    assert "PersistentVolumeClaim ai/qwen-cache" in message
    assert "kubectl -n ai delete persistentvolumeclaim qwen-cache" in message
    assert server.must(PVCS, NS, "qwen-cache") == pvc  # untouched: same uid, resourceVersion, spec
    await wait_for(lambda: len(events(server, "CacheSpecChanged")) == 1)

    server.remove(PVCS, NS, "qwen-cache")
    await wait_for(
        lambda: (
            (server.obj(PVCS, NS, "qwen-cache") or {}).get("metadata", {}).get("uid")
            not in (None, pvc["metadata"]["uid"])
        ),
        message="PVC re-created",
    )
    await wait_for(
        lambda: (
            condition(server, "CacheReady") == {} or condition(server, "CacheReady").get("status") == "True"
        ),
        message="CacheReady cleared",
    )
    assert "40Gi" in str(server.must(PVCS, NS, "qwen-cache")["spec"])


async def test_prewarm_failure_is_reported(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    cluster.fail_job(NS, "qwen-prewarm")
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(cache={"strategy": "SharedPVC", "prewarm": True}))
    replica = await operators()
    await wait_for(lambda: condition(server, "Degraded").get("reason") == "PrewarmFailed")
    assert condition(server, "CacheReady")["reason"] == "PrewarmFailed"
    assert "qwen-prewarm" in condition(server, "Degraded")["message"]
    assert phase(server) == "Degraded"
    await wait_for(lambda: len(events(server, "PrewarmFailed")) == 1)
    await settled(replica, wait_for)
    (event,) = events(server, "PrewarmFailed")  # one event for the transition, never repeated
    assert event["type"] == "Warning"
    assert event["message"].startswith("Degraded=True")


async def test_a_fixed_spec_replaces_the_failed_prewarm_job_and_recovers(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    cluster.fail_job(NS, "qwen-prewarm")
    server.upsert(RUNTIMES, runtime_body())
    cache = {"strategy": "SharedPVC", "prewarm": True}
    server.upsert(
        LLMSERVICES,
        service_body(model={"source": {"uri": "hf://Qwen/Qwen2.5-0.5B-Instruct@no-such-rev"}}, cache=cache),
    )
    await operators()
    await wait_for(lambda: condition(server, "Degraded").get("reason") == "PrewarmFailed")
    failed_uid = server.must(JOBS, NS, "qwen-prewarm")["metadata"]["uid"]
    cluster.job_fails.discard((NS, "qwen-prewarm"))  # the cause is fixed: the next run succeeds
    update_spec(server, model={"source": {"uri": "hf://Qwen/Qwen2.5-0.5B-Instruct@main"}})
    # the failed Job is deleted and created again from the fixed spec, without anyone deleting it
    await wait_for(
        lambda: (
            (server.obj(JOBS, NS, "qwen-prewarm") or {}).get("metadata", {}).get("uid")
            not in (None, failed_uid)
        ),
        message="prewarm Job replaced",
    )
    await wait_for(lambda: condition(server, "CacheReady").get("reason") == "Prewarmed")
    assert condition(server, "Degraded").get("reason") != "PrewarmFailed"
    env = server.must(JOBS, NS, "qwen-prewarm")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "REVISION", "value": "main"} in env


async def test_a_failed_prewarm_job_of_the_current_spec_is_kept(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    """Only a spec change replaces a failed Job: the same spec would fail the same way (the fix is
    outside the spec, then the Job is deleted by hand, as the troubleshooting guide says)."""
    cluster.fail_job(NS, "qwen-prewarm")
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(cache={"strategy": "SharedPVC", "prewarm": True}))
    await operators()
    await wait_for(lambda: condition(server, "Degraded").get("reason") == "PrewarmFailed")
    job = server.must(JOBS, NS, "qwen-prewarm")
    update_spec(server, scaling={"max": 3})  # a change that leaves the Job's spec as it was
    await wait_for(lambda: status_of(server).get("observedGeneration") == 2)
    assert server.must(JOBS, NS, "qwen-prewarm")["metadata"]["uid"] == job["metadata"]["uid"]
    assert condition(server, "Degraded").get("reason") == "PrewarmFailed"


async def test_prewarm_success_sets_cache_ready(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(cache={"strategy": "SharedPVC", "prewarm": True}))
    await operators()
    await wait_for(lambda: condition(server, "CacheReady").get("reason") == "Prewarmed")
    assert condition(server, "CacheReady")["status"] == "True"


async def test_delete_cleans_up(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for)
    assert owned(server)
    server.remove(LLMSERVICES, NS, "qwen")
    await wait_for(lambda: owned(server) == [], message="owned objects collected")
    await wait_for(lambda: server.items("v1/pods", NS) == [], message="pods collected")
    inv = replica.operator.inventory
    assert inv is not None
    await wait_for(lambda: (NS, "qwen") not in inv.services and not inv.owned((NS, "qwen")))
    await wait_for(lambda: len(replica.operator.renderer) == 0, message="cached render dropped")


async def test_scale_from_zero_and_back_reports_phases_and_timings(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for)
    cluster.scale(NS, "qwen-backend", 0)
    await wait_for(lambda: phase(server) == "ScaledToZero", message="ScaledToZero")
    assert condition(server, "Ready")["reason"] == "ScaledToZero"
    assert status_of(server)["replicas"] == 0
    first = status_of(server).get("lastActivation")

    cluster.timings.load = 0.4  # a visible loading phase
    cluster.scale(NS, "qwen-backend", 1)
    await wait_for(lambda: phase(server) == "Loading", message="Loading")
    await wait_for(lambda: phase(server) == "Ready", message="Ready again")
    activation = status_of(server)["lastActivation"]
    assert activation != first
    llmservice.LLMServiceStatus.model_validate(status_of(server))
    assert [p["name"] for p in activation["phases"]] == ["Scheduled", "ImagePulled", "ModelLoaded"]
    loaded = activation["phases"][2]["duration"]
    assert loaded.endswith("ms") and int(loaded[:-2]) >= 350
    await wait_for(lambda: [e for e in events(server, "Available") if "ModelLoaded" in e["message"]])
    # the first activation's event may be the one seen: the second's observation is waited for by name
    await wait_for(
        lambda: (
            'noctaya_activation_phase_seconds_count{phase="ready"} 2.0'
            in replica.operator.metrics.exposition().decode()
        ),
        message="the second activation observed",
    )

    cluster.scale(NS, "qwen-backend", 0)
    await wait_for(lambda: phase(server) == "ScaledToZero", message="ScaledToZero again")


async def test_api_server_outage_and_recovery(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for, leader_election=False)
    await server.outage()
    await asyncio.sleep(1.0)
    assert not replica.task.done()
    server.recover()
    update_spec(server, endpoint={"maxQueue": 7})
    await wait_for(lambda: max_queue(server) == 7, message="change applied after recovery")
    await wait_for(lambda: status_of(server).get("observedGeneration") == 2)
    assert replica.operator.state()["healthy"]


async def test_fewer_gateways_prune_the_aggregate_scaler(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(server, operators, wait_for, spec={"endpoint": {"replicas": 2}})
    assert server.obj(DEPLOYMENTS, NS, "qwen-scaler") is not None
    assert server.obj("policy/v1/poddisruptionbudgets", NS, "qwen-gateway") is not None
    update_spec(server, endpoint={"replicas": 1})
    await wait_for(lambda: server.obj(DEPLOYMENTS, NS, "qwen-scaler") is None, message="scaler pruned")
    await wait_for(lambda: server.obj("policy/v1/poddisruptionbudgets", NS, "qwen-gateway") is None)
    assert server.obj(DEPLOYMENTS, NS, "qwen-gateway") is not None


async def test_a_token_secret_of_a_spec_changed_while_no_replica_ran_is_pruned(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    """Secrets are not watched: a new term learns of the scaler token Secret by name, once, even when
    the spec no longer renders it (fewer gateways while no replica ran), so the prune still sees it."""
    first = await ready_service(server, operators, wait_for, spec={"endpoint": {"replicas": 2}})
    assert server.obj(SECRETS, NS, "qwen-scaler-token") is not None
    await first.shutdown()
    before = server.secret_calls[("get", "qwen-scaler-token")]
    update_spec(server, endpoint={"replicas": 1})
    replica = await operators(identity="op-b")
    await wait_for(
        lambda: server.obj(SECRETS, NS, "qwen-scaler-token") is None, message="the old token Secret pruned"
    )
    await wait_for(lambda: server.obj(DEPLOYMENTS, NS, "qwen-scaler") is None, message="scaler pruned")
    await wait_for(lambda: status_of(server).get("observedGeneration") == 2)
    await settled(replica, wait_for)
    update_spec(server, endpoint={"replicas": 1, "maxQueue": 50})  # and a pass more after the prune
    await wait_for(lambda: status_of(server).get("observedGeneration") == 3)
    await settled(replica, wait_for)
    # once per term, not on every pass; and deleted once: not again and again once it is gone (no
    # watch event tells the inventory a Secret went)
    calls = server.secret_calls
    assert calls[("get", "qwen-scaler-token")] - before == 1, calls
    assert calls[("delete", "qwen-scaler-token")] == 1, calls


async def test_keda_reporting_a_broken_scaled_object_is_shown(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(server, operators, wait_for)
    server.patch_status(
        "keda.sh/v1alpha1/scaledobjects",
        NS,
        "qwen",
        {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "False",
                    "reason": "ScaledObjectCheckFailed",
                    "message": "external scaler qwen-scaler.ai.svc:9090 unreachable",
                }
            ]
        },
    )
    await wait_for(lambda: condition(server, "AutoscalingReady").get("reason") == "ScaledObjectNotReady")
    assert "unreachable" in condition(server, "AutoscalingReady")["message"]
    assert phase(server) == "Ready"  # the backend still serves
    server.patch_status(
        "keda.sh/v1alpha1/scaledobjects",
        NS,
        "qwen",
        {"conditions": [{"type": "Ready", "status": "True", "reason": "ScaledObjectReady"}]},
    )
    await wait_for(lambda: condition(server, "AutoscalingReady").get("status") == "True")


async def test_a_long_outage_turns_liveness_red_then_green(
    server: ApiServer,
    cluster: SimulatedCluster,
    operators: StartOperator,
    wait_for: WaitFor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="noctaya.operator.running")
    monkeypatch.setattr(running, "MAX_FAILED_TERMS", 2)
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body())
    await server.outage()
    replica = await operators(leader_election=False)
    await wait_for(lambda: not replica.operator.state()["healthy"], message="unhealthy")
    server.recover()
    await wait_for(lambda: phase(server) == "Ready", message="Ready after recovery")
    await wait_for(lambda: replica.operator.state()["healthy"], message="healthy again")
    # kopf's scan of a failed term leaves the second discovery request's error unread. Once the replica
    # has stopped and the log records that reference the error are dropped (pytest keeps every record
    # of a test; a replica writes its records out and keeps none), the collector meets it: one debug
    # line, never asyncio's "never retrieved" traceback, which would land in whatever runs then
    await replica.shutdown()
    for handler in logging.getLogger().handlers:
        if isinstance(handler, type(caplog.handler)):
            handler.clear()
    gc.collect()
    assert "kopf left an error unread in _read_" in caplog.text
    assert "never retrieved" not in caplog.text and "Traceback" not in caplog.text


async def test_hand_edits_are_repaired_and_resync_runs(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    replica = await ready_service(server, operators, wait_for, resync_period=0.3)
    edited = copy.deepcopy(server.must("v1/configmaps", NS, "qwen-gateway"))
    edited["data"] = {"config.yaml": "maxQueue: 1\n"}  # the applied-hash annotation is kept
    server.upsert("v1/configmaps", edited)
    await wait_for(lambda: max_queue(server) == 100, message="hand edit reverted")
    before = len(replica.passes)
    await wait_for(  # periodic resync passes, with nothing changed
        lambda: len(replica.passes_of((NS, "qwen"), since=before)) >= 2, message="two resync passes"
    )


async def test_runtime_deleted_keeps_the_workload_and_says_so(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(server, operators, wait_for)
    objects = owned(server)
    server.remove(RUNTIMES, None, "vllm")
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "RuntimeNotFound")
    assert owned(server) == objects  # nothing pruned: the backend keeps serving
    assert phase(server) == "Ready"


async def test_a_failing_term_task_is_logged(
    server: ApiServer, operators: StartOperator, wait_for: WaitFor, caplog: pytest.LogCaptureFixture
) -> None:
    calls = 0

    async def broken_renewal() -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("renewal bug")

    replica = await operators()
    assert replica.operator.elector is not None
    replica.operator.elector.hold = broken_renewal  # type: ignore[method-assign]  # before the first term
    await wait_for(lambda: calls >= 1 and "renewal bug" in caplog.text, message="the failure logged")
    assert "lease renewal failed; the term ends" in caplog.text
    assert not replica.task.done()


async def test_no_status_write_once_the_replica_may_not_write(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    """A pass that finds something to report after its replica lost the right to write (the moment
    leadership is lost, before the term has ended) stops at the status write; the same pass allowed
    to write reports it, so the check is not vacuous."""
    replica = await ready_service(server, operators, wait_for, leader_election=False)
    await replica.shutdown()  # the simulated cluster goes on; the passes below are run by hand
    allowed = True
    api = k8s_client.ApiClient(k8s_client.Configuration(host=str(server.url).rstrip("/")))
    client = apiclient.Client(api=api)
    metrics_ = metrics.Metrics()
    inv = inventory.Inventory()

    def observe() -> None:
        inv.put_service(server.must(LLMSERVICES, NS, "qwen"))
        inv.put_runtime(server.must(RUNTIMES, None, "vllm"))
        for (resource, ns, _), obj in list(server.store.items()):
            if ns == NS and resource != LLMSERVICES:
                inv.put_owned(obj)

    reconciler = reconciliation.Reconciler(
        client=client,
        inventory=inv,
        applier=applying.Applier(client=client, field_manager="noctaya-operator", may_write=lambda: allowed),
        renderer=rendering.Renderer(render=synthesis.render_llmservice),
        recorder=events_.EventRecorder(client=client, instance="by-hand", metrics=metrics_),
        discovery=discovery.Discovery(client=client),
        metrics=metrics_,
        config=reconciliation.ReconcileConfig(
            gateway_image="ghcr.io/noctaya/noctaya:test", default_gateway_replicas=1
        ),
    )
    try:
        observe()
        await reconciler((NS, "qwen"))  # this applier has applied everything once: nothing left to apply
        cluster.fail(NS, "qwen-backend", Failure.CRASH_LOOP)  # only the Pods change
        await wait_for(lambda: "CrashLoopBackOff" in str(server.items("v1/pods", NS)), message="crash loop")
        observe()
        allowed = False
        with pytest.raises(applying.NotLeaderError):
            await reconciler((NS, "qwen"))
        assert phase(server) == "Ready"  # the status was left alone
        assert condition(server, "Degraded")["status"] == "False"
        allowed = True
        await reconciler((NS, "qwen"))
        assert condition(server, "Degraded")["status"] == "True"
    finally:
        await api.close()


async def test_replicas_beyond_the_node_of_a_read_write_once_cache_are_explained(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    await ready_service(server, operators, wait_for, spec={"scaling": {"max": 2}})  # NodeLocalPVC
    backend = server.must(DEPLOYMENTS, NS, "qwen-backend")
    [term] = backend["spec"]["template"]["spec"]["affinity"]["podAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    cluster.node_capacity[(NS, "qwen-backend")] = 1
    cluster.scale(NS, "qwen-backend", 2)
    await wait_for(lambda: condition(server, "CacheReady").get("reason") == "CacheNodeFull")
    message = condition(server, "CacheReady")["message"]
    assert "ReadWriteOnce" in message and "SharedPVC" in message
    assert condition(server, "Ready")["reason"] == "Available" and phase(server) == "Ready"
    await wait_for(lambda: events(server, "CacheNodeFull"))
    assert events(server, "CacheNodeFull")[0]["type"] == "Warning"
    cluster.scale(NS, "qwen-backend", 1)
    await wait_for(lambda: not condition(server, "CacheReady"), message="explained only while it holds")
