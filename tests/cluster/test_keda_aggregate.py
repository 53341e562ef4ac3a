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
import json
import pathlib
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.cluster import gateways, llmservice
from tests.cluster.conftest import Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]


class Aggregate(llmservice.Service):
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        doc = llmservice.example("two-gateways", namespace=namespace)
        doc["spec"]["cache"] = {"strategy": "None"}
        doc["spec"]["endpoint"].pop("authentication", None)
        doc["spec"]["scaling"]["scaleDownStabilization"] = "10s"
        super().__init__(cluster=cluster, doc=doc, directory=directory)
        self.scaler_address = gateways.loopback()
        self.gateway_addresses = [gateways.loopback(), gateways.loopback()]
        self.engine_address = gateways.loopback()
        self.report_url = ""

    def members(self) -> int:
        """How many gateways the aggregate scaler sums (its ``/healthz``); 0 while it does not answer."""
        try:
            with urllib.request.urlopen(f"{self.report_url}/healthz", timeout=10) as resp:
                return int(json.loads(resp.read())["members"])
        except OSError:
            return 0

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

    def start_all(self) -> None:
        token = self.token_file()
        scaler = self.config(f"{self.name}-scaler")
        for key in ("grpcListen", "reportListen"):
            scaler[key] = f"{self.scaler_address}:{scaler[key].rpartition(':')[2]}"
        scaler["tokenFile"] = str(token)
        self.report_url = f"http://{scaler['reportListen']}"
        scaler_path = self.directory / "scaler.yaml"
        scaler_path.write_text(yaml.safe_dump(scaler), encoding="utf-8")
        self.start(
            [sys.executable, "-m", "noctaya", "scaler", "--config", str(scaler_path)], log="scaler.log"
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
            self.start(
                [sys.executable, "-m", "noctaya", "gateway", "--config", str(path)], log=f"gateway-{i}.log"
            )


@pytest.fixture(scope="module")
def aggregate(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Aggregate]:
    namespace = cluster.namespace("agg")
    cluster.apply_runtime("vllm-nvidia")
    agg = Aggregate(cluster=cluster, namespace=namespace, directory=tmp_path_factory.mktemp("aggregate"))
    with llmservice.deployed(cluster, service=agg, identity="g", scaler_address=agg.scaler_address):
        agg.start_all()
        yield agg


def test_the_aggregate_scaler_scales_the_backend_from_zero_and_back(aggregate: Aggregate) -> None:
    hpa = wait(
        "KEDA's HPA with the external metric",
        aggregate.hpas,
        lambda items: len(items) == 1 and bool(items[0]["spec"].get("metrics")),
        timeout=240,
    )[0]
    assert [m["type"] for m in hpa["spec"]["metrics"]] == ["External"], hpa["spec"]["metrics"]
    wait("both gateways members of the aggregate scaler", aggregate.members, lambda n: n == 2, timeout=120)
    # the request goes to the second gateway: its demand reaches KEDA through the aggregate scaler
    aggregate.serve_from_zero(
        gateway=f"http://{aggregate.gateway_addresses[1]}:8080", engine_address=aggregate.engine_address
    )
    aggregate.back_to_zero()
