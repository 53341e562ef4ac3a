"""The apply/prune engine against the API server emulator.

Aspects: server-side apply creates, then skips objects whose desired hash the live object already
carries, and applies again after a change or drift; create-once objects are created, then skipped or
refused by name (never patched), including when the create races with an existing object (409) and
for PVCs/Jobs rendered without a spec hash; prune deletes only owned objects of managed kinds no longer
desired; an object the server rejects as invalid (``422``) is reported by name, and the next wave and
pruning are held back; every write is fenced by ``may_write``.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kubernetes_asyncio import client as k8s_client

from noctaya.operator import apiclient, applying
from tests.operator.apiserver import ApiServer

OWNER = "owner-uid"
REF = {
    "apiVersion": "serving.noctaya.io/v1alpha1",
    "kind": "LLMService",
    "name": "qwen",
    "uid": OWNER,
    "controller": True,
    "blockOwnerDeletion": True,
}


def configmap(name: str = "qwen-gateway", value: str = "1") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": "ai",
            "labels": {"serving.noctaya.io/llmservice": "qwen"},
            "ownerReferences": [REF],
        },
        "data": {"v": value},
    }


def pvc(size: str = "10Gi", spec_hash: str | None = "h1") -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": "qwen-cache",
        "namespace": "ai",
        "ownerReferences": [REF],
        "labels": {"serving.noctaya.io/llmservice": "qwen"},
    }
    if spec_hash is not None:
        meta["annotations"] = {applying.SPEC_HASH: spec_hash}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": {"resources": {"requests": {"storage": size}}},
    }


@pytest.fixture
async def client(server: ApiServer) -> AsyncIterator[apiclient.Client]:
    async with k8s_client.ApiClient(k8s_client.Configuration(host=str(server.url).rstrip("/"))) as api:
        yield apiclient.Client(api=api)


def live(server: ApiServer) -> dict[applying.ObjectKey, dict[str, Any]]:
    return {
        applying.key_of(obj): obj
        for (res, ns, _), obj in server.store.items()
        if ns == "ai" and res in {"v1/configmaps", "v1/persistentvolumeclaims", "v1/secrets"}
    }


async def test_apply_then_skip_then_apply_a_change(server: ApiServer, client: apiclient.Client) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert report.created == [("v1", "ConfigMap", "qwen-gateway")]
    obj = server.must("v1/configmaps", "ai", "qwen-gateway")
    assert obj["metadata"]["annotations"][applying.APPLIED_HASH] == applying.digest(configmap())
    rv = obj["metadata"]["resourceVersion"]

    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert report.skipped == [("v1", "ConfigMap", "qwen-gateway")] and not (
        report.created or report.applied or report.pruned
    )
    assert server.must("v1/configmaps", "ai", "qwen-gateway")["metadata"]["resourceVersion"] == rv

    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap(value="2")], live=live(server)
    )
    assert report.applied == [("v1", "ConfigMap", "qwen-gateway")]
    assert server.must("v1/configmaps", "ai", "qwen-gateway")["data"] == {"v": "2"}


async def test_drift_is_repaired(server: ApiServer, client: apiclient.Client) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    drifted = copy.deepcopy(server.must("v1/configmaps", "ai", "qwen-gateway"))
    drifted["data"] = {"v": "hand-edited"}
    drifted["metadata"]["annotations"].pop(applying.APPLIED_HASH)
    server.upsert("v1/configmaps", drifted)
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert report.applied and server.must("v1/configmaps", "ai", "qwen-gateway")["data"] == {"v": "1"}


async def test_an_edit_that_keeps_the_annotation_is_repaired(
    server: ApiServer, client: apiclient.Client
) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    edited = copy.deepcopy(server.must("v1/configmaps", "ai", "qwen-gateway"))
    edited["data"] = {"v": "hand-edited"}  # the applied-hash annotation is still there
    server.upsert("v1/configmaps", edited)
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert report.applied and server.must("v1/configmaps", "ai", "qwen-gateway")["data"] == {"v": "1"}
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert report.skipped and not report.applied


async def test_a_new_replica_repairs_an_edit_made_before_it_started(
    server: ApiServer, client: apiclient.Client
) -> None:
    """A new leader has applied nothing yet: the annotation an edit kept proves nothing to it (the real
    API server's tier found a handover that never repaired such an edit)."""
    await applying.Applier(client=client, field_manager="noctaya").sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    edited = copy.deepcopy(server.must("v1/configmaps", "ai", "qwen-gateway"))
    edited["data"] = {"v": "hand-edited"}  # the applied-hash annotation is still there
    server.upsert("v1/configmaps", edited)
    successor = applying.Applier(client=client, field_manager="noctaya")
    report = await successor.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert report.applied and server.must("v1/configmaps", "ai", "qwen-gateway")["data"] == {"v": "1"}


async def test_create_once_is_refused_by_name_and_left_untouched(
    server: ApiServer, client: apiclient.Client
) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc()], live=live(server)
    )
    assert report.created == [("v1", "PersistentVolumeClaim", "qwen-cache")]
    before = copy.deepcopy(server.must("v1/persistentvolumeclaims", "ai", "qwen-cache"))
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc()], live=live(server)
    )
    assert report.skipped and not report.refused
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc("20Gi", "h2")], live=live(server)
    )
    (refusal,) = report.refused
    assert refusal.cache
    assert refusal.message.startswith("PersistentVolumeClaim ai/qwen-cache was created from a different spec")
    assert "kubectl -n ai delete persistentvolumeclaim qwen-cache" in refusal.message
    assert server.must("v1/persistentvolumeclaims", "ai", "qwen-cache") == before


