"""The API server emulator behaves like a real API server where the operator relies on it.

Aspects: resourceVersion changes on every write and not on a no-op; stale resourceVersion → 409;
create of an existing object → 409; invalid name → 422; failed JSON-patch test → 422; apply creates a
missing object, removes fields the same manager stopped applying, conflicts with another manager
unless forced; label selectors on list and watch; watch resumes from a resourceVersion and says 410
when too old; status subresource isolation; Deployment replicas defaulting; owner-reference garbage
collection (cascading, Orphan respected); delete preconditions; the outage switch.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.operator.apiserver import ApiServer

CM = "/api/v1/namespaces/ai/configmaps"
JSON = {"Content-Type": "application/json"}


def cm(name: str = "a", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "ai", "labels": {"app": name}},
        "data": data,
    }


async def call(
    server: ApiServer, method: str, path: str, body: Any = None, content_type: str = "application/json"
) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body)
    async with server.request(method, path, data=data, headers={"Content-Type": content_type}) as rsp:
        return rsp.status, await rsp.json(content_type=None)


async def test_resource_versions_and_conflicts(server: ApiServer) -> None:
    status, created = await call(server, "POST", CM, cm(k="1"))
    assert status == 201
    rv = created["metadata"]["resourceVersion"]
    assert (await call(server, "POST", CM, cm(k="1")))[0] == 409
    status, same = await call(
        server, "PATCH", f"{CM}/a", {"data": {"k": "1"}}, "application/merge-patch+json"
    )
    assert status == 200 and same["metadata"]["resourceVersion"] == rv  # no-op
    status, changed = await call(
        server, "PATCH", f"{CM}/a", {"data": {"k": "2"}}, "application/merge-patch+json"
    )
    assert int(changed["metadata"]["resourceVersion"]) > int(rv)
    stale = cm(k="3")
    stale["metadata"]["resourceVersion"] = rv
    status, body = await call(server, "PUT", f"{CM}/a", stale)
    assert status == 409 and body["reason"] == "Conflict"
    stale["metadata"]["resourceVersion"] = changed["metadata"]["resourceVersion"]
    assert (await call(server, "PUT", f"{CM}/a", stale))[0] == 200
    assert (await call(server, "GET", f"{CM}/missing"))[0] == 404
    assert (await call(server, "PUT", f"{CM}/missing", cm("missing")))[0] == 404


async def test_validation_errors(server: ApiServer) -> None:
    assert (await call(server, "POST", CM, cm("Bad_Name")))[0] == 422
    await call(server, "POST", CM, cm(k="1"))
    patch = [
        {"op": "test", "path": "/data/k", "value": "other"},
        {"op": "replace", "path": "/data/k", "value": "x"},
    ]
    status, body = await call(server, "PATCH", f"{CM}/a", patch, "application/json-patch+json")
    assert status == 422 and body["reason"] == "Invalid"
    assert (await call(server, "PATCH", f"{CM}/a", {"x": 1}, "application/apply-patch+yaml"))[0] == 422


async def test_server_side_apply(server: ApiServer) -> None:
    path = f"{CM}/a?fieldManager=op&force=true"
    status, first = await call(server, "PATCH", path, cm(k="1", old="x"), "application/apply-patch+yaml")
    assert status == 201 and first["data"] == {"k": "1", "old": "x"}
    await call(server, "PATCH", f"{CM}/a", {"data": {"mine": "y"}}, "application/merge-patch+json")
    status, second = await call(server, "PATCH", path, cm(k="2"), "application/apply-patch+yaml")
    assert second["data"] == {"k": "2", "mine": "y"}  # "old" dropped by its manager, "mine" kept
    other = f"{CM}/a?fieldManager=someone"
    status, body = await call(server, "PATCH", other, cm(k="3"), "application/apply-patch+yaml")
    assert status == 409 and "op" in body["message"]
    status, forced = await call(
        server, "PATCH", other + "&force=true", cm(k="3"), "application/apply-patch+yaml"
    )
    assert status == 200 and forced["data"]["k"] == "3"


async def test_selectors_and_watch_resume(server: ApiServer) -> None:
    for name in ("a", "b"):
        await call(server, "POST", CM, cm(name))
    _, listed = await call(server, "GET", f"{CM}?labelSelector=app%3Db")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["b"]
    _, listed = await call(server, "GET", f"{CM}?labelSelector=app%20in%20(a,c)")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    _status, listed = await call(server, "GET", f"{CM}?labelSelector=!app")
    assert listed["items"] == []
    since = listed["metadata"]["resourceVersion"]
    await call(server, "PATCH", f"{CM}/a", {"data": {"k": "1"}}, "application/merge-patch+json")
    await call(server, "PATCH", f"{CM}/b", {"data": {"k": "1"}}, "application/merge-patch+json")
    events = []
    async with server.get(
        f"{CM}?watch=true&resourceVersion={since}&labelSelector=app%3Da&timeoutSeconds=0.2"
    ) as rsp:
        async for line in rsp.content:
            events.append(json.loads(line))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("MODIFIED", "a")]
    async with server.get(f"{CM}?watch=true&resourceVersion=1&timeoutSeconds=0.2") as rsp:
        events = [json.loads(line) async for line in rsp.content]
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410


async def test_status_subresource_and_defaulting(server: ApiServer) -> None:
    deps = "/apis/apps/v1/namespaces/ai/deployments"
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {"template": {}},
        "status": {"readyReplicas": 5},
    }
    _, created = await call(server, "POST", deps, body)
    assert created["spec"]["replicas"] == 1 and "status" not in created
    _, patched = await call(
        server,
        "PATCH",
        f"{deps}/d/status",
        {"status": {"readyReplicas": 1}, "spec": {"replicas": 9}},
        "application/merge-patch+json",
    )
    assert patched["status"] == {"readyReplicas": 1} and patched["spec"]["replicas"] == 1
    _status, patched = await call(
        server,
        "PATCH",
        f"{deps}/d",
        {"status": {"readyReplicas": 7}, "spec": {"replicas": 2}},
        "application/merge-patch+json",
    )
    assert patched["status"] == {"readyReplicas": 1} and patched["spec"]["replicas"] == 2
    assert patched["metadata"]["generation"] == 2


async def test_garbage_collection(server: ApiServer) -> None:
    _, owner = await call(server, "POST", CM, cm("owner"))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
    child = cm("child")
    child["metadata"]["ownerReferences"] = [ref]
    _, child_obj = await call(server, "POST", CM, child)
    grandchild = cm("grandchild")
    grandchild["metadata"]["ownerReferences"] = [
        {**ref, "name": "child", "uid": child_obj["metadata"]["uid"]}
    ]
    await call(server, "POST", CM, grandchild)
    orphan = cm("orphan")
    orphan["metadata"]["ownerReferences"] = [ref]
    await call(server, "POST", CM, orphan)
    assert (await call(server, "DELETE", f"{CM}/owner"))[0] == 200
    assert server.obj("v1/configmaps", "ai", "child") is None
    assert server.obj("v1/configmaps", "ai", "grandchild") is None
    _status, kept = await call(server, "POST", CM, cm("owner2"))
    survivor = cm("survivor")
    survivor["metadata"]["ownerReferences"] = [{**ref, "name": "owner2", "uid": kept["metadata"]["uid"]}]
    await call(server, "POST", CM, survivor)
    await call(server, "DELETE", f"{CM}/owner2?propagationPolicy=Orphan")
    assert server.obj("v1/configmaps", "ai", "survivor") is not None


async def test_delete_preconditions_and_finalizers(server: ApiServer) -> None:
    _, obj = await call(server, "POST", CM, cm())
    wrong = {"kind": "DeleteOptions", "preconditions": {"uid": "not-it"}}
    assert (await call(server, "DELETE", f"{CM}/a", wrong))[0] == 409
    right = {"kind": "DeleteOptions", "preconditions": {"uid": obj["metadata"]["uid"]}}
    assert (await call(server, "DELETE", f"{CM}/a", right))[0] == 200
    held = cm("held")
    held["metadata"]["finalizers"] = ["x/y"]
    await call(server, "POST", CM, held)
    _status, marked = await call(server, "DELETE", f"{CM}/held")
    assert marked["metadata"]["deletionTimestamp"]
    await call(
        server, "PATCH", f"{CM}/held", {"metadata": {"finalizers": None}}, "application/merge-patch+json"
    )
    assert server.obj("v1/configmaps", "ai", "held") is None


async def test_outage(server: ApiServer) -> None:
    async def watch() -> list[Any]:
        async with server.get(f"{CM}?watch=true") as rsp:
            return [line async for line in rsp.content]

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.05)
    await server.outage()
    await asyncio.wait_for(watcher, 2)  # open watches end
    assert (await call(server, "GET", CM))[0] == 503
    server.recover()
    assert (await call(server, "GET", CM))[0] == 200
