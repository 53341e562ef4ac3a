"""One LLMService under test in the cluster tier, and the local processes that stand in for its Pods.

:func:`deployed` runs one operator replica for the service's namespace, applies the LLMService as a
platform team would, maps the rendered scaler host to a loopback address for KEDA's operator, and at
the end stops every process the scenario started (printing the last lines of each log) and deletes
the LLMService and its namespace. :class:`Service` reads what the cluster made of it (status, backend
Deployment and Pods, KEDA's HPA) and drives it: a chat request at a gateway, the model server a Ready
backend Pod would run, the cold start from zero and the way back to it.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import json
import pathlib
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import yaml

from tests.cluster import gateways, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait

GROUP = "/apis/serving.noctaya.io/v1alpha1"


def example(name: str, *, namespace: str) -> dict[str, Any]:
    """``examples/<name>/llmservice.yaml``, moved to ``namespace``."""
    doc: dict[str, Any] = yaml.safe_load((ROOT / "examples" / name / "llmservice.yaml").read_text())
    doc["metadata"]["namespace"] = namespace
    return doc


def ready(obj: dict[str, Any]) -> bool:
    """The object (a Pod) reports ``Ready=True``."""
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in (obj.get("status") or {}).get("conditions", [])
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class ColdStart:
    """What a cold request saw: the backend Deployment KEDA scaled to 1 and the LLMService turned Ready."""

    scaled: dict[str, Any]
    status: dict[str, Any]


class Service:
    def __init__(self, *, cluster: Cluster, doc: dict[str, Any], directory: pathlib.Path) -> None:
        self.cluster = cluster
        self.kube = cluster.kube
        self.doc = doc
        self.name: str = doc["metadata"]["name"]
        self.namespace: str = doc["metadata"]["namespace"]
        self.path = f"{GROUP}/namespaces/{self.namespace}/llmservices/{self.name}"
        self.directory = directory
        #: every process started for the scenario, stopped (last first) when it ends
        self.processes: list[gateways.Process] = []
        self.engine: gateways.Process | None = None

    def status(self) -> dict[str, Any]:
        return dict(self.kube.get(self.path).get("status") or {})

    @property
    def deployment(self) -> str:
        """The backend Deployment's path."""
        return f"/apis/apps/v1/namespaces/{self.namespace}/deployments/{self.name}-backend"

    def backend(self) -> dict[str, Any]:
        return dict(self.kube.get(self.deployment))

    def backend_replicas(self) -> int | None:
        replicas = self.backend()["spec"].get("replicas")
        return None if replicas is None else int(replicas)

    def backend_pods(self) -> list[dict[str, Any]]:
        return list(
            self.kube.get(
                f"/api/v1/namespaces/{self.namespace}/pods",
                labelSelector=f"serving.noctaya.io/llmservice={self.name},app.kubernetes.io/component=backend",
            )["items"]
        )

    def hpas(self) -> list[dict[str, Any]]:
        return list(
            self.kube.get(f"/apis/autoscaling/v2/namespaces/{self.namespace}/horizontalpodautoscalers")[
                "items"
            ]
        )

    def hpa(self) -> dict[str, Any]:
        """The HPA KEDA built for this service, or an empty mapping while there is none."""
        items = self.hpas()
        return dict(items[0]) if items else {}

    def start(self, args: list[str], *, log: str) -> gateways.Process:
        """Run ``args`` for the scenario (stopped at its end), logging to ``log`` in its directory."""
        process = gateways.Process(args, log=self.directory / log)
        self.processes.append(process)
        return process

    def start_gateway(self, *, address: str, engine_address: str) -> gateways.Process:
        """The service's gateway (the rendered ConfigMap) on ``address``, forwarding to ``engine_address``."""
        process = gateways.start(
            self.cluster,
            namespace=self.namespace,
            name=self.name,
            directory=self.directory,
            address=address,
            engine_address=engine_address,
        )
        self.processes.append(process)
        return process

    def start_engine(
        self,
        *,
        address: str,
        port: int,
        tokens: int = 4,
        token_delay: str | None = None,
        extra: tuple[str, ...] = (),
    ) -> gateways.Process:
        """The model server a Ready backend Pod runs (``noctaya.dev.fake_engine``) on ``address:port``,
        serving the service's name, as the kubelet would start the Pod's container."""
        args = [
            sys.executable, "-m", "noctaya.dev.fake_engine", "--host", address, "--port", str(port),
            "--model", self.name, "--ready-delay", "0s", "--tokens", str(tokens),
        ]  # fmt: skip
        if token_delay is not None:
            args += ["--token-delay", token_delay]
        args += extra
        self.engine = self.start(args, log="engine.log")
        return self.engine

    def chat(self, gateway: str, *, max_tokens: int = 4, timeout: float = 300) -> tuple[int, dict[str, Any]]:
        """One chat completion through the gateway at ``gateway`` (``http://host:port``): status, body."""
        body = {"model": self.name, "messages": [{"role": "user", "content": "hi"}], "max_tokens": max_tokens}
        request = urllib.request.Request(
            f"{gateway}/v1/chat/completions",
            data=json.dumps(body).encode(),
            method="POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())

    def serve_from_zero(self, *, gateway: str, engine_address: str) -> ColdStart:
        """A request at the gateway while the backend is at 0: KEDA scales it 0 -> 1, KWOK makes the Pod
        Ready, its model server starts on the Pod's port, the request is answered, and the LLMService
        turns Ready with ``status.lastActivation``."""
        wait("the backend at 0", self.backend_replicas, lambda r: r == 0, timeout=180)
        wait("no backend Pod", self.backend_pods, lambda pods: pods == [], timeout=120)
        answering(gateway)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            answer = pool.submit(self.chat, gateway)
            scaled = wait(
                "KEDA to scale the backend 0 -> 1",
                self.backend,
                lambda d: d["spec"].get("replicas") == 1,
                timeout=120,
            )
            pod = wait(
                "KWOK to make the backend Pod Ready",
                self.backend_pods,
                lambda p: len(p) == 1 and ready(p[0]),
                timeout=120,
            )[0]
            self.start_engine(
                address=engine_address, port=pod["spec"]["containers"][0]["ports"][0]["containerPort"]
            )
            status, reply = answer.result(timeout=300)
        assert status == 200 and reply["choices"][0]["message"]["content"], reply
        turned = wait(
            "the LLMService to turn Ready with lastActivation",
            self.status,
            lambda s: s.get("phase") == "Ready" and s.get("lastActivation", {}).get("readyAt"),
            timeout=120,
        )
        return ColdStart(scaled=scaled, status=turned)

    def back_to_zero(self) -> None:
        """Idle after the cooldown (the scale-down stabilization) and KEDA's next poll, KEDA scales the
        backend to 0; once its Pod is gone its model server stops, and the LLMService reports
        ScaledToZero."""
        wait("KEDA to scale back to 0", self.backend_replicas, lambda r: r == 0, timeout=180)
        wait("the backend Pod to go", self.backend_pods, lambda pods: pods == [], timeout=120)
        assert self.engine is not None, "no model server was started"
        self.engine.stop()
        wait("ScaledToZero", self.status, lambda s: s.get("phase") == "ScaledToZero", timeout=120)


def answering(gateway: str, *, within: float = 60.0) -> None:
    """Wait until the gateway process at ``gateway`` answers its ``/healthz`` with 200: the process has
    started listening (a Pod's readiness, which KWOK reports without anything running)."""
    deadline = time.monotonic() + within
    while True:
        try:
            with urllib.request.urlopen(f"{gateway}/healthz", timeout=10) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        assert time.monotonic() < deadline, f"the gateway at {gateway} did not answer within {within} s"
        time.sleep(0.1)


@contextlib.contextmanager
def deployed(cluster: Cluster, *, service: Service, identity: str, scaler_address: str) -> Iterator[Service]:
    """``service`` applied under one operator replica (``identity``), its rendered scaler host resolved
    to ``scaler_address`` for KEDA; at the end its processes stop, the last lines of every log are
    printed, and the LLMService and its namespace are deleted."""
    with operators.replicas(
        cluster,
        identities=[identity],
        namespace=service.namespace,
        directory=service.directory,
        timings=operators.Timings(),
    ) as replicas:
        cluster.kube.apply(service.path, service.doc, manager="platform-team")
        gateways.map_scaler_host(
            cluster, namespace=service.namespace, name=service.name, address=scaler_address
        )
        try:
            yield service
        finally:
            for process in reversed(service.processes):
                process.stop()
            print("---- operator (last lines)\n" + "\n".join(replicas[identity].text().splitlines()[-40:]))
            for process in service.processes:
                tail = "\n".join(process.text().splitlines()[-30:])
                print(f"---- {process.log.name} (last lines)\n{tail}")
            cluster.kube.delete(service.path)
            cluster.kube.delete(f"/api/v1/namespaces/{service.namespace}")
