"""KEDA HTTP add-on's interceptor as a peer of ``bench.gateway``, run against the local control plane.

The binary comes from ``scripts/interceptor.sh`` (its pinned Go module, built into
``~/.cache/noctaya/interceptor``; ``NOCTAYA_INTERCEPTOR`` names another) and the control plane from
``scripts/cluster.sh up`` (its state directory, ``.cluster`` by default). Before the interceptor starts,
the module's CRDs (HTTPScaledObject, InterceptorRoute: ``config/crd/bases`` in the module cache) are
applied, and a namespace of its own gets:

- Service ``engine`` with no selector and an EndpointSlice of one ready endpoint on the bench's backend
  port, routed by an HTTPScaledObject for the host ``127.0.0.1`` (the host every load generator sends);
- Service ``cold`` with no EndpointSlice (scaled to zero), routed by an HTTPScaledObject for
  :data:`COLD_HOST`: requests there are held until endpoints appear, as the held phase wants.

The interceptor decides readiness from EndpointSlices (``kubernetes.io/service-name``) and dials
``<service>.<namespace>:<port>``; an EndpointSlice may not hold a loopback address, so the slice names
the host's address and a hosts file of the interceptor's own (bind-mounted over /etc/hosts in a private
mount namespace, as ``noctaya.dev.cluster`` does for KEDA's operator) maps both Service names to
127.0.0.1, where the backend listens: the part cluster DNS and a Service's virtual IP play in a cluster.
It watches only its namespace, and its admin port's ``/queue`` (pending requests per route, read by
``bench.load.held_count``) is how the held phase counts what it holds. A missing binary or control
plane is a :class:`PeerMissing`.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import pathlib
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from typing import Any

import aiohttp

from bench import processes
from noctaya.dev import cluster

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "interceptor.sh"
CLUSTER_SCRIPT = ROOT / "scripts" / "cluster.sh"
WARM_SERVICE = "engine"
COLD_SERVICE = "cold"
COLD_HOST = "cold.bench.invalid"
KUBECTL_TIMEOUT = 120.0
READY_WITHIN = 60.0
# The interceptor's settings that are not its defaults, besides its ports and the namespace it watches:
# its pool of idle backend connections is nginx's here (1,024; it ships with 1,000 in all and 200 per
# host, which at 512 clients would close a connection after most requests, as the gateway's pool and
# nginx's do not), and it stops without the 5 s delay meant for a load balancer to notice. The rest of
# the data path (timeouts, the cold-start header, metrics and their Prometheus exporter) is as shipped.
SETTINGS = {
    "KEDA_HTTP_MAX_IDLE_CONNS": "1024",
    "KEDA_HTTP_MAX_IDLE_CONNS_PER_HOST": "1024",
    "KEDA_HTTP_SHUTDOWN_DELAY": "0s",
    "KEDA_HTTP_DRAIN_TIMEOUT": "5s",
}


class PeerMissing(Exception):
    """The interceptor cannot run here: the message says what is missing and how to get it."""


def _run(argv: list[str], *, stdin: str | None = None, timeout: float = KUBECTL_TIMEOUT) -> str:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise PeerMissing(f"{' '.join(argv[:3])} did not answer within {timeout:g} s") from exc
    if done.returncode != 0:
        raise PeerMissing(f"{' '.join(argv[:3])} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def binary() -> pathlib.Path:
    """The interceptor binary: ``NOCTAYA_INTERCEPTOR``, else the one ``scripts/interceptor.sh`` builds."""
    given = os.environ.get("NOCTAYA_INTERCEPTOR")
    path = pathlib.Path(given) if given else pathlib.Path(_run(["bash", str(SCRIPT), "path"]).strip())
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise PeerMissing(f"no interceptor binary at {path} (build it: bash scripts/interceptor.sh)")
    return path


def crd_directory() -> pathlib.Path:
    """The module's CRD directory in the Go module cache (fetched by the script if needed)."""
    return pathlib.Path(_run(["bash", str(SCRIPT), "crds"], timeout=600).strip())


@dataclasses.dataclass(frozen=True, kw_only=True)
class ControlPlane:
    """The local control plane ``scripts/cluster.sh up`` started, driven with its ``kubectl``."""

    kubeconfig: pathlib.Path
    kubectl: pathlib.Path

    def run(self, *args: str, stdin: str | None = None) -> str:
        return _run([str(self.kubectl), "--kubeconfig", str(self.kubeconfig), *args], stdin=stdin)


