"""Real KEDA, the operator's ScaledObject and a real ``noctaya gateway`` with its ExternalScaler.

How the test is built: the operator (a real process) renders and applies everything for
``examples/sglang`` (its scale-down stabilization shortened to 10 s); nothing it applied is edited.
The gateway and the model server would be Pods; here they are local processes, and only the addresses
that resolve in-cluster are mapped:

- KEDA's operator resolves names through a hosts file of its own (bind-mounted over its /etc/hosts by
  ``scripts/cluster.sh``). The test maps the rendered ``scalerAddress`` host (``<name>-scaler.<ns>.svc``)
  to a loopback address of this session, where the gateway's scaler listens on the rendered port 9090;
- the gateway runs with the ConfigMap the operator rendered, its ``listen``/``scaler.listen`` put on
  that loopback address and its ``backendUrl`` on the model server's loopback address (the rendered
  backend port, 8000);
- the model server (``noctaya.dev.fake_engine``) is started when KWOK reports the backend Pod Ready
  and stopped when the Pod is gone, as the kubelet would run and stop its container.

Aspects, in order:
- KEDA accepts the rendered ScaledObject and creates its HPA with our external metric, never a CPU
  fallback, although the scaler was not reachable when KEDA first saw the ScaledObject (the gateway
  starts after the operator's apply: the order in which a cluster brings up Pods);
- KEDA opens ``StreamIsActive`` to the gateway (its scaler reports the stream in its metrics);
- a cold request at the gateway makes KEDA scale the backend 0 -> 1 (never the operator's field),
  KWOK makes the Pod Ready, the request is answered, and the LLMService turns Ready with
  ``status.lastActivation``;
- idle past the cooldown, KEDA scales back to 0 and the LLMService reports ScaledToZero.
"""

from __future__ import annotations

import pathlib
import urllib.request
from collections.abc import Iterator

import pytest
from prometheus_client import parser

from tests.cluster import gateways, llmservice
from tests.cluster.conftest import Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]


class Stack(llmservice.Service):
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        doc = llmservice.example("sglang", namespace=namespace)
        doc["spec"]["scaling"]["scaleDownStabilization"] = "10s"
        super().__init__(cluster=cluster, doc=doc, directory=directory)
        self.gateway_address = gateways.loopback()
        self.engine_address = gateways.loopback()
        self.gateway: gateways.Process | None = None

    def gateway_url(self) -> str:
        return f"http://{self.gateway_address}:8080"

    def metrics(self) -> str:
        with urllib.request.urlopen(f"{self.gateway_url()}/metrics", timeout=10) as resp:
            return str(resp.read().decode())


@pytest.fixture(scope="module")
def stack(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    kube = cluster.kube
    namespace = cluster.namespace("keda")
    cluster.apply_runtime("sglang-nvidia")
    directory = tmp_path_factory.mktemp("keda")
    # the rendered cache PVC (no storage class) binds to a pre-provisioned volume, as on a cluster
    # without a default StorageClass; the PV controller of kube-controller-manager binds it
    pv_name = f"{namespace}-cache"
    kube.create(
        "/api/v1/persistentvolumes",
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": pv_name},
            "spec": {
                "capacity": {"storage": "100Gi"},
                "accessModes": ["ReadWriteOnce"],
                "persistentVolumeReclaimPolicy": "Retain",
                "hostPath": {"path": f"/var/lib/noctaya-test/{pv_name}"},
                "claimRef": {"namespace": namespace, "name": "deepseek-sglang-cache"},
            },
        },
    )
    stack = Stack(cluster=cluster, namespace=namespace, directory=directory)
    try:
        # KEDA resolves the rendered scaler address to this session's gateway address
        with llmservice.deployed(cluster, service=stack, identity="k", scaler_address=stack.gateway_address):
            yield stack
    finally:
        kube.delete(f"/api/v1/persistentvolumes/{pv_name}")


def test_keda_accepts_the_scaled_object_and_its_hpa_has_our_external_metric(stack: Stack) -> None:
    path = f"/apis/keda.sh/v1alpha1/namespaces/{stack.namespace}/scaledobjects/{stack.name}"
    wait("the operator's ScaledObject", lambda: stack.kube.exists(path), bool, timeout=180)
    # the scaler is not reachable yet: KEDA reconciles the ScaledObject without it first
    stack.gateway = stack.start_gateway(address=stack.gateway_address, engine_address=stack.engine_address)
    so = wait(
        "KEDA to mark the ScaledObject Ready",
        lambda: stack.kube.get(path),
        lambda so: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in (so.get("status") or {}).get("conditions", [])
        ),
        timeout=180,
    )
    trigger = so["spec"]["triggers"][0]
    assert trigger["type"] == "external-push"
    hpa = wait(
        "KEDA's HPA to carry the external metric",
        stack.hpas,
        lambda items: (
            len(items) == 1 and any(m["type"] == "External" for m in items[0]["spec"].get("metrics", []))
        ),
        timeout=180,
    )[0]
    metrics = hpa["spec"]["metrics"]
    assert [m["type"] for m in metrics] == ["External"], metrics
    assert metrics[0]["external"]["metric"]["name"].endswith(trigger["metadata"]["metricName"]), metrics
    assert metrics[0]["external"]["target"] == {
        "type": "AverageValue",
        "averageValue": trigger["metadata"]["target"],
    }


def test_keda_opens_the_push_stream_to_the_gateway(stack: Stack) -> None:
    assert stack.gateway is not None
    streams = wait(
        "KEDA's StreamIsActive stream at the gateway's scaler",
        lambda: _streams(stack),
        lambda n: n >= 1,
        timeout=120,
    )
    assert streams == 1


def _streams(stack: Stack) -> float:
    for family in parser.text_string_to_metric_families(_safe_metrics(stack)):
        if family.name == "noctaya_scaler_streams":
            return float(family.samples[0].value)
    return 0.0


def _safe_metrics(stack: Stack) -> str:
    try:
        return stack.metrics()
    except OSError:
        return ""


def test_a_cold_request_scales_the_backend_from_zero_and_back(stack: Stack) -> None:
    cold = stack.serve_from_zero(gateway=stack.gateway_url(), engine_address=stack.engine_address)
    # the operator never owns the backend's replicas (KEDA 2.20's scale writes leave them with no
    # managedFields entry at all: nothing for a later apply of the operator to conflict with)
    owners = [
        m["manager"]
        for m in cold.scaled["metadata"]["managedFields"]
        if "f:replicas" in m.get("fieldsV1", {}).get("f:spec", {})
    ]
    assert "noctaya-operator" not in owners, owners
    assert cold.status["replicas"] == 1
    # idle: after the cooldown (10 s) and KEDA's next poll (30 s), back to zero
    stack.back_to_zero()
