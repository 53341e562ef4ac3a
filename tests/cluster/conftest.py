"""The cluster tier: a real control plane, brought up once per session by ``scripts/cluster.sh up``.

etcd, kube-apiserver, kube-controller-manager (garbage collector, Deployment, ReplicaSet, Job and
disruption controllers, the HPA controller), kube-scheduler, KWOK (simulated nodes and Pod lifecycles),
KEDA's operator and KEDA's metrics API server (behind the aggregator as
``v1beta1.external.metrics.k8s.io``), at the versions of ``scripts/cluster.versions``. Each session
gets a cluster name and state directory of its own (``noctaya-test-<random>``), so two runs on one
machine never share a cluster or a port (kwokctl and every component pick their own; the metrics API
server, whose port its Service must name, gets one held for it until it listens, and another if it
is taken anyway). A missing
toolchain or a failed build fails the tier: nothing here skips. Every test module of the tier is
marked ``xdist_group("cluster")``: under ``--dist loadgroup`` one worker runs the whole tier, so one
control plane is brought up for it and brought down (``scripts/cluster.sh down``) when that worker's
session ends.

``NOCTAYA_TEST_CLUSTER_DIR`` (with ``NOCTAYA_CLUSTER_NAME``) runs the tier against a cluster brought up
by ``scripts/cluster.sh up`` with that state directory and name instead, and leaves it running.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import subprocess
import uuid
from collections.abc import Iterator

import pytest
import yaml

from tests.cluster.kube import Kube

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "cluster.sh"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Cluster:
    name: str
    state: pathlib.Path
    kubeconfig: pathlib.Path
    bin: pathlib.Path
    kube: Kube

    @property
    def keda_hosts(self) -> pathlib.Path:
        """The hosts file KEDA's operator resolves names with (bind-mounted over its /etc/hosts)."""
        return self.state / "keda" / "hosts"

    def namespace(self, prefix: str) -> str:
        """A new namespace of its own for one scenario module (``<prefix>-<6 hex>``)."""
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        self.kube.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
        return name

    def apply_runtime(self, example: str) -> None:
        """Apply ``examples/runtimes/<example>.yaml`` (cluster-scoped) as a platform team would."""
        runtime = yaml.safe_load((ROOT / "examples" / "runtimes" / f"{example}.yaml").read_text())
        self.kube.apply(
            f"/apis/serving.noctaya.io/v1alpha1/inferenceruntimes/{runtime['metadata']['name']}",
            runtime,
            manager="platform-team",
        )

    def kubectl(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / "kubectl"), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=120,
        )


def _script(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=5400, check=False
    )


@pytest.fixture(scope="session")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    reuse = os.environ.get("NOCTAYA_TEST_CLUSTER_DIR")
    if reuse:  # a cluster someone brought up with scripts/cluster.sh up (and will bring down)
        state = pathlib.Path(reuse)
        env = {**os.environ, "NOCTAYA_CLUSTER_DIR": reuse}
        bin_dir = pathlib.Path(_script("bin", env=env).stdout.strip())
        kube = Kube(kubeconfig=state / "kubeconfig")
        yield Cluster(
            name=os.environ["NOCTAYA_CLUSTER_NAME"],
            state=state,
            kubeconfig=state / "kubeconfig",
            bin=bin_dir,
            kube=kube,
        )
        kube.close()
        return
    name = f"noctaya-test-{uuid.uuid4().hex[:8]}"
    state = tmp_path_factory.mktemp("cluster")
    env = {**os.environ, "NOCTAYA_CLUSTER_NAME": name, "NOCTAYA_CLUSTER_DIR": str(state)}
    env["NOCTAYA_KUBE_AUDIT_POLICY"] = str(ROOT / "tests" / "cluster" / "audit-policy.yaml")
    env["NOCTAYA_KWOK_STAGES"] = str(ROOT / "tests" / "cluster" / "stages.yaml")
    up = _script("up", env=env)
    if up.returncode != 0:
        _script("down", env=env)
        pytest.fail(f"scripts/cluster.sh up failed ({up.returncode}):\n{up.stdout}\n{up.stderr[-6000:]}")
    bin_dir = pathlib.Path(_script("bin", env=env).stdout.strip())
    kube = Kube(kubeconfig=state / "kubeconfig")
    try:
        yield Cluster(name=name, state=state, kubeconfig=state / "kubeconfig", bin=bin_dir, kube=kube)
    finally:
        kube.close()
        down = _script("down", env=env)
        assert down.returncode == 0, f"scripts/cluster.sh down failed:\n{down.stderr[-4000:]}"


@pytest.fixture(scope="session")
def kube(cluster: Cluster) -> Kube:
    return cluster.kube
