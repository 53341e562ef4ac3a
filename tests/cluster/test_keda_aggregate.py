"""Real KEDA with two gateways and the aggregate scaler (``examples/two-gateways``).

How the test is built: the operator (a real process) renders and applies everything for
``examples/two-gateways`` (in a namespace of this module's own, no model cache, no client
authentication, its scale-down stabilization shortened to 10 s); nothing it applied is edited. The
aggregate scaler and the two gateways would be Pods; here they are local processes with the ConfigMaps
the operator rendered and the token of the Secret it created, only their addresses mapped:

- KEDA resolves the rendered ``scalerAddress`` host (``<name>-scaler.<ns>.svc``) to the scaler's
  loopback address (the hosts file of ``tests/cluster/gateways.py``); the scaler listens there on the
  rendered ports (gRPC 9090, reports 9091);
- each gateway listens on a loopback address of its own (port 8080), reports to the scaler's address
  (``report.url``) and forwards to the model server's address (the rendered backend port 8000);
- the model server (``noctaya.dev.fake_engine``) is started when KWOK reports the backend Pod Ready.

Aspects: KEDA accepts the ScaledObject and its HPA carries our external metric only; a cold request at
the second gateway reaches KEDA through the aggregate scaler (both gateways members) and scales the
backend 0 -> 1; the answer comes back and the LLMService turns Ready; idle, it goes back to 0 and
reports ScaledToZero.
"""

from __future__ import annotations

import base64
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

from tests.cluster import gateways, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]

GROUP = "/apis/serving.noctaya.io/v1alpha1"


class Aggregate:
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        self.cluster = cluster
        self.kube = cluster.kube
        self.namespace = namespace
        self.directory = directory
        doc = yaml.safe_load((ROOT / "examples" / "two-gateways" / "llmservice.yaml").read_text())
        doc["metadata"]["namespace"] = namespace
        doc["spec"]["cache"] = {"strategy": "None"}
        doc["spec"]["endpoint"].pop("authentication", None)
        doc["spec"]["scaling"]["scaleDownStabilization"] = "10s"
        self.doc = doc
        self.name = doc["metadata"]["name"]
        self.path = f"{GROUP}/namespaces/{namespace}/llmservices/{self.name}"
        self.scaler_address = gateways.loopback()
        self.gateway_addresses = [gateways.loopback(), gateways.loopback()]
        self.engine_address = gateways.loopback()
        self.processes: list[gateways.Process] = []
        self.engine: gateways.Process | None = None

    def config(self, name: str) -> dict[str, Any]:
        path = f"/api/v1/namespaces/{self.namespace}/configmaps/{name}"
        wait(f"the ConfigMap {path}", lambda: self.kube.exists(path), bool, timeout=180)
        return dict(yaml.safe_load(self.kube.get(path)["data"]["config.yaml"]))

    def token_file(self) -> pathlib.Path:
        path = f"/api/v1/namespaces/{self.namespace}/secrets/{self.name}-scaler-token"
        wait(f"the Secret {path}", lambda: self.kube.exists(path), bool, timeout=180)
        token = base64.b64decode(self.kube.get(path)["data"]["token"])
        out = self.directory / "token"
        out.write_bytes(token)
        out.chmod(0o600)
        return out

    def start(self) -> None:
        token = self.token_file()
        scaler = self.config(f"{self.name}-scaler")
        for key in ("grpcListen", "reportListen"):
            scaler[key] = f"{self.scaler_address}:{scaler[key].rpartition(':')[2]}"
        scaler["tokenFile"] = str(token)
        scaler_path = self.directory / "scaler.yaml"
        scaler_path.write_text(yaml.safe_dump(scaler), encoding="utf-8")
        self.processes.append(
            gateways.Process(
                [sys.executable, "-m", "noctaya", "scaler", "--config", str(scaler_path)],
                log=self.directory / "scaler.log",
            )
        )
        gateway = self.config(f"{self.name}-gateway")
        backend = urllib.parse.urlsplit(gateway["backendUrl"])
        report = urllib.parse.urlsplit(gateway["report"]["url"])
        for i, address in enumerate(self.gateway_addresses):
            config = json.loads(json.dumps(gateway))
            config["listen"] = f"{address}:{gateway['listen'].rpartition(':')[2]}"
            config["backendUrl"] = f"{backend.scheme}://{self.engine_address}:{backend.port}"
            config["report"]["url"] = f"{report.scheme}://{self.scaler_address}:{report.port}"
            config["report"]["tokenFile"] = str(token)
            path = self.directory / f"gateway-{i}.yaml"
            path.write_text(yaml.safe_dump(config), encoding="utf-8")
            self.processes.append(
                gateways.Process(
                    [sys.executable, "-m", "noctaya", "gateway", "--config", str(path)],
                    log=self.directory / f"gateway-{i}.log",
                )
            )

    def status(self) -> dict[str, Any]:
        return dict(self.kube.get(self.path).get("status") or {})

    def backend(self) -> dict[str, Any]:
        return dict(
            self.kube.get(f"/apis/apps/v1/namespaces/{self.namespace}/deployments/{self.name}-backend")
        )

    def backend_pods(self) -> list[dict[str, Any]]:
        return list(
            self.kube.get(
                f"/api/v1/namespaces/{self.namespace}/pods",
                labelSelector=f"serving.noctaya.io/llmservice={self.name},app.kubernetes.io/component=backend",
            )["items"]
        )