def control_plane(state: pathlib.Path) -> ControlPlane:
    """The control plane whose state directory is ``state``; :class:`PeerMissing` unless it answers."""
    kubeconfig = state / "kubeconfig"
    if not kubeconfig.is_file():
        raise PeerMissing(
            f"no local control plane at {state} (no kubeconfig): start one with bash scripts/cluster.sh up"
        )
    env = {**os.environ, "NOCTAYA_CLUSTER_DIR": str(state)}
    bin_dir = subprocess.run(
        ["bash", str(CLUSTER_SCRIPT), "bin"], env=env, capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    kubectl = pathlib.Path(bin_dir) / "kubectl"
    if not kubectl.is_file():
        raise PeerMissing(f"no kubectl at {kubectl}: build the control plane with bash scripts/cluster.sh up")
    plane = ControlPlane(kubeconfig=kubeconfig, kubectl=kubectl)
    try:
        plane.run("--request-timeout=10s", "get", "--raw", "/readyz")
    except PeerMissing as exc:
        raise PeerMissing(
            f"the control plane at {state} does not answer ({exc}): bash scripts/cluster.sh up"
        ) from exc
    return plane


def control_plane_processes(state: pathlib.Path) -> list[tuple[int, str]]:
    """``(pid, name)`` of every process running a binary of the control plane's build (etcd, the API
    server, the controller manager, the scheduler, KWOK, KEDA's operator and metrics server): what
    ``scripts/cluster.sh up`` started."""
    env = {**os.environ, "NOCTAYA_CLUSTER_DIR": str(state)}
    bin_dir = subprocess.run(
        ["bash", str(CLUSTER_SCRIPT), "bin"], env=env, capture_output=True, text=True, timeout=60, check=False
    ).stdout.strip()
    if not bin_dir:
        return []
    root = pathlib.Path(bin_dir).resolve()
    found: list[tuple[int, str]] = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            exe = (entry / "exe").resolve(strict=True)
        except OSError:
            continue
        if exe.parent == root:
            found.append((int(entry.name), exe.name))
    return sorted(found)


@contextlib.contextmanager
def paused(state: pathlib.Path) -> Iterator[list[str]]:
    """Stop the control plane's processes (SIGSTOP) for the block, then let them go on (SIGCONT): a
    warm interceptor needs none of them while it proxies (its routing table and endpoints are held in
    memory; its watches wait), and their periodic work (leases, lists, KEDA's polls) is noise beside
    the proxies being measured. Yields the names stopped."""
    stopped: list[int] = []
    names: list[str] = []
    try:
        for pid, name in control_plane_processes(state):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
                names.append(name)
        _wait_stopped(stopped, within=5.0)
        yield names
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def _wait_stopped(pids: list[int], *, within: float) -> None:
    """Until every process of ``pids`` is stopped (a signal is delivered when its process next runs),
    or gone, at most ``within`` seconds."""
    deadline = time.monotonic() + within
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                break
            if stat.rpartition(")")[2].split()[0] in ("T", "t", "Z"):
                break
            time.sleep(0.005)


def objects(*, namespace: str, port: int, address: str) -> list[dict[str, Any]]:
    """The namespace, the two Services (one EndpointSlice for the warm one) and their HTTPScaledObjects."""
    meta = {"namespace": namespace}
    documents: list[dict[str, Any]] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    ]
    for service in (WARM_SERVICE, COLD_SERVICE):
        documents.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": service, **meta},
                "spec": {"ports": [{"name": "http", "port": port, "protocol": "TCP", "targetPort": port}]},
            }
        )
    documents.append(
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": f"{WARM_SERVICE}-host",
                **meta,
                "labels": {
                    "kubernetes.io/service-name": WARM_SERVICE,
                    "endpointslice.kubernetes.io/managed-by": "noctaya-bench",
                },
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [address], "conditions": {"ready": True}}],
            "ports": [{"name": "http", "port": port, "protocol": "TCP"}],
        }
    )
    for service, host in ((WARM_SERVICE, "127.0.0.1"), (COLD_SERVICE, COLD_HOST)):
        documents.append(
            {
                "apiVersion": "http.keda.sh/v1alpha1",
                "kind": "HTTPScaledObject",
                "metadata": {"name": service, **meta},
                "spec": {
                    "hosts": [host],
                    "scaleTargetRef": {
                        "apiVersion": "apps/v1",
                        "kind": "Deployment",
                        "name": service,
                        "service": service,
                        "port": port,
                    },
                    "replicas": {"min": 0, "max": 1},
                    "scalingMetric": {"concurrency": {"targetValue": 100}},
                },
            }
        )
    return documents


