"""``helm install`` of ``charts/noctaya`` into the tier, and the chart's RBAC checked by the real authorizer.

Helm is the real one (``scripts/helm.sh`` builds it from its Go module; a missing Go fails the test).
The release goes into the namespace ``noctaya-helm``. KWOK reports the operator's Pods Ready without
running them, so the operator the chart describes also runs as a local process: the environment of the
chart's own Deployment (``POD_NAME`` and ``POD_NAMESPACE`` filled in as the kubelet would, the identity
the Pod's hostname would give, ``HOME`` a scratch directory, the health endpoint on a loopback address
of this session), authenticated as the chart's ServiceAccount ``noctaya-operator`` with a token from the
TokenRequest API. Every request of that account, reads and refused ones included, is in the API
server's audit log (``tests/cluster/audit-policy.yaml``).

Aspects, in order:
- the README's ``kubectl create namespace`` and ``helm install`` commands work as written (its names
  swapped for this session's); run without the namespace first, the install fails before anything is
  applied, with the chart's message naming the namespace and how to create it, and leaves no release
  and no object behind;
- ``helm install`` with the default values creates every object of the release, and the operator
  Deployment turns Available with all its replicas Ready. The CRDs were installed before (by
  ``scripts/cluster.sh up``, from ``dist/crds``, which the chart's ``crds/`` equals). Helm 4 does not
  skip CRDs in place: it applies ``crds/`` over them (server-side, field manager ``helm``), which, the
  documents being the same, changes no CRD's spec;
- the operator under the chart's identity (its ClusterRoles: every namespace) takes the Lease in the
  release namespace, answers ``/healthz`` and reconciles an LLMService: the owned objects exist and the
  status is written; the authorizer refused none of its requests;
- ``helm upgrade`` with ``watchNamespaces`` swaps the cluster-wide grants on namespaced objects for a
  Role and RoleBinding in the watched namespace; the operator restarted with the upgraded Deployment's
  environment reconciles an LLMService there, again with no request refused;
- ``helm uninstall`` removes every object the release installed; the CRDs stay (Helm never deletes the
  CRDs of ``crds/``).
"""

from __future__ import annotations

import datetime
import pathlib
import re
import shlex
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from tests.cluster import gateways, operators
from tests.cluster.conftest import ROOT, Cluster
from tests.cluster.kube import ApiError, wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]

GROUP = "/apis/serving.noctaya.io/v1alpha1"
RELEASE = "noctaya"
NAMESPACE = "noctaya-helm"  # named in tests/cluster/audit-policy.yaml
ACCOUNT = "noctaya-operator"
USER = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
CHART = ROOT / "charts" / "noctaya"

PLURALS = {
    "ServiceAccount": "serviceaccounts",
    "ClusterRole": "clusterroles",
    "ClusterRoleBinding": "clusterrolebindings",
    "Role": "roles",
    "RoleBinding": "rolebindings",
    "Deployment": "deployments",
    "PodDisruptionBudget": "poddisruptionbudgets",
}


