"""Real ``noctaya gateway`` processes standing in for the gateway Pods KWOK only simulates.

KWOK reports a gateway Pod Running and Ready, but nothing runs in it, so KEDA would find no
ExternalScaler at the rendered ``scalerAddress`` (``<name>-scaler.<ns>.svc:9090``) and, as KEDA 2.20
does, create no HPA for the ScaledObject. :func:`start` runs the gateway the Pod would run, with the
ConfigMap the operator rendered, on a loopback address of its own (only ``listen``, ``scaler.listen``
and ``backendUrl`` move to loopback addresses, their ports kept), and maps the rendered scaler host to
that address in the hosts file KEDA's operator resolves names with. Nothing the operator applied is
edited.
"""

from __future__ import annotations

import os
import pathlib
import random
import signal
import subprocess
import sys
import urllib.parse
from typing import Any

import yaml

from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import wait


def loopback() -> str:
    """A random address of 127.0.0.0/8 (every one is local): a session's servers share no port."""
    rng = random.SystemRandom()
    return f"127.{rng.randint(1, 254)}.{rng.randint(1, 254)}.{rng.randint(2, 254)}"


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
    trigger = cluster.kube.get(path)["spec"]["triggers"][0]
    host = trigger["metadata"]["scalerAddress"].rpartition(":")[0]
    with cluster.keda_hosts.open("a", encoding="utf-8") as hosts:
        hosts.write(f"{address} {host}\n")


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
    config = rendered_config(cluster, namespace=namespace, name=name)
    backend = urllib.parse.urlsplit(config["backendUrl"])
    config["listen"] = f"{address}:{config['listen'].rpartition(':')[2]}"
    config["scaler"]["listen"] = f"{address}:{config['scaler']['listen'].rpartition(':')[2]}"
    config["backendUrl"] = f"{backend.scheme}://{engine_address}:{backend.port}"
    engine = (config.get("scaler") or {}).get("engine")
    if engine is not None:  # the headless Service's name answers the Ready Pods: here the one engine
        engine["host"] = engine_address
    path = directory / f"gateway-{namespace}-{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return Process(
        [sys.executable, "-m", "noctaya", "gateway", "--config", str(path), "--log-level", "DEBUG"],
        log=directory / f"gateway-{namespace}-{name}.log",
    )
