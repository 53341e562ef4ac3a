"""Real ``noctaya gateway`` processes standing in for the gateway Pods KWOK only simulates.

KWOK reports a gateway Pod Running and Ready, but nothing runs in it, so KEDA would find no
ExternalScaler at the rendered ``scalerAddress`` (``<name>-scaler.<ns>.svc:9090``) and, as KEDA 2.20
does, create no HPA for the ScaledObject. :func:`start` runs the gateway the Pod would run, with the
ConfigMap the operator rendered moved to loopback addresses as ``scripts/cluster.sh try`` moves it
(``noctaya.dev.pods.gateway_config``), and :func:`map_scaler_host` maps the rendered scaler host to
that address in the hosts file KEDA's operator resolves names with (``noctaya.dev.pods.HostsFile``).
Nothing the operator applied is edited.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
from typing import Any

import yaml

from noctaya.dev import pods
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait


def loopback() -> str:
    """A random address of 127.0.0.0/8 (every one is local): a session's servers share no port."""
    return pods.loopback()


class Process:
    def __init__(self, args: list[str], *, log: pathlib.Path, env: dict[str, str] | None = None) -> None:
        """``args`` run with the environment minus ``NOCTAYA_*`` variables, plus ``env``."""
        self.log = log
        out = log.open("wb")
        env = {**{k: v for k, v in os.environ.items() if not k.startswith("NOCTAYA_")}, **(env or {})}
        self.process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        out.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def rendered_config(cluster: Cluster, *, namespace: str, name: str) -> dict[str, Any]:
    path = f"/api/v1/namespaces/{namespace}/configmaps/{name}-gateway"
    wait(f"the ConfigMap {path}", lambda: cluster.kube.exists(path), bool, timeout=180)
    return dict(yaml.safe_load(cluster.kube.get(path)["data"]["config.yaml"]))


def map_scaler_host(cluster: Cluster, *, namespace: str, name: str, address: str) -> None:
    """Resolve the rendered ScaledObject's scaler host to ``address`` for KEDA's operator."""
    path = f"/apis/keda.sh/v1alpha1/namespaces/{namespace}/scaledobjects/{name}"
    wait(f"the ScaledObject {path}", lambda: cluster.kube.exists(path), bool, timeout=180)
    host = pods.scaler_host(cluster.kube.get(path))
    pods.HostsFile(cluster.keda_hosts).map(host=host, address=address)


def start(
    cluster: Cluster,
    *,
    namespace: str,
    name: str,
    directory: pathlib.Path,
    address: str,
    engine_address: str,
) -> Process:
    """The gateway of LLMService ``namespace/name`` on ``address``, its backend on ``engine_address``."""
    rendered = rendered_config(cluster, namespace=namespace, name=name)
    config = pods.gateway_config(rendered, address=address, engine_address=engine_address)
    path = directory / f"gateway-{namespace}-{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return Process(
        pods.gateway_argv(path, log_level="DEBUG"), log=directory / f"gateway-{namespace}-{name}.log"
    )