async def test_create_once_race_reads_the_existing_object(
    server: ApiServer, client: apiclient.Client
) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    await applier.sync(namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc()], live=live(server))
    stale_view: dict[applying.ObjectKey, dict[str, Any]] = {}  # the watch has not shown it yet
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc("20Gi", "h2")], live=stale_view
    )
    assert [r.key for r in report.refused] == [("v1", "PersistentVolumeClaim", "qwen-cache")]
    assert ("v1", "PersistentVolumeClaim", "qwen-cache") in report.live


async def test_pvc_without_a_spec_hash_is_still_create_once(
    server: ApiServer, client: apiclient.Client
) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc(spec_hash=None)], live=live(server)
    )
    created = server.must("v1/persistentvolumeclaims", "ai", "qwen-cache")
    assert applying.SPEC_HASH in created["metadata"]["annotations"]
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[pvc("30Gi", None)], live=live(server)
    )
    assert report.refused and server.must("v1/persistentvolumeclaims", "ai", "qwen-cache") == created


async def test_prune_only_owned_managed_objects(server: ApiServer, client: apiclient.Client) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    await applier.sync(
        namespace="ai",
        service="qwen",
        owner_uid=OWNER,
        desired=[configmap("a"), configmap("b")],
        live=live(server),
    )
    foreign = configmap("c")
    foreign["metadata"]["ownerReferences"] = [{**REF, "uid": "someone-else"}]
    server.upsert("v1/configmaps", foreign)
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap("a")], live=live(server)
    )
    assert report.pruned == [("v1", "ConfigMap", "b")]
    assert server.obj("v1/configmaps", "ai", "b") is None
    assert server.obj("v1/configmaps", "ai", "c") is not None


async def test_writes_are_fenced(server: ApiServer, client: apiclient.Client) -> None:
    leader = False
    applier = applying.Applier(client=client, field_manager="noctaya", may_write=lambda: leader)
    with pytest.raises(applying.NotLeaderError):
        await applier.sync(
            namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
        )
    assert server.obj("v1/configmaps", "ai", "qwen-gateway") is None
    leader = True
    await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[configmap()], live=live(server)
    )
    assert server.obj("v1/configmaps", "ai", "qwen-gateway") is not None


def test_unknown_kinds_are_rejected() -> None:
    with pytest.raises(apiclient.UnknownKindError):
        apiclient.kind_of({"apiVersion": "example.com/v1", "kind": "Widget"})