class Release:
    def __init__(self, *, cluster: Cluster, helm: str, directory: pathlib.Path) -> None:
        self.cluster = cluster
        self.kube = cluster.kube
        self.helm_binary = helm
        self.directory = directory
        self.watched = f"helm-watched-{uuid.uuid4().hex[:6]}"
        self.operator: gateways.Process | None = None
        self.health = f"{gateways.loopback()}:8081"
        self.started = datetime.datetime.now(tz=datetime.UTC)

    def helm(self, *args: str) -> str:
        result = subprocess.run(
            [self.helm_binary, "--kubeconfig", str(self.cluster.kubeconfig), "--namespace", NAMESPACE, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )
        assert result.returncode == 0, f"helm {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
        return result.stdout + result.stderr

    def manifest(self) -> list[dict[str, Any]]:
        return [d for d in yaml.safe_load_all(self.helm("get", "manifest", RELEASE)) if d]

    def deployment(self) -> dict[str, Any]:
        return next(d for d in self.manifest() if d["kind"] == "Deployment")

    def start_operator(self) -> None:
        """The chart's operator container as a local process, with the Deployment's environment."""
        self.stop_operator()
        container = self.deployment()["spec"]["template"]["spec"]["containers"][0]
        assert container["command"] == ["noctaya"] and container["args"] == ["operator"], container
        env: dict[str, str] = {}
        for var in container["env"]:
            field = var.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            if field is not None:
                env[var["name"]] = {"metadata.name": "helm-operator", "metadata.namespace": NAMESPACE}[field]
            else:
                env[var["name"]] = str(var["value"])
        env["HOME"] = str(self.directory)
        env["NOCTAYA_IDENTITY"] = "helm-operator"  # a Pod's hostname, the default identity, is its name
        env["NOCTAYA_HEALTH_LISTEN"] = self.health
        kubeconfig = operators.token_kubeconfig(
            self.cluster, namespace=NAMESPACE, account=ACCOUNT, directory=self.directory
        )
        self.started = datetime.datetime.now(tz=datetime.UTC)
        self.operator = gateways.Process(
            [sys.executable, "-m", "noctaya", "operator", "--kubeconfig", str(kubeconfig)],
            log=self.directory / f"operator-{uuid.uuid4().hex[:4]}.log",
            env=env,
        )

    def stop_operator(self) -> None:
        if self.operator is not None:
            self.operator.stop()
            print("---- operator (last lines)\n" + "\n".join(self.operator.text().splitlines()[-30:]))
            self.operator = None

    def healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://{self.health}/healthz", timeout=5) as resp:
                return bool(resp.status == 200)
        except OSError:
            return False

    def refused(self) -> list[tuple[str, dict[str, Any]]]:
        """Every request of the chart's ServiceAccount the authorizer refused since the operator started."""
        return [
            (e["verb"], e.get("objectRef", {}))
            for e in operators.audit_events(self.cluster)
            if e.get("user", {}).get("username") == USER
            and e.get("responseStatus", {}).get("code") == 403
            and datetime.datetime.fromisoformat(e["requestReceivedTimestamp"]) >= self.started
        ]


def _path(doc: dict[str, Any]) -> str:
    group, _, version = doc["apiVersion"].rpartition("/")
    prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
    ns = doc["metadata"].get("namespace")
    scope = f"/namespaces/{ns}" if ns else ""
    return f"{prefix}{scope}/{PLURALS[doc['kind']]}/{doc['metadata']['name']}"


@pytest.fixture(scope="module")
def helm() -> str:
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "helm.sh")], capture_output=True, text=True, check=False, timeout=3600
    )
    assert result.returncode == 0, f"scripts/helm.sh could not provide Helm:\n{result.stderr}"
    return result.stdout.strip()


@pytest.fixture(scope="module")
def release(cluster: Cluster, helm: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Release]:
    kube = cluster.kube
    release = Release(cluster=cluster, helm=helm, directory=tmp_path_factory.mktemp("helm"))
    cluster.apply_runtime("vllm-nvidia")
    kube.create(
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": release.watched}},
    )
    # the tier's other modules install dist/install.yaml's cluster-scoped RBAC, of the chart's names:
    # Helm adopts nothing it did not install, so those go first (the next module applies them again)
    for doc in yaml.safe_load_all((ROOT / "dist" / "install.yaml").read_text(encoding="utf-8")):
        if doc and doc["kind"] in ("ClusterRole", "ClusterRoleBinding"):
            kube.delete(_path(doc))
    try:
        yield release
    finally:
        release.stop_operator()
        for ns in (NAMESPACE, release.watched):
            for item in kube.get(f"{GROUP}/namespaces/{ns}/llmservices")["items"]:
                kube.delete(f"{GROUP}/namespaces/{ns}/llmservices/{item['metadata']['name']}")
        subprocess.run(
            [helm, "--kubeconfig", str(cluster.kubeconfig), "--namespace", NAMESPACE, "uninstall", RELEASE],
            capture_output=True,
            check=False,
            timeout=600,
        )
        for ns in (NAMESPACE, release.watched):
            kube.delete(f"/api/v1/namespaces/{ns}")


