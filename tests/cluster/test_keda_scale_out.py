"""1 -> N: sustained demand above target makes the HPA, through KEDA's metrics API server, ask for more.

How the test is built: the operator (a real process) renders and applies everything for
``examples/vllm-nvidia`` with ``scaling`` ``min: 1, max: 3, target: 1`` and no cache; nothing it applied
is edited. The chain under test is the one of a cluster: kube-controller-manager's HPA controller reads
the ``s0-...`` external metric from ``external.metrics.k8s.io/v1beta1``, which the kube-apiserver's
aggregator serves from KEDA's metrics API server, which asks KEDA's operator (gRPC), which asks the
gateway's ExternalScaler (``GetMetrics``); the HPA then writes the backend Deployment's scale.

How addresses are mapped (only those; ``scripts/cluster.sh`` sets up the first two):

- the APIService ``v1beta1.external.metrics.k8s.io`` names the Service
  ``keda/keda-operator-metrics-apiserver``; its EndpointSlice and Endpoints (no selector) hold this
  host's non-loopback address (an endpoint may not be loopback), where the metrics API server listens
  on a port of its own; the API server runs with ``--enable-aggregator-routing`` (no kube-proxy), so the
  aggregator dials that endpoint, checking the server certificate against the APIService's caBundle;
- KEDA's operator serves its metrics gRPC service on a loopback address of the cluster's own, which the
  metrics API server dials with KEDA's certificates (authority ``keda-operator.keda.svc``);
- KEDA's operator resolves the rendered ``scalerAddress`` host through its own hosts file, mapped to a
  loopback address of this session where the gateway process (the rendered ConfigMap, ``listen``,
  ``scaler.listen`` and ``backendUrl`` moved to loopback addresses, ports kept) serves its scaler;
- every backend Pod KWOK reports Ready is served by one model server process
  (``noctaya.dev.fake_engine``, slow: each completion takes minutes) on the rendered backend port.

Aspects: with one replica Ready, four requests held in flight at the gateway (the scaler's metric, four
times the target of one per replica) make the HPA's ``desiredReplicas`` exceed 1 and the backend
Deployment's replicas go beyond 1 — written by the HPA controller to the scale subresource, never by
the operator — and KWOK brings the new Pods up.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import pathlib
from collections.abc import Iterator

import pytest

from tests.cluster import gateways, llmservice, operators
from tests.cluster.conftest import Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]

IN_FLIGHT = 4


class Stack(llmservice.Service):
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        doc = llmservice.example("vllm-nvidia", namespace=namespace)
        doc["metadata"]["name"] = "scale-out"
        doc["spec"]["scaling"] = {"min": 1, "max": 3, "target": 1}
        doc["spec"]["cache"] = {"strategy": "None"}
        super().__init__(cluster=cluster, doc=doc, directory=directory)
        self.gateway_address = gateways.loopback()
        self.engine_address = gateways.loopback()


@pytest.fixture(scope="module")
def stack(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    namespace = cluster.namespace("scale-out")
    cluster.apply_runtime("vllm-nvidia")
    stack = Stack(cluster=cluster, namespace=namespace, directory=tmp_path_factory.mktemp("scale-out"))
    with llmservice.deployed(cluster, service=stack, identity="s", scaler_address=stack.gateway_address):
        stack.start_gateway(address=stack.gateway_address, engine_address=stack.engine_address)
        yield stack


def test_sustained_demand_makes_the_hpa_scale_the_backend_beyond_one(stack: Stack) -> None:
    hpa = wait(
        "KEDA's HPA with the external metric",
        stack.hpa,
        lambda h: any(m["type"] == "External" for m in (h.get("spec") or {}).get("metrics", [])),
        timeout=240,
    )
    metric = hpa["spec"]["metrics"][0]["external"]["metric"]["name"]
    assert metric.startswith("s0-"), metric
    pod = wait(
        "one backend Pod Ready",
        stack.backend_pods,
        lambda pods: len(pods) == 1 and llmservice.ready(pods[0]),
        timeout=240,
    )[0]
    port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
    engine = stack.start_engine(address=stack.engine_address, port=port, tokens=3000, token_delay="100ms")
    # the external metric reads through the aggregator (the HPA controller's own path) while idle
    raw = stack.kube.get(
        f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{stack.namespace}/{metric}",
        labelSelector=f"scaledobject.keda.sh/name={stack.name}",
    )
    assert raw["kind"] == "ExternalMetricValueList", raw
    gateway = f"http://{stack.gateway_address}:8080"
    llmservice.answering(gateway)

    def hold() -> None:
        with contextlib.suppress(OSError):  # cut when the model server stops at the end of the test
            stack.chat(gateway, max_tokens=3000, timeout=600)

    with concurrent.futures.ThreadPoolExecutor(max_workers=IN_FLIGHT) as pool:
        held = [pool.submit(hold) for _ in range(IN_FLIGHT)]
        try:
            hpa = wait(
                "the HPA to ask for more than one replica",
                stack.hpa,
                lambda h: int((h.get("status") or {}).get("desiredReplicas") or 0) > 1,
                timeout=300,
            )
            current = [m for m in hpa["status"].get("currentMetrics", []) if m["type"] == "External"]
            assert current and current[0]["external"]["metric"]["name"] == metric, hpa["status"]
            deployment = wait(
                "the backend Deployment scaled beyond 1",
                stack.backend,
                lambda d: int(d["spec"].get("replicas") or 0) > 1,
                timeout=120,
            )
            assert deployment["spec"]["replicas"] <= 3
            writers = [
                e.get("userAgent", "")
                for e in operators.audit_events(stack.cluster)
                if e.get("objectRef", {}).get("resource") == "deployments"
                and e["objectRef"].get("subresource") == "scale"
                and e["objectRef"].get("name") == f"{stack.name}-backend"
                and e["objectRef"].get("namespace") == stack.namespace
                and e.get("verb") in ("update", "patch")
                and e.get("stage") == "ResponseComplete"
            ]
            assert any("horizontal-pod-autoscaler" in w for w in writers), writers
            assert not any(w.startswith("noctaya") for w in writers), writers
            wait(
                "KWOK to bring the new backend Pods up",
                stack.backend_pods,
                lambda pods: len([p for p in pods if llmservice.ready(p)]) == deployment["spec"]["replicas"],
                timeout=180,
            )
        finally:
            engine.stop()
            for future in held:
                future.result(timeout=120)