def hosts_file(*, namespace: str) -> str:
    """The interceptor's /etc/hosts: both Service names at 127.0.0.1, beside localhost."""
    names = " ".join(f"{service}.{namespace}" for service in (WARM_SERVICE, COLD_SERVICE))
    return f"127.0.0.1 localhost {names}\n::1 localhost\n"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Running:
    """A started interceptor: its process, proxy URL and admin URL, and the cold route's queue key."""

    process: processes.Process
    url: str
    admin_url: str
    namespace: str
    plane: ControlPlane

    @property
    def cold_key(self) -> str:
        return f"{self.namespace}/{COLD_SERVICE}"

    def stop(self) -> None:
        self.process.stop()
        try:
            self.plane.run("delete", "namespace", self.namespace, "--wait=false")
        except PeerMissing as exc:
            print(f"interceptor: namespace {self.namespace} left behind: {exc}")


def start(tmp: pathlib.Path, *, backend_port: int, state: pathlib.Path) -> Running:
    """Apply the CRDs and objects, start the interceptor and return once it proxies to the backend."""
    program = binary()
    plane = control_plane(state)
    plane.run("apply", "--server-side", "-f", str(crd_directory()))
    plane.run(
        "wait", "--for", "condition=Established", "--timeout", "60s", "crd/httpscaledobjects.http.keda.sh"
    )
    plane.run(
        "wait", "--for", "condition=Established", "--timeout", "60s", "crd/interceptorroutes.http.keda.sh"
    )
    namespace = f"bench-interceptor-{uuid.uuid4().hex[:6]}"
    address = cluster.host_ip(os.environ.get("NOCTAYA_CLUSTER_HOST_IP", ""))
    plane.run(
        "apply",
        "-f",
        "-",
        stdin=cluster.manifest(objects(namespace=namespace, port=backend_port, address=address)),
    )
    hosts = tmp / "interceptor-hosts"
    hosts.write_text(hosts_file(namespace=namespace), encoding="ascii")
    proxy_port, admin_port, metrics_port = (processes.reserved_port() for _ in range(3))
    env = {key: value for key, value in os.environ.items() if not key.lower().endswith("_proxy")}
    env.update(
        SETTINGS,
        KUBECONFIG=str(plane.kubeconfig),
        KEDA_HTTP_WATCH_NAMESPACE=namespace,
        KEDA_HTTP_PROXY_PORT=str(proxy_port),
        KEDA_HTTP_ADMIN_PORT=str(admin_port),
        OTEL_PROM_EXPORTER_PORT=str(metrics_port),
    )
    process = processes.Process(
        "interceptor",
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "sh",
            "-c",
            'mount --bind "$0" /etc/hosts && exec "$@"',
            str(hosts),
            str(program),
            "--zap-log-level=error",
        ],
        log=tmp / "interceptor.log",
        env=env,
    )
    running = Running(
        process=process,
        url=f"http://127.0.0.1:{proxy_port}",
        admin_url=f"http://127.0.0.1:{admin_port}",
        namespace=namespace,
        plane=plane,
    )
    try:
        _wait_proxying(running)
    except BaseException:
        running.stop()
        raise
    return running


def _wait_proxying(running: Running) -> None:
    """Until a request through the warm route gets the backend's 200 (routes and endpoints synced)."""

    async def poll() -> None:
        async with aiohttp.ClientSession() as session:
            while True:
                if running.process.popen.poll() is not None:
                    raise PeerMissing(f"the interceptor exited; its log ends:\n{_log_tail(running)}")
                with contextlib.suppress(aiohttp.ClientError):
                    async with session.get(running.url + "/health") as response:
                        if response.status == 200:
                            return
                await asyncio.sleep(0.1)

    try:
        asyncio.run(asyncio.wait_for(poll(), READY_WITHIN))
    except TimeoutError:
        raise PeerMissing(
            f"the interceptor did not reach the backend within {READY_WITHIN:g} s; its log ends:\n"
            f"{_log_tail(running)}"
        ) from None


def _log_tail(running: Running) -> str:
    return running.process.log.read_bytes()[-2000:].decode("utf-8", "replace")


def held_job(running: Running) -> dict[str, str]:
    """The held phase's job fields for the cold route: its Host and where its queue is read."""
    return {"host": COLD_HOST, "queue_url": running.admin_url + "/queue", "queue_key": running.cold_key}


def version() -> str:
    """The module version the script pins (for the report)."""
    for line in SCRIPT.read_text(encoding="utf-8").splitlines():
        if line.startswith('VERSION="${NOCTAYA_INTERCEPTOR_VERSION:-'):
            return os.environ.get("NOCTAYA_INTERCEPTOR_VERSION") or line.split(":-", 1)[1].rstrip('}"')
    return "unknown"
