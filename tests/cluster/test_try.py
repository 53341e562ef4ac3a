"""``scripts/cluster.sh try``: the README's "try it on the local cluster", run as a user runs it.

The command runs as a subprocess against the tier's cluster, limited to a namespace of this module;
``examples/llamacpp-cpu`` (its scale-down stabilization shortened to 10 s, its namespace this
module's) is applied with ``kubectl apply -f``. Nothing else is started by the test: the operator, the
gateway and the model server are the command's.

Aspects, in order:
- the command says where the service's gateway listens and that KEDA reaches its ExternalScaler;
  the service scales to zero;
- an OpenAI request (the openai SDK, which retries the example's reject-mode 503s after their
  ``Retry-After``) makes real KEDA scale the backend 0 -> 1; the command starts a model server for the
  Ready Pod and the request is answered; the LLMService turns Ready with ``status.lastActivation``;
- idle, KEDA scales back to 0, the command stops the Pod's model server, the service reports
  ScaledToZero;
- SIGINT stops every child (exit 0, within a bound), and the hosts file's line for the service is
  taken back out.
"""

from __future__ import annotations

import os
import pathlib
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator

import openai
import pytest
import yaml

from noctaya.dev import pods
from tests.cluster import llmservice
from tests.cluster.conftest import ROOT, SCRIPT, Cluster
from tests.cluster.kube import wait

pytestmark = [pytest.mark.timeout(600), pytest.mark.xdist_group("cluster")]


class Try:
    def __init__(self, *, cluster: Cluster, namespace: str, directory: pathlib.Path) -> None:
        self.cluster = cluster
        self.namespace = namespace
        self.log = directory / "try.log"
        out = self.log.open("wb")
        env = {**os.environ, "NOCTAYA_CLUSTER_DIR": str(cluster.state), "NOCTAYA_PYTHON": sys.executable}
        self.process = subprocess.Popen(
            ["bash", str(SCRIPT), "try", "--namespace", namespace, "--run-dir", str(directory / "run")],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
        out.close()

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def said(self, pattern: str) -> re.Match[str] | None:
        assert self.process.poll() is None, f"the command exited ({self.process.returncode}):\n{self.text()}"
        return re.search(pattern, self.text())

    def interrupt(self) -> int:
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
            raise


@pytest.fixture(scope="module")
def tried(
    cluster: Cluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Try, llmservice.Service]]:
    namespace = cluster.namespace("try")
    directory = tmp_path_factory.mktemp("try")
    command = Try(cluster=cluster, namespace=namespace, directory=directory)
    doc = llmservice.example("llamacpp-cpu", namespace=namespace)
    doc["spec"]["scaling"]["scaleDownStabilization"] = "10s"
    manifest = directory / "llmservice.yaml"
    manifest.write_text(yaml.safe_dump(doc), encoding="utf-8")
    cluster.apply_runtime("llamacpp-cpu")
    cluster.kubectl("apply", "-f", str(manifest))
    service = llmservice.Service(cluster=cluster, doc=doc, directory=directory)
    try:
        yield command, service
    finally:
        if command.process.poll() is None:
            command.process.kill()
            command.process.wait(timeout=30)
        print("---- scripts/cluster.sh try (last lines)\n" + "\n".join(command.text().splitlines()[-40:]))
        cluster.kube.delete(service.path)
        cluster.kube.delete(f"/api/v1/namespaces/{namespace}")


def test_the_command_runs_the_gateway_and_keda_reaches_its_scaler(
    tried: tuple[Try, llmservice.Service],
) -> None:
    command, service = tried
    name = f"{service.namespace}/{service.name}"
    gateway = wait(
        "the command to start the gateway",
        lambda: command.said(rf"{re.escape(name)}: gateway at (http://[0-9.]+:8080)/v1"),
        bool,
        timeout=180,
    )
    assert gateway is not None
    wait(
        "the command to map the scaler host for KEDA",
        lambda: command.said(rf"{re.escape(name)}: KEDA reaches its ExternalScaler"),
        bool,
        timeout=180,
    )
    wait("ScaledToZero", service.status, lambda s: s.get("phase") == "ScaledToZero", timeout=180)


def test_an_openai_request_scales_from_zero_through_keda_and_back(
    tried: tuple[Try, llmservice.Service],
) -> None:
    command, service = tried
    found = command.said(r"gateway at (http://[0-9.]+:8080/v1)")
    assert found is not None
    wait("the backend at 0", service.backend_replicas, lambda r: r == 0, timeout=120)
    client = openai.OpenAI(base_url=found.group(1), api_key="unused", max_retries=30, timeout=120)
    reply = client.chat.completions.create(
        model=service.name, messages=[{"role": "user", "content": "hi"}], max_tokens=4
    )
    assert reply.choices[0].message.content
    assert service.backend_replicas() == 1
    owners = [
        m["manager"]
        for m in service.backend()["metadata"]["managedFields"]
        if "f:replicas" in m.get("fieldsV1", {}).get("f:spec", {})
    ]
    assert "noctaya-operator" not in owners, owners
    assert command.said(r"Pod \S+ Ready: its model server on 127\.0\.0\.1:\d+")
    wait(
        "the LLMService to turn Ready with lastActivation",
        service.status,
        lambda s: s.get("phase") == "Ready" and s.get("lastActivation", {}).get("readyAt"),
        timeout=120,
    )
    wait("KEDA to scale back to 0", service.backend_replicas, lambda r: r == 0, timeout=180)
    wait(
        "the command to stop the model server",
        lambda: command.said(r"gone: its model server stopped"),
        bool,
        timeout=60,
    )
    wait("ScaledToZero", service.status, lambda s: s.get("phase") == "ScaledToZero", timeout=120)


def test_sigint_stops_every_child_and_unmaps_the_scaler_host(tried: tuple[Try, llmservice.Service]) -> None:
    command, service = tried
    host = f"{service.name}-scaler.{service.namespace}.svc"
    assert f"{host}  {pods.HOSTS_MARK}" in command.cluster.keda_hosts.read_text(encoding="utf-8")
    operator = command.said(r"operator running against \S+ \(pid (\d+),")
    gateway = command.said(r"gateway at (http://[0-9.]+:8080)/v1")
    assert operator is not None and gateway is not None
    assert command.interrupt() == 0, command.text()
    assert command.text().rstrip().endswith("cluster: stopped"), command.text()
    assert host not in command.cluster.keda_hosts.read_text(encoding="utf-8")
    with pytest.raises(ProcessLookupError):
        os.kill(int(operator.group(1)), 0)
    with pytest.raises(urllib.error.URLError) as refused:
        urllib.request.urlopen(f"{gateway.group(1)}/healthz", timeout=10)
    assert isinstance(refused.value.reason, ConnectionRefusedError), refused.value