def _service(release: Release, *, name: str, namespace: str) -> str:
    doc = yaml.safe_load((ROOT / "examples" / "vllm-nvidia" / "llmservice.yaml").read_text())
    doc["metadata"].update(name=name, namespace=namespace)
    doc["spec"]["cache"] = {"strategy": "None"}
    doc["spec"]["scaling"] = {"min": 0, "max": 2}
    path = f"{GROUP}/namespaces/{namespace}/llmservices/{name}"
    release.kube.apply(path, doc, manager="platform-team")
    return path


def _reconciled(release: Release, *, path: str, namespace: str, name: str) -> None:
    status = wait(
        f"the operator to report on {path}",
        lambda: dict(release.kube.get(path).get("status") or {}),
        # every owned object applied: a pass may first report a transient block (the operator just
        # started: KEDA's API not discovered yet, say) and apply on its recheck
        lambda s: (
            s.get("observedGeneration") == 1
            and any(
                c.get("type") == "Reconciled" and c.get("status") == "True" for c in s.get("conditions") or []
            )
        ),
        timeout=240,
    )
    assert status["phase"], status
    for owned in (
        f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}-backend",
        f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}-gateway",
        f"/api/v1/namespaces/{namespace}/configmaps/{name}-gateway",
        f"/apis/keda.sh/v1alpha1/namespaces/{namespace}/scaledobjects/{name}",
    ):
        obj = release.kube.get(owned)
        assert obj["metadata"]["ownerReferences"][0]["name"] == name, obj["metadata"]


