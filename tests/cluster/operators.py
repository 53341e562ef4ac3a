"""``noctaya operator`` replicas as real processes against the tier's API server.

Each replica runs under a ServiceAccount of its own (``noctaya-operator-<identity>``), bound to every
role ``dist/install.yaml`` binds its ServiceAccount to (so the operator's RBAC is what the real
authorizer checks) and authenticated with a token from the TokenRequest API. One identity per account
lets the API server's audit log tell the replicas' writes apart.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import yaml

from noctaya.api import access
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import APPLY, Kube

SYSTEM = "noctaya-system"
LEASE = f"/apis/coordination.k8s.io/v1/namespaces/{SYSTEM}/leases/noctaya-operator"


def install_rbac(kube: Kube) -> None:
    """The Namespace, ServiceAccount, roles and bindings of dist/install.yaml (not its Deployment)."""
    for doc in yaml.safe_load_all((ROOT / "dist" / "install.yaml").read_text(encoding="utf-8")):
        if not doc or doc["kind"] in ("Deployment", "PodDisruptionBudget"):
            continue
        kube.request("PATCH", _path(doc), body=doc, content_type=APPLY, params={"fieldManager": "install"})


def _path(doc: dict[str, Any]) -> str:
    plural = {
        "Namespace": "namespaces",
        "ServiceAccount": "serviceaccounts",
        "ClusterRole": "clusterroles",
        "ClusterRoleBinding": "clusterrolebindings",
        "Role": "roles",
        "RoleBinding": "rolebindings",
    }[doc["kind"]]
    group, _, version = doc["apiVersion"].rpartition("/")
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    ns = doc["metadata"].get("namespace")
    scope = f"/namespaces/{ns}" if ns else ""
    return f"{prefix}{scope}/{plural}/{doc['metadata']['name']}"


def account_kubeconfig(cluster: Cluster, *, identity: str, directory: pathlib.Path) -> pathlib.Path:
    """A kubeconfig authenticating as the ServiceAccount of ``identity`` (created here, and bound to
    every role ``dist/install.yaml`` binds its ServiceAccount to)."""
    kube = cluster.kube
    account = f"noctaya-operator-{identity}"
    docs: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account, "namespace": SYSTEM}},
    ]
    for doc in yaml.safe_load_all((ROOT / "dist" / "install.yaml").read_text(encoding="utf-8")):
        if doc and doc["kind"] in ("ClusterRoleBinding", "RoleBinding"):
            metadata = {"name": f"{doc['metadata']['name']}-{identity}"}
            if "namespace" in doc["metadata"]:
                metadata["namespace"] = doc["metadata"]["namespace"]
            docs.append(
                {
                    "apiVersion": doc["apiVersion"],
                    "kind": doc["kind"],
                    "metadata": metadata,
                    "roleRef": doc["roleRef"],
                    "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": SYSTEM}],
                }
            )
    assert len(docs) > 2, "dist/install.yaml binds its ServiceAccount to no role"
    # the replicas watch given namespaces (--namespace), so kopf scans Namespaces: the grant an install
    # with watch namespaces renders (dist/install.yaml is the every-namespace one)
    scan = f"noctaya-operator-scan-{identity}"
    docs += [
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": scan},
            "rules": [
                {"apiGroups": [g.group], "resources": [g.resource], "verbs": list(g.verbs)}
                for g in access.grants(access.Scope.SCAN)
            ],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": scan},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": scan},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": SYSTEM}],
        },
    ]
    for doc in docs:
        kube.request("PATCH", _path(doc), body=doc, content_type=APPLY, params={"fieldManager": "install"})
    return token_kubeconfig(cluster, namespace=SYSTEM, account=account, directory=directory)


def token_kubeconfig(
    cluster: Cluster, *, namespace: str, account: str, directory: pathlib.Path
) -> pathlib.Path:
    """A kubeconfig authenticating as ServiceAccount ``namespace/account`` (a TokenRequest token)."""
    token = cluster.kube.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{account}/token",
        body={
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": 7200},
        },
    )["status"]["token"]
    admin = yaml.safe_load(cluster.kubeconfig.read_text(encoding="utf-8"))
    context = next(c["context"] for c in admin["contexts"] if c["name"] == admin["current-context"])
    server = next(c["cluster"] for c in admin["clusters"] if c["name"] == context["cluster"])
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "tier", "cluster": server}],
        "users": [{"name": account, "user": {"token": token}}],
        "contexts": [{"name": "tier", "context": {"cluster": "tier", "user": account}}],
        "current-context": "tier",
    }
    path = directory / f"{namespace}-{account}.kubeconfig"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def username(identity: str) -> str:
    return f"system:serviceaccount:{SYSTEM}:noctaya-operator-{identity}"


@dataclasses.dataclass
class Replica:
    identity: str
    process: subprocess.Popen[bytes]
    log: pathlib.Path

    def pause(self) -> None:
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Timings:
    lease_duration: int = 8
    renew_deadline: int = 5
    retry_period: int = 1
    resync_period: int = 5


def start(
    cluster: Cluster, *, identity: str, namespace: str, directory: pathlib.Path, timings: Timings
) -> Replica:
    kubeconfig = account_kubeconfig(cluster, identity=identity, directory=directory)
    log = directory / f"operator-{identity}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOCTAYA_")}
    env["HOME"] = str(directory)
    out = log.open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "noctaya",
            "operator",
            "--kubeconfig",
            str(kubeconfig),
            "--namespace",
            namespace,
            "--identity",
            identity,
            "--lease-namespace",
            SYSTEM,
            "--lease-duration",
            str(timings.lease_duration),
            "--lease-renew-deadline",
            str(timings.renew_deadline),
            "--lease-retry-period",
            str(timings.retry_period),
            "--resync-period",
            str(timings.resync_period),
            "--keda-recheck",
            "2",
            "--health-listen",
            "",
            "--log-level",
            "INFO",
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=ROOT,
    )
    out.close()
    return Replica(identity=identity, process=process, log=log)


@contextlib.contextmanager
def replicas(
    cluster: Cluster, *, identities: list[str], namespace: str, directory: pathlib.Path, timings: Timings
) -> Iterator[dict[str, Replica]]:
    install_rbac(cluster.kube)
    started: dict[str, Replica] = {}
    try:
        for identity in identities:
            started[identity] = start(
                cluster, identity=identity, namespace=namespace, directory=directory, timings=timings
            )
        yield started
    finally:
        for replica in started.values():
            replica.stop()


def audit_events(cluster: Cluster) -> list[dict[str, Any]]:
    path = cluster.state / "kwok" / "clusters" / cluster.name / "logs" / "audit.log"
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(ValueError):
            events.append(json.loads(line))
    return events
