"""KEDA on a local control plane: what ``scripts/cluster.sh`` starts besides kwokctl's cluster.

``scripts/cluster.sh`` builds the binaries (``go build``) and has kwokctl create, start and delete the
cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK). Then
``python -m noctaya.dev.cluster up`` waits for the API server, applies a simulated node, the ``keda``
namespace and the CRDs it is given, makes KEDA's certificates and starts KEDA's operator and its
metrics API server as :class:`~noctaya.dev.processes.Daemon` s (pid files and logs in
``<state>/keda``), and returns once the operator's ScaledObject controller runs (without leader
election: a missed renewal on a loaded machine would end it) and ``external.metrics.k8s.io/v1beta1``
is served through the aggregator; ``down`` stops both. Both are idempotent. ``try`` runs what the
cluster's Pods would run on this host (:mod:`noctaya.dev.pods`) until Ctrl-C. The API server is driven
with the ``kubectl`` binary built beside the others (this package imports no Kubernetes client).
"""

from __future__ import annotations

import argparse
import base64
import collections.abc
import dataclasses
import errno
import ipaddress
import json
import os
import pathlib
import random
import shutil
import subprocess
import sys
import time
from typing import Any

from noctaya.dev import certificates, pods, processes

KEDA_NAMESPACE = "keda"
ADAPTER_SERVICE = "keda-operator-metrics-apiserver"
METRICS_SERVICE_PORT = 9666  # the port KEDA's manifests give its metrics gRPC service
NODE = "kwok-node-0"
CERTIFICATE_DAYS = 30
KUBECTL_TIMEOUT = 120.0
STOP_GRACE = 10.0
ADAPTER_ATTEMPTS = 5
READY_WITHIN = 120.0
WORKING_WITHIN = 120.0
AGGREGATED_WITHIN = 180.0
POLL = 1.0
PROBE = "--request-timeout=10s"  # one readiness probe; the wait around it has its own bound


class ClusterError(Exception):
    """The control plane did not come up (the message says which part and why)."""


def say(message: str) -> None:
    print(f"cluster: {message}", file=sys.stderr, flush=True)


# A simulated node KWOK keeps Ready: room for every Pod the tests create, accelerators included.
_RESOURCES = {
    "cpu": "64",
    "memory": "512Gi",
    "pods": "256",
    "nvidia.com/gpu": "16",
    "ephemeral-storage": "1Ti",
}
NODE_MANIFEST: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": NODE,
        "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
        "labels": {
            "kubernetes.io/hostname": NODE,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "type": "kwok",
        },
    },
    "status": {
        "allocatable": _RESOURCES,
        "capacity": _RESOURCES,
        "nodeInfo": {
            "architecture": "amd64",
            "operatingSystem": "linux",
            "kubeletVersion": "fake",
            "kubeProxyVersion": "fake",
        },
        "phase": "Running",
    },
}


def manifest(documents: collections.abc.Iterable[dict[str, Any]]) -> str:
    """A stream ``kubectl apply -f -`` reads: one JSON document each, ``---`` between."""
    return "\n---\n".join(json.dumps(document) for document in documents) + "\n"


def adapter_manifest(*, ip: str, port: int, ca_bundle: bytes) -> list[dict[str, Any]]:
    """The metrics API server's Service, EndpointSlice and Endpoints (no selector: its endpoint is this
    host) and the APIService ``v1beta1.external.metrics.k8s.io`` the HPA controller reads through."""
    meta = {"name": ADAPTER_SERVICE, "namespace": KEDA_NAMESPACE}
    https = {"name": "https", "port": port, "protocol": "TCP"}
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {"ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]},
        },
        {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": f"{ADAPTER_SERVICE}-host",
                "namespace": KEDA_NAMESPACE,
                "labels": {
                    "kubernetes.io/service-name": ADAPTER_SERVICE,
                    "endpointslice.kubernetes.io/managed-by": "noctaya-cluster",
                },
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
            "ports": [https],
        },
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": meta,
            "subsets": [{"addresses": [{"ip": ip}], "ports": [https]}],
        },
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": "v1beta1.external.metrics.k8s.io"},
            "spec": {
                "group": "external.metrics.k8s.io",
                "version": "v1beta1",
                "service": {"name": ADAPTER_SERVICE, "namespace": KEDA_NAMESPACE, "port": 443},
                "caBundle": base64.b64encode(ca_bundle).decode("ascii"),
                "groupPriorityMinimum": 100,
                "versionPriority": 100,
            },
        },
    ]


