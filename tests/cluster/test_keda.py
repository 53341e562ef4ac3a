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

import concurrent.futures
import json
import pathlib
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from prometheus_client import parser

from tests.cluster import gateways, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]

GROUP = "/apis/serving.noctaya.io/v1alpha1"


class Stack:
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        self.cluster = cluster
        self.kube = cluster.kube
        self.namespace = namespace
        self.directory = directory
        doc = yaml.safe_load((ROOT / "examples" / "sglang" / "llmservice.yaml").read_text())
        doc["metadata"]["namespace"] = namespace
        doc["spec"]["scaling"]["scaleDownStabilization"] = "10s"
        self.doc = doc
        self.name = doc["metadata"]["name"]
        self.path = f"{GROUP}/namespaces/{namespace}/llmservices/{self.name}"
        self.gateway_address = gateways.loopback()
        self.engine_address = gateways.loopback()
        self.gateway: gateways.Process | None = None
        self.engine: gateways.Process | None = None

    def apps(self, plural: str, name: str = "") -> str:
        return f"/apis/apps/v1/namespaces/{self.namespace}/{plural}" + (f"/{name}" if name else "")

    def status(self) -> dict[str, Any]:
        return dict(self.kube.get(self.path).get("status") or {})

    def backend_pods(self) -> list[dict[str, Any]]:
        pods = self.kube.get(
            f"/api/v1/namespaces/{self.namespace}/pods",
            labelSelector=f"serving.noctaya.io/llmservice={self.name},app.kubernetes.io/component=backend",
        )["items"]
        return list(pods)

    def start_gateway(self) -> None:
        self.gateway = gateways.start(
            self.cluster,
            namespace=self.namespace,
            name=self.name,
            directory=self.directory,
            address=self.gateway_address,
            engine_address=self.engine_address,
        )

    def start_engine(self, port: int) -> None:
        self.engine = gateways.Process(
            [
                sys.executable, "-m", "noctaya.dev.fake_engine", "--host", self.engine_address,
                "--port", str(port), "--model", self.name, "--ready-delay", "0s", "--tokens", "4",
            ],
            log=self.directory / "engine.log",
        )  # fmt: skip

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
    with operators.replicas(
        cluster, identities=["k"], namespace=namespace, directory=directory, timings=operators.Timings()
    ) as replicas:
        kube.apply(stack.path, stack.doc, manager="platform-team")
        # KEDA resolves the rendered scaler address to this session's gateway address
        gateways.map_scaler_host(cluster, namespace=namespace, name=stack.name, address=stack.gateway_address)
        try:
            yield stack
        finally:
            for proc in (stack.gateway, stack.engine):
                if proc is not None:
                    proc.stop()
            for name, text in [
                ("operator", replicas["k"].text()),
                ("gateway", stack.gateway.text() if stack.gateway else ""),
            ]:
                print(f"---- {name} (last lines)\n" + "\n".join(text.splitlines()[-40:]))
            kube.delete(stack.path)
            kube.delete(f"/api/v1/namespaces/{namespace}")
            kube.delete(f"/api/v1/persistentvolumes/{pv_name}")


def _hpa(stack: Stack) -> list[dict[str, Any]]:
    return list(
        stack.kube.get(f"/apis/autoscaling/v2/namespaces/{stack.namespace}/horizontalpodautoscalers")["items"]
    )


def test_keda_accepts_the_scaled_object_and_its_hpa_has_our_external_metric(stack: Stack) -> None:
    path = f"/apis/keda.sh/v1alpha1/namespaces/{stack.namespace}/scaledobjects/{stack.name}"
    wait("the operator's ScaledObject", lambda: stack.kube.exists(path), bool, timeout=180)
    # the scaler is not reachable yet: KEDA reconciles the ScaledObject without it first
    stack.start_gateway()
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
        lambda: _hpa(stack),
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


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions", [])
    )


def test_a_cold_request_scales_the_backend_from_zero_and_back(stack: Stack) -> None:
    deployment = stack.apps("deployments", f"{stack.name}-backend")
    wait(
        "the backend at 0",
        lambda: stack.kube.get(deployment)["spec"].get("replicas"),
        lambda r: r == 0,
        timeout=180,
    )
    wait("no backend Pod", stack.backend_pods, lambda pods: pods == [], timeout=120)
    body = json.dumps(
        {"model": stack.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    ).encode()
    request = urllib.request.Request(
        f"{stack.gateway_url()}/v1/chat/completions",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )

    def send() -> tuple[int, dict[str, Any]]:
        with urllib.request.urlopen(request, timeout=300) as resp:
            return resp.status, json.loads(resp.read())

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        answer = pool.submit(send)
        scaled = wait(
            "KEDA to scale the backend 0 -> 1",
            lambda: stack.kube.get(deployment),
            lambda d: d["spec"].get("replicas") == 1,
            timeout=120,
        )
        # the operator never owns the backend's replicas (KEDA 2.20's scale writes leave them with no
        # managedFields entry at all: nothing for a later apply of the operator to conflict with)
        owners = [
            m["manager"]
            for m in scaled["metadata"]["managedFields"]
            if "f:replicas" in m.get("fieldsV1", {}).get("f:spec", {})
        ]
        assert "noctaya-operator" not in owners, owners
        pod = wait(
            "KWOK to make the backend Pod Ready",
            stack.backend_pods,
            lambda p: len(p) == 1 and _ready(p[0]),
            timeout=120,
        )[0]
        port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
        stack.start_engine(port)  # the Pod's container, as the kubelet would start it
        status, reply = answer.result(timeout=300)
    assert status == 200 and reply["choices"][0]["message"]["content"], reply
    status_now = wait(
        "the LLMService to turn Ready with lastActivation",
        stack.status,
        lambda s: s.get("phase") == "Ready" and s.get("lastActivation", {}).get("readyAt"),
        timeout=120,
    )
    assert status_now["replicas"] == 1
    # idle: after the cooldown (10 s) and KEDA's next poll (30 s), back to zero
    wait(
        "KEDA to scale back to 0",
        lambda: stack.kube.get(deployment)["spec"].get("replicas"),
        lambda r: r == 0,
        timeout=180,
    )
    wait("the backend Pod to go", stack.backend_pods, lambda pods: pods == [], timeout=120)
    assert stack.engine is not None
    stack.engine.stop()
    wait(
        "the LLMService to report ScaledToZero",
        stack.status,
        lambda s: s.get("phase") == "ScaledToZero",
        timeout=120,
    )