@pytest.fixture(scope="module")
def aggregate(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aggregate]:
    kube = cluster.kube
    namespace = cluster.namespace("agg")
    cluster.apply_runtime("vllm-nvidia")
    directory = tmp_path_factory.mktemp("aggregate")
    agg = Aggregate(cluster=cluster, namespace=namespace, directory=directory)
    with operators.replicas(
        cluster, identities=["g"], namespace=namespace, directory=directory, timings=operators.Timings()
    ) as replicas:
        kube.apply(agg.path, agg.doc, manager="platform-team")
        gateways.map_scaler_host(cluster, namespace=namespace, name=agg.name, address=agg.scaler_address)
        try:
            agg.start()
            yield agg
        finally:
            for proc in [*agg.processes, *([agg.engine] if agg.engine else [])]:
                proc.stop()
            print("---- operator (last lines)\n" + "\n".join(replicas["g"].text().splitlines()[-30:]))
            for proc in agg.processes:
                print(f"---- {proc.log.name} (last lines)\n" + "\n".join(proc.text().splitlines()[-20:]))
            kube.delete(agg.path)
            kube.delete(f"/api/v1/namespaces/{namespace}")


def _ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (pod.get("status") or {}).get("conditions", [])
    )


def test_the_aggregate_scaler_scales_the_backend_from_zero_and_back(aggregate: Aggregate) -> None:
    kube = aggregate.kube
    hpas = f"/apis/autoscaling/v2/namespaces/{aggregate.namespace}/horizontalpodautoscalers"
    hpa = wait(
        "KEDA's HPA with the external metric",
        lambda: kube.get(hpas)["items"],
        lambda items: len(items) == 1 and bool(items[0]["spec"].get("metrics")),
        timeout=240,
    )[0]
    assert [m["type"] for m in hpa["spec"]["metrics"]] == ["External"], hpa["spec"]["metrics"]
    wait(
        "the backend at 0", lambda: aggregate.backend()["spec"].get("replicas"), lambda r: r == 0, timeout=180
    )
    body = json.dumps(
        {"model": aggregate.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    ).encode()
    request = urllib.request.Request(
        f"http://{aggregate.gateway_addresses[1]}:8080/v1/chat/completions",
        data=body,
        method="POST",
        headers={"Content-Type": "application/json"},
    )

    def send() -> tuple[int, dict[str, Any]]:
        with urllib.request.urlopen(request, timeout=300) as resp:
            return resp.status, json.loads(resp.read())

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        answer = pool.submit(send)
        wait(
            "KEDA to scale the backend 0 -> 1 on the aggregate scaler's push",
            lambda: aggregate.backend()["spec"].get("replicas"),
            lambda r: r == 1,
            timeout=120,
        )
        pod = wait(
            "KWOK to make the backend Pod Ready",
            aggregate.backend_pods,
            lambda p: len(p) == 1 and _ready(p[0]),
            timeout=120,
        )[0]
        port = pod["spec"]["containers"][0]["ports"][0]["containerPort"]
        aggregate.engine = gateways.Process(
            [
                sys.executable, "-m", "noctaya.dev.fake_engine", "--host", aggregate.engine_address,
                "--port", str(port), "--model", aggregate.name, "--ready-delay", "0s", "--tokens", "4",
            ],
            log=aggregate.directory / "engine.log",
        )  # fmt: skip
        status, reply = answer.result(timeout=300)
    assert status == 200 and reply["choices"][0]["message"]["content"], reply
    wait(
        "the LLMService to turn Ready",
        aggregate.status,
        lambda s: s.get("phase") == "Ready" and s.get("lastActivation", {}).get("readyAt"),
        timeout=120,
    )
    wait(
        "KEDA to scale back to 0",
        lambda: aggregate.backend()["spec"].get("replicas"),
        lambda r: r == 0,
        timeout=180,
    )
    wait("the backend Pod to go", aggregate.backend_pods, lambda pods: pods == [], timeout=120)
    aggregate.engine.stop()
    wait("ScaledToZero", aggregate.status, lambda s: s.get("phase") == "ScaledToZero", timeout=120)