def make_keda_certificates(directory: pathlib.Path) -> None:
    """KEDA's CA and the one pair both its processes use (unless ``tls.crt`` is there already).

    The operator serves its metrics gRPC service with it and refuses to start without it; the metrics
    API server dials that service with it and serves the aggregator with it, so its Service's name is
    among the SANs (the aggregator checks it against the APIService's caBundle).
    """
    if (directory / "tls.crt").is_file():
        return
    certificates.make_authority(directory=directory, name="ca", days=CERTIFICATE_DAYS)
    names = [
        "localhost",
        "keda-operator",
        f"keda-operator.{KEDA_NAMESPACE}.svc",
        f"{ADAPTER_SERVICE}.{KEDA_NAMESPACE}.svc",
    ]
    sans = ",".join([*(f"DNS:{name}" for name in names), "IP:127.0.0.1"])
    certificates.issue(
        directory=directory,
        name="tls",
        subject="keda-operator",
        ca="ca",
        extensions=f"subjectAltName={sans}\nextendedKeyUsage=serverAuth,clientAuth\n",
        days=CERTIFICATE_DAYS,
    )


def metrics_service_address(path: pathlib.Path) -> str:
    """KEDA's metrics gRPC service address: a random 127.0.0.0/8 address (every one is local) chosen
    once per cluster and kept in ``path``, so two clusters on one machine share no port."""
    try:
        kept = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        kept = ""
    host, _, port = kept.rpartition(":")
    try:
        if ipaddress.IPv4Address(host).is_loopback and port == str(METRICS_SERVICE_PORT):
            return kept
    except ValueError:
        pass
    draw = random.SystemRandom()
    address = f"127.{draw.randint(1, 254)}.{draw.randint(1, 254)}.{draw.randint(2, 254)}"
    chosen = f"{address}:{METRICS_SERVICE_PORT}"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(chosen + "\n", encoding="ascii")
    return chosen


