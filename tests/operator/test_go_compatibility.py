"""A Go user's LLMService through the real operator: the status they read is the one they know.

The Go-style ``qwen`` LLMService and its runtime (``tests/data/go/``, v1alpha1 fields of the Go
implementation only) are created in the emulator; the operator reports ``Ready=True/Available``,
``Degraded=False/Healthy``, ``AutoscalingReady=True/ScaledObjectApplied``, ``endpointURL``
``http://qwen.llm.svc/v1`` and the public Service ``qwen`` is the gateway's; scaled to zero it reads
``Ready=False/ScaledToZero``, ``Degraded=False/Inactive``, phase ``ScaledToZero``."""

from __future__ import annotations

import pathlib

import pytest
import yaml

from tests.operator.apiserver import ApiServer
from tests.operator.cluster import SimulatedCluster
from tests.operator.conftest import StartOperator, WaitFor, scale_up_as_keda
from tests.operator.scenario import LLMSERVICES, RUNTIMES

pytestmark = pytest.mark.timeout(90)

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "go"
NS = "llm"


def conditions(server: ApiServer) -> dict[str, tuple[str, str]]:
    status = (server.must(LLMSERVICES, NS, "qwen").get("status")) or {}
    return {c["type"]: (c["status"], c["reason"]) for c in status.get("conditions") or []}


async def test_a_go_llmservice_reports_the_go_vocabulary(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    server.upsert("v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
    for runtime in yaml.safe_load_all((DATA / "runtimes.yaml").read_text()):
        server.upsert(RUNTIMES, runtime)
    qwen = next(
        s
        for s in yaml.safe_load_all((DATA / "llmservices.yaml").read_text())
        if s["metadata"]["name"] == "qwen"
    )
    server.upsert(LLMSERVICES, qwen)
    await operators(namespaces=(NS,))
    # min 0: created at zero replicas, nothing starts before the first request
    await wait_for(lambda: conditions(server).get("Ready") == ("False", "ScaledToZero"))
    assert server.must("apps/v1/deployments", NS, "qwen-backend")["spec"]["replicas"] == 0
    await scale_up_as_keda(server, wait_for, namespace=NS)
    await wait_for(lambda: (server.must(LLMSERVICES, NS, "qwen").get("status") or {}).get("phase") == "Ready")
    status = server.must(LLMSERVICES, NS, "qwen")["status"]
    assert status["endpointURL"] == "http://qwen.llm.svc/v1"
    assert status["resolvedRuntime"] == "vllm-nvidia"
    assert conditions(server) == {
        "Ready": ("True", "Available"),
        "Degraded": ("False", "Healthy"),
        "AutoscalingReady": ("True", "ScaledObjectApplied"),
        "Reconciled": ("True", "Applied"),
    }
    public = server.must("v1/services", NS, "qwen")
    assert public["spec"]["selector"]["app.kubernetes.io/component"] == "gateway"
    assert (
        server.must("v1/services", NS, "qwen-backend")["spec"]["selector"]["app.kubernetes.io/component"]
        == "backend"
    )

    cluster.scale(NS, "qwen-backend", 0)
    await wait_for(lambda: conditions(server).get("Degraded") == ("False", "Inactive"))
    assert conditions(server)["Ready"] == ("False", "ScaledToZero")
    assert server.must(LLMSERVICES, NS, "qwen")["status"]["phase"] == "ScaledToZero"
