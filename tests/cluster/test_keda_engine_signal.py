"""``kvCacheUtil`` in a cluster: the headless Service and the ScaledObject accepted, the HPA built by KEDA
with the metric, and the metric read through KEDA's metrics API server from a real ``noctaya gateway``.

Built as ``test_keda_scale_out``: the operator (a real process) renders and applies
``examples/vllm-nvidia`` with ``scaling`` ``min: 1, max: 3, metric: kvCacheUtil, kvCacheTarget: 50``;
the gateway runs from the rendered ConfigMap on a loopback address, and so does the model server a
Ready backend Pod stands for (``noctaya.dev.fake_engine`` reporting 90 % KV-cache use under the name
the example runtime's ``spec.metrics.kvCacheUtil`` gives, vLLM v0's). The headless Service's DNS
answer (the Ready Pods) is the engine's loopback address.

Aspects: the API server accepts ``<name>-engines`` (headless, Ready Pods only) and the control plane
lists exactly the Ready backend Pod in its EndpointSlice (what cluster DNS answers from); KEDA's HPA
carries the External metric with an ``AverageValue`` target of ``500m``; the external metrics API
serves the gateway's ``GetMetrics`` value (900m: one replica at 90 %) and the HPA asks for 2 replicas
with no request at all — the engine's load, not the gateway's count.
"""

from __future__ import annotations

import pathlib
from collections.abc import Iterator

import pytest

from tests.cluster import gateways, llmservice
from tests.cluster import kube as kube_mod
from tests.cluster.conftest import Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]


class Stack(llmservice.Service):
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        doc = llmservice.example("vllm-nvidia", namespace=namespace)
        doc["metadata"]["name"] = "kv"
        doc["spec"]["scaling"] = {"min": 1, "max": 3, "metric": "kvCacheUtil", "kvCacheTarget": 50}
        doc["spec"]["cache"] = {"strategy": "None"}
        super().__init__(cluster=cluster, doc=doc, directory=directory)
        self.gateway_address = gateways.loopback()
        self.engine_address = gateways.loopback()


@pytest.fixture(scope="module")
def stack(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    namespace = cluster.namespace("kv-cache")
    cluster.apply_runtime("vllm-nvidia")
    stack = Stack(cluster=cluster, namespace=namespace, directory=tmp_path_factory.mktemp("kv-cache"))
    with llmservice.deployed(cluster, service=stack, identity="k", scaler_address=stack.gateway_address):
        stack.start_gateway(address=stack.gateway_address, engine_address=stack.engine_address)
        yield stack


def test_the_hpa_scales_on_the_engines_kv_cache_use(stack: Stack) -> None:
    kube = stack.kube
    headless = wait(
        "the headless Service",
        lambda: (
            kube.get(f"/api/v1/namespaces/{stack.namespace}/services/kv-engines")
            if kube.exists(f"/api/v1/namespaces/{stack.namespace}/services/kv-engines")
            else {}
        ),
        bool,
        timeout=180,
    )
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"].get("publishNotReadyAddresses", False) is False
    hpa = wait(
        "KEDA's HPA with the external metric",
        stack.hpa,
        lambda h: any(m["type"] == "External" for m in (h.get("spec") or {}).get("metrics", [])),
        timeout=240,
    )
    external = hpa["spec"]["metrics"][0]["external"]
    assert external["target"] == {"type": "AverageValue", "averageValue": "500m"}, external
    metric = external["metric"]["name"]
    pod = wait(
        "one backend Pod Ready",
        stack.backend_pods,
        lambda pods: len(pods) == 1 and llmservice.ready(pods[0]),
        timeout=240,
    )[0]

    def addresses() -> list[str]:
        slices = kube.get(
            f"/apis/discovery.k8s.io/v1/namespaces/{stack.namespace}/endpointslices",
            labelSelector="kubernetes.io/service-name=kv-engines",
        )["items"]
        return sorted(
            a
            for s in slices
            for e in s.get("endpoints") or []
            if (e.get("conditions") or {}).get("ready")
            for a in e["addresses"]
        )

    assert wait("the Ready Pod in the headless Service", addresses, bool, timeout=120) == [
        pod["status"]["podIP"]
    ]
    port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
    stack.start_engine(
        address=stack.engine_address,
        port=port,
        extra=("--kv-cache-usage", "0.9", "--kv-cache-metric", "vllm:gpu_cache_usage_perc"),
    )

    def value() -> str:
        try:  # through the aggregator, as the HPA controller reads it
            items = kube.get(
                f"/apis/external.metrics.k8s.io/v1beta1/namespaces/{stack.namespace}/{metric}",
                labelSelector=f"scaledobject.keda.sh/name={stack.name}",
            )["items"]
        except kube_mod.ApiError as exc:  # KEDA answers an error until the scaler is reachable
            return f"error {exc.status}"
        return str(items[0]["value"]) if items else ""

    assert wait("GetMetrics through the metrics API", value, lambda v: v == "900m", timeout=120) == "900m"
    wait(
        "the HPA to ask for 2 replicas on the KV-cache use",
        stack.hpa,
        lambda h: int((h.get("status") or {}).get("desiredReplicas") or 0) == 2,
        timeout=300,
    )
