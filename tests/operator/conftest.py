"""Fixtures for operator tests: an API server, a simulated cluster, and real operator replicas.

- ``server``: :class:`apiserver.ApiServer` on a local port, with the built-in resources, our CRDs
  (LLMService, InferenceRuntime), KEDA's ScaledObject, the ``ai`` and ``noctaya-system`` namespaces.
- ``cluster``: :class:`cluster.SimulatedCluster` attached to it (Deployment/Job controllers, kubelet).
- ``operators``: starts real :class:`noctaya.operator.running.Operator` replicas (kopf + Lease) against
  the server, with short waits; every replica is stopped at teardown.
- ``wait_for``: polls a condition without blocking the loop the server runs on.

:func:`ready_service` is the usual start of a scenario: a runtime, one LLMService, a replica, phase Ready.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import pathlib
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

# Imported now so that hypothesis's pytest plugin does not compile it at session end, which trips a
# CPython 3.11.7 compiler bug ("AST constructor recursion depth mismatch") after these tests.
import hypothesis  # noqa: F401
import kmock
import kopf
import pytest
from kubernetes_asyncio import client as k8s_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the helpers are imported as tests.operator.<module>
    sys.path.insert(0, str(ROOT))

from noctaya.api import servicestatus  # noqa: E402
from noctaya.constructs import synthesis  # noqa: E402
from noctaya.operator import events, reconciliation, running, settings  # noqa: E402
from tests.operator import access  # noqa: E402
from tests.operator.apiserver import ApiServer  # noqa: E402
from tests.operator.cluster import DEPLOYMENTS, SimulatedCluster, Timings  # noqa: E402
from tests.operator.scenario import (  # noqa: E402
    LLMSERVICES,
    NS,
    RUNTIMES,
    SCALEDOBJECTS,
    runtime_body,
    service_body,
    status_of,
)


def declare_keda(server: ApiServer) -> None:
    server.declare(SCALEDOBJECTS, kind="ScaledObject")
    server.upsert(
        "apiextensions.k8s.io/v1/customresourcedefinitions",
        {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "scaledobjects.keda.sh"},
            "spec": {
                "group": "keda.sh",
                "names": {"plural": "scaledobjects", "kind": "ScaledObject"},
                "scope": "Namespaced",
                "versions": [{"name": "v1alpha1", "served": True, "storage": True}],
            },
        },
    )


def make_server(*, keda: bool = True) -> ApiServer:
    server = ApiServer()
    with warnings.catch_warnings():  # kmock reads its bundled resources with a deprecated importlib API
        warnings.simplefilter("ignore", DeprecationWarning)
        server.resources.load_bundled()
    server.declare(LLMSERVICES, kind="LLMService")
    server.declare(RUNTIMES, kind="InferenceRuntime", namespaced=False)
    for name in (NS, "noctaya-system"):
        server.upsert("v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    if keda:
        declare_keda(server)
    return server


@pytest.fixture
def keda() -> bool:
    return True


def undeclared_writes(server: ApiServer) -> tuple[list[str], Callable[[], None]]:
    """Every LLMService condition and operator Event whose type or reason ``noctaya.api`` does not
    declare, as the operator writes them (the list fills while the scenario runs)."""
    found: list[str] = []
    types = {str(t) for t in servicestatus.ConditionType}
    reasons = {str(r) for r in servicestatus.Reason}

    def check(event_type: str, resource: str, obj: dict[str, Any]) -> None:
        if resource == LLMSERVICES:
            for cond in (obj.get("status") or {}).get("conditions") or []:
                if cond.get("type") not in types or cond.get("reason") not in reasons:
                    found.append(f"condition {cond.get('type')}/{cond.get('reason')}")
        elif (
            resource == "v1/events"
            and (obj.get("source") or {}).get("component") == events.COMPONENT
            and obj.get("reason") not in reasons
        ):
            found.append(f"event {obj.get('reason')}")

    return found, server.subscribe(check)


@pytest.fixture
async def server(keda: bool) -> AsyncIterator[ApiServer]:
    api = make_server(keda=keda)
    undeclared, unsubscribe = undeclared_writes(api)
    async with api, kmock.Server(api):
        yield api
    unsubscribe()
    assert not undeclared, f"the operator wrote undeclared types/reasons: {sorted(set(undeclared))}"


@pytest.fixture
def timings() -> Timings:
    return Timings()


@pytest.fixture
async def cluster(server: ApiServer, timings: Timings) -> AsyncIterator[SimulatedCluster]:
    async with SimulatedCluster(server, timings=timings) as sim:
        yield sim


@dataclasses.dataclass
class Replica:
    operator: running.Operator
    stop: asyncio.Event
    task: asyncio.Task[None]
    api: k8s_client.ApiClient
    #: every pass the replica finished, in order (its ``on_pass`` callback)
    passes: list[reconciliation.PassRecord] = dataclasses.field(default_factory=list)

    def passes_of(self, key: tuple[str, str], *, since: int = 0) -> list[reconciliation.PassRecord]:
        return [p for p in self.passes[since:] if p.key == key]

    async def shutdown(self) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, 15)
        await self.api.close()

    async def crash(self) -> None:
        """Die without releasing the Lease (as on SIGKILL)."""
        self.operator.elector = None  # nothing to release
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.api.close()


StartOperator = Callable[..., Awaitable[Replica]]


#: the replicas' leader election: short enough for quick hand-overs, long enough that a loaded machine's
#: scheduling delays (hundreds of ms) stay well inside the margins the leadership scenarios assert
LEASE_DURATION = 3.0
RENEW_DEADLINE = 2.0
RETRY_PERIOD = 0.2


@pytest.fixture
async def operators(server: ApiServer) -> AsyncIterator[StartOperator]:
    replicas: list[Replica] = []
    url = str(server.url).rstrip("/")

    async def start(*, identity: str = "op-a", **overrides: Any) -> Replica:
        values: dict[str, Any] = dict(
            namespaces=(NS,),
            gateway_image="ghcr.io/noctaya/noctaya:test",
            identity=identity,
            lease_namespace="noctaya-system",
            lease_duration=LEASE_DURATION,
            renew_deadline=RENEW_DEADLINE,
            retry_period=RETRY_PERIOD,
            health_listen="",
            keda_recheck=0.5,
            requeue_base_backoff=0.05,
            requeue_max_backoff=1.0,
            server=url,
        )
        values.update(overrides)
        config = settings.OperatorSettings(**values)
        host = str(config.server)  # the emulator unless a test points the replica elsewhere
        api = k8s_client.ApiClient(k8s_client.Configuration(host=host))
        op = running.Operator(
            config=config,
            api=api,
            render=synthesis.render_llmservice,
            login=kopf.ConnectionInfo(server=host),
            fast=True,
        )
        stop = asyncio.Event()
        passes: list[reconciliation.PassRecord] = []
        op.on_pass(passes.append)
        task = asyncio.create_task(op.run(stop=stop), name=f"operator {identity}")
        replica = Replica(operator=op, stop=stop, task=task, api=api, passes=passes)
        replicas.append(replica)
        return replica

    yield start
    for replica in replicas:
        if not replica.task.done():
            await replica.shutdown()
        elif not replica.api.closed if hasattr(replica.api, "closed") else False:
            await replica.api.close()
    # every request the replicas made is one their installation's RBAC allows
    objects: list[Any] = []
    for config in {
        (r.operator.config.namespaces, r.operator.config.lease_namespace, r.operator.config.leader_election)
        for r in replicas
    }:
        objects += await access.rbac(
            watch_namespaces=config[0], namespace=config[1], leader_election=config[2]
        )
    if replicas:
        refused = access.refused(server.accesses, objects)
        assert not refused, f"requests the operator's RBAC does not allow: {refused}"
        foreign = access.foreign_secret_requests(server.secret_requests)
        assert not foreign, f"requests on Secrets the operator does not own: {foreign}"


async def _wait_for(
    predicate: Callable[[], object], *, within: float = 30.0, interval: float = 0.02, message: str = ""
) -> Any:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        value = predicate()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {message or predicate}")
        await asyncio.sleep(interval)


WaitFor = Callable[..., Awaitable[Any]]


@pytest.fixture
def wait_for() -> WaitFor:
    return _wait_for


async def settled(replica: Replica, wait_for: WaitFor, key: tuple[str, str] = (NS, "qwen")) -> None:
    """Mark ``key`` and wait until that pass has ended and nothing is queued, running or timed for it:
    what the scenario set off before has happened, so a check that nothing more happened is not
    vacuous (it follows a pass that would have done it)."""
    queue = await wait_for(lambda: replica.operator.queue, message="a leadership term")
    since = len(replica.passes)
    queue.add(key)
    await wait_for(
        lambda: replica.passes_of(key, since=since) and queue.idle(key), message=f"a settled pass of {key}"
    )


async def ready_service(
    server: ApiServer,
    operators: StartOperator,
    wait_for: WaitFor,
    *,
    spec: dict[str, Any] | None = None,
    **overrides: Any,
) -> Replica:
    """The ``vllm`` runtime and the LLMService ``qwen`` (``spec`` merged into the default one), one
    operator replica (``overrides`` of its settings), its backend scaled to one replica as KEDA does on
    the first request (the operator creates it with ``scaling.min``, 0), and the service reported
    Ready."""
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body(**(spec or {})))
    replica = await operators(**overrides)
    await scale_up_as_keda(server, wait_for)
    await wait_for(lambda: status_of(server).get("phase") == "Ready", message="phase Ready")
    return replica


async def scale_up_as_keda(
    server: ApiServer, wait_for: WaitFor, *, service: str = "qwen", namespace: str = NS
) -> None:
    """Once the operator applied the backend (created with its initial replicas), scale it to at least
    one."""
    name = f"{service}-backend"

    def applied() -> bool:
        obj = server.obj(LLMSERVICES, namespace, service) or {}
        conditions = (obj.get("status") or {}).get("conditions") or []
        reconciled = any(c.get("type") == "Reconciled" and c.get("status") == "True" for c in conditions)
        return reconciled and server.obj(DEPLOYMENTS, namespace, name) is not None

    await wait_for(applied, message=f"Deployment {name} applied")
    backend = copy.deepcopy(server.must(DEPLOYMENTS, namespace, name))
    if not backend["spec"].get("replicas"):
        backend["spec"]["replicas"] = 1
        server.upsert(DEPLOYMENTS, backend)