def host_ip(given: str) -> str:
    """The address the aggregator dials the metrics API server on: kube-apiserver runs with
    ``--enable-aggregator-routing`` (no kube-proxy here), so it dials the endpoint directly, and an
    endpoint may not be a loopback address. ``given``, else the host's first non-loopback IPv4."""
    if given:
        try:
            address = ipaddress.IPv4Address(given)
        except ValueError as exc:
            raise ClusterError(f"--host-ip: {given!r} is not an IPv4 address") from exc
        if address.is_loopback or address.is_unspecified:
            raise ClusterError(f"--host-ip: {given} is not an address an endpoint may have")
        return given
    hostname = shutil.which("hostname")
    listed = ""
    if hostname is not None:
        listed = subprocess.run(
            [hostname, "-I"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    for word in listed.split():
        try:
            address = ipaddress.IPv4Address(word)
        except ValueError:
            continue
        if not address.is_loopback:
            return word
    raise ClusterError(
        "no non-loopback IPv4 address for KEDA's metrics API server (set NOCTAYA_CLUSTER_HOST_IP)"
    )


def until(
    condition: collections.abc.Callable[[], bool],
    *,
    within: float,
    alive: collections.abc.Callable[[], bool] = lambda: True,
) -> bool:
    """Poll ``condition`` every second: True when it holds, False when ``alive`` stops holding or
    ``within`` seconds pass."""
    deadline = time.monotonic() + within
    while not condition():
        if not alive() or time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
    return True


@dataclasses.dataclass(frozen=True, kw_only=True)
class ControlPlane:
    """One local cluster's KEDA side: binaries in ``bin``, state (pid files, logs, certificates) in
    ``state / "keda"``, the API server reached through ``kubeconfig``."""

    bin: pathlib.Path
    state: pathlib.Path
    kubeconfig: pathlib.Path

    @property
    def keda_dir(self) -> pathlib.Path:
        return self.state / "keda"

    @property
    def certs(self) -> pathlib.Path:
        return self.keda_dir / "certs"

    @property
    def hosts(self) -> pathlib.Path:
        """The hosts file KEDA's operator resolves names with (bind-mounted over its /etc/hosts)."""
        return self.keda_dir / "hosts"

    @property
    def operator(self) -> processes.Daemon:
        return processes.Daemon(
            name="KEDA operator",
            pidfile=self.keda_dir / "operator.pid",
            log_path=self.keda_dir / "operator.log",
        )

    @property
    def adapter(self) -> processes.Daemon:
        return processes.Daemon(
            name="KEDA metrics API server",
            pidfile=self.keda_dir / "adapter.pid",
            log_path=self.keda_dir / "adapter.log",
        )

    def kubectl(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                [str(self.bin / "kubectl"), "--kubeconfig", str(self.kubeconfig), *args],
                input=stdin,
                capture_output=True,
                text=True,
                timeout=KUBECTL_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(args, 124, "", f"kubectl timed out ({KUBECTL_TIMEOUT} s)")

    def must(self, *args: str, stdin: str | None = None) -> None:
        """Run kubectl, its output to stderr; a failure is a :class:`ClusterError` with its message."""
        done = self.kubectl(*args, stdin=stdin)
        sys.stderr.write(done.stdout)
        if done.returncode != 0:
            raise ClusterError(f"kubectl {' '.join(args[:2])} failed: {done.stderr.strip()[-2000:]}")

    def settled(self, condition: str, *targets: str) -> None:
        """Wait until ``targets`` meet ``condition``, within :data:`READY_WITHIN`. ``kubectl wait``
        fails at once on an object whose status has no conditions yet (a CRD just applied), so a
        failed wait is tried again until the bound; the last failure is the error."""
        last = ""

        def met() -> bool:
            nonlocal last
            done = self.kubectl("wait", "--for", condition, "--timeout", "30s", *targets)
            last = done.stderr.strip()[-2000:]
            return done.returncode == 0

        if not until(met, within=READY_WITHIN):
            raise ClusterError(f"kubectl wait --for {condition} {' '.join(targets)}: {last}")

    def _env(self) -> dict[str, str]:
        return {
            "KUBECONFIG": str(self.kubeconfig),
            "WATCH_NAMESPACE": "",
            "KEDA_CLUSTER_OBJECT_NAMESPACE": KEDA_NAMESPACE,
            "POD_NAMESPACE": KEDA_NAMESPACE,
        }

    def up(self, *, crds: list[pathlib.Path], host_ip: str) -> None:
        ready = until(
            lambda: self.kubectl(PROBE, "get", "--raw", "/readyz").returncode == 0, within=READY_WITHIN
        )
        if not ready:
            raise ClusterError(f"kube-apiserver not ready within {READY_WITHIN:.0f} s")
        say("kube-apiserver ready")
        self.must("apply", "-f", "-", stdin=manifest([NODE_MANIFEST]))
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": KEDA_NAMESPACE}}
        self.must("apply", "-f", "-", stdin=manifest([namespace]))
        for directory in crds:
            say(f"installing the CRDs of {directory}")
            self.must("apply", "--server-side", "-f", str(directory))
        self.settled("condition=Established", "crd", "--all")
        self.settled("condition=Ready", f"node/{NODE}")
        self.start_operator()
        self.start_adapter(ip=host_ip)

    def start_operator(self) -> None:
        """KEDA's operator; a hosts file of its own (``<state>/keda/hosts``) is bind-mounted over
        /etc/hosts in a mount namespace of its own, so in-cluster Service names can resolve to local
        addresses."""
        operator = self.operator
        if operator.running:
            say(f"KEDA operator already running (pid {operator.pid})")
            return
        make_keda_certificates(self.certs)
        hosts = self.hosts
        if not hosts.is_file():
            shutil.copyfile("/etc/hosts", hosts)
        say(f"starting KEDA operator (log: {operator.log_path})")
        # without leader election: on a loaded machine a Lease renewal that misses its deadline ends
        # the process ("leader election lost"), and nothing here restarts it (KEDA then builds no HPA)
        logged = operator.log_path.stat().st_size if operator.log_path.is_file() else 0
        operator.start(
            argv=[
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--",
                "sh",
                "-c",
                'mount --bind "$0" /etc/hosts && exec "$@"',
                str(hosts),
                str(self.bin / "keda"),
                "--leader-elect=false",
                "--metrics-bind-address",
                "0",
                "--health-probe-bind-address",
                "0",
                "--metrics-service-bind-address",
                metrics_service_address(self.keda_dir / "metrics-service"),
                "--cert-dir",
                str(self.certs),
                "--ca-dir",
                str(self.certs),
                "--zap-log-level",
                "info",
                "--enable-webhook-patching=false",
                "--enable-apiservice-patching=false",
            ],
            env=self._env(),
        )

        def working() -> bool:
            """The ScaledObject controller's workers started (its log since this start says so)."""
            with operator.log_path.open("rb") as log:
                log.seek(logged)
                return any(
                    b'"Starting workers"' in line and b'"controller":"scaledobject"' in line for line in log
                )

        if not until(working, within=WORKING_WITHIN, alive=lambda: operator.running):
            why = "exited" if not operator.running else f"started no workers within {WORKING_WITHIN:.0f} s"
            raise ClusterError(f"KEDA operator {why}; its log ends:\n{operator.log_tail()}")
        say("KEDA operator's ScaledObject controller works")

    def start_adapter(self, *, ip: str) -> None:
        """KEDA's metrics API server on ``ip``. It serves with KEDA's certificates, authenticates the
        aggregator by its proxy client certificate (kwokctl's CA, from
        kube-system/extension-apiserver-authentication) and asks the API server to authorize. Its port
        cannot be 0 (the Service must name it): one is held (``PortReservation`` on ``ip``) until the
        server listens on it (Go's listeners set ``SO_REUSEADDR``), another if it is taken anyway."""
        adapter = self.adapter
        if adapter.running:
            say(f"KEDA metrics API server already running (pid {adapter.pid})")
            return
        for _ in range(ADAPTER_ATTEMPTS):
            reservation = processes.PortReservation(host=ip)
            try:
                if self._serve_adapter(adapter, ip=ip, port=reservation.port):
                    return
            finally:
                reservation.close()
        raise ClusterError(f"KEDA metrics API server found no free port in {ADAPTER_ATTEMPTS} tries")

    def _serve_adapter(self, adapter: processes.Daemon, *, ip: str, port: int) -> bool:
        say(f"starting KEDA metrics API server on {ip}:{port} (log: {adapter.log_path})")
        kubeconfig = str(self.kubeconfig)
        adapter.start(
            argv=[
                str(self.bin / "keda-adapter"),
                *("--kubeconfig", kubeconfig, "--lister-kubeconfig", kubeconfig),
                *("--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig),
                *("--bind-address", ip, "--secure-port", str(port), "--cert-dir", str(self.certs)),
                *("--tls-cert-file", str(self.certs / "tls.crt")),
                *("--tls-private-key-file", str(self.certs / "tls.key")),
                "--metrics-service-address",
                metrics_service_address(self.keda_dir / "metrics-service"),
                *("--metrics-service-grpc-authority", f"keda-operator.{KEDA_NAMESPACE}.svc"),
                *("--port", "0"),
            ],
            env=self._env(),
        )
        ca = (self.certs / "ca.crt").read_bytes()
        self.must(
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            "-",
            stdin=manifest(adapter_manifest(ip=ip, port=port, ca_bundle=ca)),
        )

        def served() -> bool:
            answer = self.kubectl(PROBE, "get", "--raw", "/apis/external.metrics.k8s.io/v1beta1")
            return answer.returncode == 0 and "externalmetrics" in answer.stdout

        if until(served, within=AGGREGATED_WITHIN, alive=lambda: adapter.running):
            say("KEDA metrics API server serves external.metrics.k8s.io/v1beta1 through the aggregator")
            return True
        log = adapter.log_tail()
        if not adapter.running:
            if os.strerror(errno.EADDRINUSE).lower() in log.lower():
                adapter.stop(grace=STOP_GRACE)
                return False
            raise ClusterError(f"KEDA metrics API server exited; its log ends:\n{log}")
        status = self.kubectl("get", "apiservice", "v1beta1.external.metrics.k8s.io", "-o", "yaml")
        adapter.stop(grace=STOP_GRACE)
        raise ClusterError(
            f"external.metrics.k8s.io/v1beta1 not served through the aggregator within "
            f"{AGGREGATED_WITHIN:.0f} s; the APIService:\n{status.stdout}\nthe server's log ends:\n{log}"
        )

    def down(self) -> None:
        for daemon in (self.adapter, self.operator):
            pid = daemon.pid
            if daemon.stop(grace=STOP_GRACE):
                say(f"stopped {daemon.name} (pid {pid})")
        shutil.rmtree(self.keda_dir, ignore_errors=True)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(
        prog="python -m noctaya.dev.cluster", description=__doc__.splitlines()[0] if __doc__ else None
    )
    top.add_argument("--bin", type=pathlib.Path, required=True, help="the directory of the binaries")
    top.add_argument("--state", type=pathlib.Path, required=True, help="the cluster's state directory")
    top.add_argument(
        "--kubeconfig", type=pathlib.Path, help="the cluster's kubeconfig (default: <state>/kubeconfig)"
    )
    commands = top.add_subparsers(dest="command", required=True)
    up = commands.add_parser("up", help="wait for the API server; node, CRDs; start KEDA (idempotent)")
    up.add_argument(
        "--crds", type=pathlib.Path, action="append", default=[], help="a directory of CRDs to apply"
    )
    up.add_argument(
        "--host-ip",
        default="",
        help="the non-loopback address KEDA's metrics API server listens on (default: the host's first)",
    )
    commands.add_parser("down", help="stop what up started (idempotent)")
    tryout = commands.add_parser(
        "try",
        help="run the operator, each LLMService's gateway and a model server per Ready backend Pod on "
        "this host against the cluster and its KEDA, until Ctrl-C",
    )
    pods.add_arguments(tryout)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    plane = ControlPlane(
        bin=args.bin, state=args.state, kubeconfig=args.kubeconfig or args.state / "kubeconfig"
    )
    if args.command == "try":
        return pods.main(
            kubectl=str(plane.bin / "kubectl"),
            kubeconfig=plane.kubeconfig,
            hosts=plane.hosts,
            state=plane.state,
            args=args,
        )
    try:
        if args.command == "up":
            plane.up(crds=args.crds, host_ip=host_ip(args.host_ip))
        else:
            plane.down()
    except (ClusterError, certificates.CertificateError, OSError) as exc:
        print(f"cluster: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