def readme_helm_commands() -> list[list[str]]:
    """The ``kubectl create namespace`` and ``helm install`` commands of README.md's Helm block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```bash\n(.*?)```", text, re.S) if "helm install" in b)
    commands = [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines()]
    return [
        c for c in commands if c[:3] == ["kubectl", "create", "namespace"] or c[:2] == ["helm", "install"]
    ]


def test_the_readmes_helm_commands_work_and_a_missing_namespace_leaves_nothing(release: Release) -> None:
    create, install = readme_helm_commands()
    assert create[:3] == ["kubectl", "create", "namespace"] and install[:2] == ["helm", "install"]
    watched, fresh = create[3], f"readme-{uuid.uuid4().hex[:6]}"
    assert f'watchNamespaces=["{watched}"]' in install, install
    # the tier's other modules use noctaya-system (dist/install.yaml), which Helm would not adopt
    swapped = {watched: fresh, "noctaya-system": NAMESPACE}
    install = [swapped.get(w, w.replace(f'"{watched}"', f'"{fresh}"')) for w in install]

    def helm_install() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [release.helm_binary, "--kubeconfig", str(release.cluster.kubeconfig), *install[1:]],
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
            cwd=ROOT,
        )

    rendered = subprocess.run(
        [release.helm_binary, "template", *install[2:]],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        cwd=ROOT,
    )
    would_install = [_path(d) for d in yaml.safe_load_all(rendered.stdout) if d]
    assert any(f"/namespaces/{fresh}/roles/" in p for p in would_install), would_install

    failed = helm_install()
    assert failed.returncode != 0, failed.stdout
    message = f'namespace "{fresh}" does not exist: create it first (kubectl create namespace {fresh})'
    assert message in failed.stderr, failed.stderr
    assert release.helm("list", "--short", "--deployed", "--failed", "--pending").strip() == ""
    assert [p for p in would_install if release.kube.exists(p)] == []

    release.cluster.kubectl(*create[1:3], fresh)
    try:
        done = helm_install()
        assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
        roles = {(d["kind"], d["metadata"].get("namespace")) for d in release.manifest()}
        assert ("Role", fresh) in roles and ("RoleBinding", fresh) in roles, roles
        release.helm("uninstall", RELEASE, "--wait")
    finally:
        release.kube.delete(f"/api/v1/namespaces/{fresh}")


def test_helm_install_brings_the_operator_up_ready(release: Release) -> None:
    crds_before = {
        name: release.kube.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        for name in ("llmservices.serving.noctaya.io", "inferenceruntimes.serving.noctaya.io")
    }
    for chart_crd, dist_crd in zip(
        sorted((CHART / "crds").iterdir()), sorted((ROOT / "dist" / "crds").iterdir()), strict=True
    ):
        assert chart_crd.read_bytes() == dist_crd.read_bytes(), chart_crd
    release.helm("install", RELEASE, str(CHART), "--create-namespace")
    installed = release.manifest()
    assert {d["kind"] for d in installed} == set(PLURALS), [d["kind"] for d in installed]
    for doc in installed:
        assert release.kube.exists(_path(doc)), _path(doc)
    deployment = next(d for d in installed if d["kind"] == "Deployment")
    replicas = deployment["spec"]["replicas"]
    assert replicas == 2
    status = wait(
        "the operator Deployment Available with every replica Ready",
        lambda: dict(release.kube.get(_path(deployment)).get("status") or {}),
        lambda s: (
            s.get("readyReplicas") == replicas
            and any(c["type"] == "Available" and c["status"] == "True" for c in s.get("conditions", []))
        ),
        timeout=240,
    )
    assert status["availableReplicas"] == replicas
    # Helm 4 server-side applies the chart's crds/ even over CRDs in place (field manager helm); being
    # the same documents, that changes no spec: the generation stays
    for name, before in crds_before.items():
        after = release.kube.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        assert after["metadata"]["generation"] == before["metadata"]["generation"], name


def test_the_operator_reconciles_under_the_charts_service_account(release: Release) -> None:
    release.start_operator()
    assert release.operator is not None
    wait("the operator's /healthz", release.healthy, bool, timeout=120)
    lease = f"/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases/noctaya-operator"
    wait(
        "the operator to take the Lease in the release namespace",
        lambda: release.kube.get(lease)["spec"].get("holderIdentity") if release.kube.exists(lease) else None,
        lambda holder: holder == "helm-operator",
        timeout=120,
    )
    name = "helm-everywhere"
    path = _service(release, name=name, namespace=NAMESPACE)
    _reconciled(release, path=path, namespace=NAMESPACE, name=name)
    assert release.refused() == []


def test_helm_upgrade_with_watch_namespaces_grants_roles_and_still_reconciles(release: Release) -> None:
    release.helm("upgrade", RELEASE, str(CHART), "--set-json", f'watchNamespaces=["{release.watched}"]')
    upgraded = release.manifest()
    roles = {(d["kind"], d["metadata"]["name"], d["metadata"].get("namespace")) for d in upgraded}
    assert ("Role", "noctaya-operator-watched", release.watched) in roles, roles
    assert ("RoleBinding", "noctaya-operator-watched", release.watched) in roles, roles
    assert ("ClusterRole", "noctaya-operator-watched", None) not in roles, roles
    # what the upgrade dropped is gone from the server
    with pytest.raises(ApiError) as gone:
        release.kube.get("/apis/rbac.authorization.k8s.io/v1/clusterroles/noctaya-operator-watched")
    assert gone.value.status == 404
    env = {
        v["name"]: v.get("value")
        for v in release.deployment()["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["NOCTAYA_NAMESPACE"] == release.watched
    release.start_operator()  # as the Deployment's rollout would restart it
    wait("the operator's /healthz", release.healthy, bool, timeout=120)
    name = "helm-watched"
    path = _service(release, name=name, namespace=release.watched)
    _reconciled(release, path=path, namespace=release.watched, name=name)
    assert release.refused() == []
    release.stop_operator()


def test_helm_uninstall_removes_what_it_installed(release: Release) -> None:
    installed = release.manifest()
    release.helm("uninstall", RELEASE, "--wait")
    paths = [_path(doc) for doc in installed]
    left = wait(
        "every object of the release to go",
        lambda: [p for p in paths if release.kube.exists(p)],
        lambda remaining: remaining == [],
        timeout=120,
    )
    assert left == [] and paths
    for name in ("llmservices.serving.noctaya.io", "inferenceruntimes.serving.noctaya.io"):
        assert release.kube.exists(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
