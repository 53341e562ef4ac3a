"""The operator's RBAC is exactly what it calls: every verb of ``noctaya.api.access.GRANTS`` is used.

Every operator test checks at teardown (``operators`` fixture) that each request its replicas sent is
allowed by the RBAC their installation renders. This scenario drives every code path that talks to the
API server — watches, server-side apply, create-once objects (also when their name is already taken),
pruning, status, Events, the Lease — once cluster-wide and once confined to watched namespaces, and then
requires that the requests cover the whole table: a grant nobody uses is a grant too many.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from noctaya.api import access as grants
from noctaya.api.meta import LLMSERVICE_LABEL
from tests.operator import access
from tests.operator.apiserver import Access, ApiServer
from tests.operator.cluster import SimulatedCluster
from tests.operator.conftest import StartOperator, WaitFor
from tests.operator.scenario import (
    LLMSERVICES,
    NS,
    RUNTIMES,
    SCALEDOBJECTS,
    runtime_body,
    service_body,
    status_of,
)

PVCS = "v1/persistentvolumeclaims"
JOBS = "batch/v1/jobs"
SECRETS = "v1/secrets"
PDBS = "policy/v1/poddisruptionbudgets"
HPAS = "autoscaling/v2/horizontalpodautoscalers"


def _incomplete_hpa(name: str) -> dict[str, Any]:
    cron = {
        "type": "External",
        "external": {"metric": {"name": "s1-cron-UTC-08xxx"}, "target": {"type": "AverageValue"}},
    }
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"scaleTargetRef": {"name": "qwen-backend"}, "maxReplicas": 2, "metrics": [cron]},
    }


SCALER = "apps/v1/deployments"
CONFIGMAPS = "v1/configmaps"


def _taken(kind: str, api_version: str, name: str, **fields: Any) -> dict[str, Any]:
    """An object someone else made under a name the operator will want (unlabelled: its watch skips it)."""
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": NS}, **fields}


def _earlier(api_version: str, kind: str, owner: dict[str, Any]) -> dict[str, Any]:
    """An object an earlier operator version rendered for ``owner`` (labelled, controlled by it)."""
    spec: dict[str, Any] = (
        {"ports": [{"port": 80}]} if kind == "Service" else {"scaleTargetRef": {"name": "x"}}
    )
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": "qwen-earlier",
            "namespace": NS,
            "labels": {LLMSERVICE_LABEL: "qwen"},
            "ownerReferences": [
                {
                    "apiVersion": "serving.noctaya.io/v1alpha1",
                    "kind": "LLMService",
                    "name": "qwen",
                    "uid": owner["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": spec,
    }


@pytest.mark.timeout(90)
@pytest.mark.parametrize("namespaces", [(), (NS,)], ids=["cluster-wide", "watched-namespace"])
async def test_every_grant_is_used(
    server: ApiServer,
    cluster: SimulatedCluster,
    operators: StartOperator,
    wait_for: WaitFor,
    namespaces: tuple[str, ...],
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    everything: dict[str, Any] = {
        "endpoint": {"replicas": 2},
        "cache": {"strategy": "SharedPVC", "prewarm": True},
        "scaling": {"max": 2, "schedules": [{"name": "office", "start": "0 8 * * *", "duration": "1h"}]},
    }
    # the HPA KEDA built while the demand trigger's scaler did not answer: only the cron metric
    server.upsert(HPAS, _incomplete_hpa("keda-hpa-qwen"))
    # "taken": its scaler token, cache claim and prewarm Job names are held by objects of someone else
    server.upsert(SECRETS, _taken("Secret", "v1", "taken-scaler-token", data={}))
    server.upsert(
        PVCS,
        _taken(
            "PersistentVolumeClaim",
            "v1",
            "taken-cache",
            spec={"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
        ),
    )
    server.upsert(JOBS, _taken("Job", "batch/v1", "taken-prewarm", spec={"template": {"spec": {}}}))
    server.upsert(LLMSERVICES, service_body("taken", **copy.deepcopy(everything)))
    server.upsert(LLMSERVICES, service_body("qwen", **copy.deepcopy(everything)))
    await operators(namespaces=namespaces)

    await wait_for(
        lambda: all(
            server.obj(r, NS, n)
            for r, n in ((SECRETS, "qwen-scaler-token"), (PVCS, "qwen-cache"), (JOBS, "qwen-prewarm"))
        ),
        within=30,
        message="qwen's create-once objects",
    )
    await wait_for(
        lambda: server.obj(HPAS, NS, "keda-hpa-qwen") is None, message="the HPA handed back to KEDA"
    )
    # what an earlier version rendered and this one does not: pruned
    owner = server.must(LLMSERVICES, NS, "qwen")["metadata"]
    for resource, api_version, kind in (
        ("v1/services", "v1", "Service"),
        (SCALEDOBJECTS, "keda.sh/v1alpha1", "ScaledObject"),
    ):
        server.upsert(resource, _earlier(api_version, kind, owner))
    await wait_for(
        lambda: (
            not server.obj("v1/services", NS, "qwen-earlier")
            and not server.obj(SCALEDOBJECTS, NS, "qwen-earlier")
        ),
        within=30,
        message="objects of an earlier version pruned",
    )
    await wait_for(
        lambda: "taken-cache" in str(status_of(server, "taken").get("conditions")),
        within=30,
        message="taken's refusals reported",
    )
    # one gateway and no cache: the aggregate scaler, its token, the gateways' disruption budget,
    # the claim and the Job are pruned (each waited for: the deletes of one pass land in any order)
    assert server.obj(PDBS, NS, "qwen-gateway")
    obj = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    obj["spec"] = service_body("qwen", cache={"strategy": "None"})["spec"]
    server.upsert(LLMSERVICES, obj)
    gone = (
        (SECRETS, "qwen-scaler-token"),
        (PVCS, "qwen-cache"),
        (JOBS, "qwen-prewarm"),
        (SCALER, "qwen-scaler"),
        (CONFIGMAPS, "qwen-scaler"),  # the scaler's config: its delete is the only ConfigMap delete
        (PDBS, "qwen-gateway"),
    )
    await wait_for(
        lambda: not any(server.obj(r, NS, n) for r, n in gone),
        within=30,
        message="qwen's pruned objects gone",
    )
    await wait_for(
        lambda: any(a.resource == "leases" and a.verb == "update" for a in server.accesses),
        message="a Lease renewal",
    )

    used = {(a.group, a.resource, a.verb) for a in server.accesses}
    scopes = {grants.Scope.CLUSTER, grants.Scope.WATCHED, grants.Scope.LEASE} | (
        {grants.Scope.SCAN} if namespaces else set()
    )
    table = {
        (g.group, g.resource, verb) for g in grants.GRANTS if g.scope in scopes and g.sent for verb in g.verbs
    }
    assert sorted(table - used) == [], f"granted but never used: {sorted(table - used)}"
    assert sorted(used - table) == [], f"used but not granted: {sorted(used - table)}"
    # the Secrets it touched: its own tokens only (the operators fixture checks that at teardown)
    secret_verbs = {a.verb for a, _, _ in server.secret_requests}
    assert secret_verbs == {"get", "create", "delete"}, secret_verbs  # by name: never listed or watched
    assert {n for a, n, _ in server.secret_requests if a.verb == "get"} >= {"taken-scaler-token"}


async def test_the_rbac_check_refuses_what_is_not_granted() -> None:
    watched = await access.rbac(watch_namespaces=(NS,), namespace="noctaya-system", leader_election=True)
    everywhere = await access.rbac(watch_namespaces=(), namespace="noctaya-system", leader_election=False)
    secrets_here = Access(verb="get", group="", resource="secrets", namespace=NS)
    secrets_everywhere = Access(verb="get", group="", resource="secrets", namespace=None)
    assert access.refused([secrets_here], watched) == []
    assert access.refused([secrets_everywhere, secrets_here._replace(namespace="other")], watched) != []
    assert access.refused([secrets_everywhere], everywhere) == []
    for verb in ("list", "watch"):  # no Secret is listed or watched, in a namespace or cluster-wide
        listing = [secrets_here._replace(verb=verb), secrets_everywhere._replace(verb=verb)]
        assert access.refused(listing, watched) == listing
        assert access.refused(listing, everywhere) == listing
    finalizers = Access(
        verb="update", group="serving.noctaya.io", resource="llmservices/finalizers", namespace=NS
    )
    assert access.refused([finalizers], watched) == [] and access.refused([finalizers], everywhere) == []
    for verb in ("update", "deletecollection"):
        assert access.refused(
            [Access(verb=verb, group="apps", resource="deployments", namespace=NS)], everywhere
        )
    lease = Access(verb="update", group="coordination.k8s.io", resource="leases", namespace="noctaya-system")
    assert access.refused([lease], watched) == [] and access.refused([lease], everywhere) == [lease]
    assert access.refused([lease._replace(verb="patch")], watched) != []


def test_the_secret_check_flags_other_secrets() -> None:
    def req(verb: str, name: str = "", selector: str = "") -> tuple[Access, str, str]:
        return (Access(verb=verb, group="", resource="secrets", namespace=NS), name, selector)

    own = [
        req("list", selector=LLMSERVICE_LABEL),
        req("watch", selector=f"{LLMSERVICE_LABEL},other=x"),
        req("get", "qwen-scaler-token"),
        req("delete", "qwen-scaler-token"),
        req("create"),
    ]
    assert access.foreign_secret_requests(own) == []
    others = [
        req("list"),
        req("watch", selector="app=x"),
        req("list", selector=f"!{LLMSERVICE_LABEL}"),
        req("list", selector=f"{LLMSERVICE_LABEL}!=qwen"),
        req("get", "registry-credentials"),
        req("get", "-scaler-token"),
        req("delete", "hf-token"),
    ]
    assert access.foreign_secret_requests(others) == sorted(others, key=repr)