async def test_a_rejected_object_holds_back_the_next_wave(
    server: ApiServer, client: apiclient.Client
) -> None:
    applier = applying.Applier(client=client, field_manager="noctaya")
    invalid = configmap()
    invalid["metadata"]["labels"]["serving.noctaya.io/llmservice"] = "x" * 64  # over the label limit
    service = {**configmap(name="qwen"), "kind": "Service", "data": None}
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[invalid, service], live=live(server)
    )
    assert [r.key for r in report.rejected] == [("v1", "ConfigMap", "qwen-gateway")]
    assert "ConfigMap ai/qwen-gateway" in report.rejected[0].message
    assert "metadata.labels" in report.rejected[0].message
    assert not (report.created or report.applied or report.pruned)
    assert server.obj("v1/services", "ai", "qwen") is None


def backend(initial: int = 0, image: str = "engine:1") -> dict[str, Any]:
    labels = {"serving.noctaya.io/llmservice": "qwen", "app": "backend"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "qwen-backend",
            "namespace": "ai",
            "labels": labels,
            "ownerReferences": [REF],
            "annotations": {applying.INITIAL_REPLICAS: str(initial)},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "e", "image": image}]},
            },
        },
    }


def deployments(server: ApiServer) -> dict[applying.ObjectKey, dict[str, Any]]:
    return {
        applying.key_of(obj): obj
        for (res, ns, _), obj in server.store.items()
        if ns == "ai" and res == "apps/v1/deployments"
    }


@pytest.mark.parametrize("initial", [0, 2])
async def test_a_backend_is_created_at_its_initial_replicas_and_never_applied_with_them_again(
    server: ApiServer, client: apiclient.Client, initial: int
) -> None:
    """Created with ``initial`` replicas (min 0: no Pod before the first request); the field is then
    held by a manager of its own and our applies leave it out, so a scale by KEDA stays."""
    key = ("apps/v1", "Deployment", "qwen-backend")
    applier = applying.Applier(client=client, field_manager="noctaya")
    report = await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[backend(initial)], live={}
    )
    assert report.created == [key]
    assert server.must("apps/v1/deployments", "ai", "qwen-backend")["spec"]["replicas"] == initial
    ours = server._applied[(("apps/v1/deployments", "ai", "qwen-backend"), "noctaya")]
    held = server._applied[(("apps/v1/deployments", "ai", "qwen-backend"), applying.INITIAL_REPLICAS_MANAGER)]
    assert "replicas" not in ours["spec"] and held["spec"] == {"replicas": initial}

    scaled = copy.deepcopy(server.must("apps/v1/deployments", "ai", "qwen-backend"))
    scaled["spec"]["replicas"] = 3  # KEDA
    server.upsert("apps/v1/deployments", scaled)
    report = await applier.sync(
        namespace="ai",
        service="qwen",
        owner_uid=OWNER,
        desired=[backend(initial, "engine:2")],
        live=deployments(server),
    )
    assert report.applied == [key]
    live_backend = server.must("apps/v1/deployments", "ai", "qwen-backend")
    assert live_backend["spec"]["replicas"] == 3  # KEDA's scale stays
    assert live_backend["spec"]["template"]["spec"]["containers"][0]["image"] == "engine:2"


@pytest.mark.parametrize("ours", [True, False])
async def test_a_new_replica_hands_the_replicas_over_only_where_our_apply_still_holds_them(
    server: ApiServer, client: apiclient.Client, ours: bool
) -> None:
    """An operator stopped between the creating apply and the hand-over left ``replicas`` with its own
    manager: the next replica's first apply hands them over (read fresh, with managedFields) before it
    leaves them out; otherwise nothing is handed over."""
    existing = backend(0)
    existing["spec"]["replicas"] = 0
    fields: dict[str, Any] = {"f:spec": {"f:replicas": {}}} if ours else {"f:spec": {"f:template": {}}}
    existing["metadata"]["managedFields"] = [
        {"manager": "noctaya", "operation": "Apply", "apiVersion": "apps/v1", "fieldsV1": fields}
    ]
    server.upsert("apps/v1/deployments", existing)
    applier = applying.Applier(client=client, field_manager="noctaya")
    await applier.sync(
        namespace="ai", service="qwen", owner_uid=OWNER, desired=[backend(0)], live=deployments(server)
    )
    handed = (("apps/v1/deployments", "ai", "qwen-backend"), applying.INITIAL_REPLICAS_MANAGER)
    assert (handed in server._applied) == ours
    assert server.must("apps/v1/deployments", "ai", "qwen-backend")["spec"]["replicas"] == 0
