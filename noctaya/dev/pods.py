"""The local control plane's Pods as processes on this host (``scripts/cluster.sh try``).

KWOK reports Pods Running and Ready but runs nothing in them, so on the cluster of
``scripts/cluster.sh`` an LLMService is reconciled into objects that nothing serves. :class:`LocalPods`
runs what those Pods would run, on this host, against the same API server and KEDA:

- the operator (``noctaya operator`` with the cluster's kubeconfig, one replica, no Lease);
- for each LLMService whose gateway ConfigMap the operator rendered, ``noctaya gateway`` with that
  configuration, only moved to loopback addresses (:func:`gateway_config`): its listen and scaler
  addresses on an address of its own (one per cluster and service, so it stays the same from run to
  run), its ``backendUrl`` and engine-metrics host on the backend's address. The rendered
  ``scalerAddress`` host (``<name>-scaler.<ns>.svc``) is mapped to the gateway's address in the hosts
  file KEDA's operator resolves names with (:class:`HostsFile`), so real KEDA reaches the
  ExternalScaler and scales the backend Deployment;
- for each backend Pod KWOK reports Ready, a model server (the fake engine unless ``--backend-cmd``
  says otherwise) on a free loopback port, behind a local Service (:mod:`noctaya.dev.service`) on the
  backend's address and rendered port that round-robins over the Ready Pods' servers as kube-proxy
  would. A Pod that goes (KEDA scaled down) has its server stopped, as the kubelet stops a container.

Nothing the operator applied is edited. The cluster is read with the cluster's ``kubectl`` every
:data:`POLL` seconds (bounded by :data:`KUBECTL_TIMEOUT`; this package imports no Kubernetes client).
A gateway or model server that exits is started again after a backoff (1 s doubling to 30 s); the
operator exiting ends the command (exit 1, its log's last lines shown). SIGINT or SIGTERM stops every
child (SIGTERM, SIGKILL after :data:`STOP_GRACE`) and takes the hosts file's lines back out; exit 0.
Logs and the written gateway configurations are in the run directory (default ``<state>/try``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import ipaddress
import json
import os
import pathlib
import random
import re
import shlex
import signal
import sys
import time
import urllib.parse
from collections.abc import Iterable
from typing import Any, Final

import yaml

from noctaya.dev import processes, service

POLL: Final = 1.0
KUBECTL_TIMEOUT: Final = 30.0
MAX_LISTING_BYTES: Final = 64 * 1024 * 1024
STOP_GRACE: Final = 15.0
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 30.0
ENGINE_START_TIMEOUT: Final = 600.0  # a real engine may load a model for minutes
SERVICE_LABEL: Final = "serving.noctaya.io/llmservice"
COMPONENT_LABEL: Final = "app.kubernetes.io/component"
HOSTS_MARK: Final = "# noctaya: local Pod"
DEFAULT_BACKEND: Final = (
    f"{shlex.quote(sys.executable)} -m noctaya.dev.fake_engine --host {{host}} --port {{port}} "
    "--model {model} --ready-delay 2s --tokens 16 --token-delay 50ms"
)
_DNS_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$")


class PodError(Exception):
    """What the cluster holds cannot be run here (the message says which object and why)."""


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def say(message: str) -> None:
    """One message to stderr; control characters (from a log, kubectl, an object) escaped."""
    shown = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", message)
    print(f"cluster: {shown}", file=sys.stderr, flush=True)


def loopback(seed: str | None = None) -> str:
    """An address of 127.0.0.0/8 (every one is local): random, or the same for the same ``seed``."""
    if seed is None:
        draw = random.SystemRandom()
        a, b, c = draw.randint(1, 254), draw.randint(1, 254), draw.randint(2, 254)
    else:
        digest = hashlib.sha256(seed.encode("utf-8")).digest()
        a, b, c = 1 + digest[0] % 254, 1 + digest[1] % 254, 2 + digest[2] % 253
    return f"127.{a}.{b}.{c}"


def _port(listen: object, *, field: str) -> str:
    if not isinstance(listen, str) or not listen.rpartition(":")[2].isdigit():
        raise PodError(f"{field}: {listen!r} is not [host]:port")
    return listen.rpartition(":")[2]


def gateway_config(rendered: dict[str, Any], *, address: str, engine_address: str) -> dict[str, Any]:
    """The rendered gateway configuration run on this host: ``listen`` and ``scaler.listen`` on
    ``address``, ``backendUrl`` and ``scaler.engine.host`` on ``engine_address``, every port and every
    other field as rendered."""
    config = dict(rendered)
    scaler = config.get("scaler")
    if not isinstance(scaler, dict):
        raise PodError("scaler: missing (the gateway's ExternalScaler)")
    scaler = dict(scaler)
    backend = urllib.parse.urlsplit(str(config.get("backendUrl", "")))
    try:
        backend_port = backend.port
    except ValueError:
        backend_port = None
    if backend.scheme not in ("http", "https") or backend_port is None:
        raise PodError(f"backendUrl: {config.get('backendUrl')!r} is not http(s)://host:port")
    config["listen"] = f"{address}:{_port(config.get('listen'), field='listen')}"
    scaler["listen"] = f"{address}:{_port(scaler.get('listen'), field='scaler.listen')}"
    config["backendUrl"] = f"{backend.scheme}://{engine_address}:{backend_port}"
    engine = scaler.get("engine")
    if isinstance(engine, dict):  # the headless Service's name answers the Ready Pods: here the Service
        scaler["engine"] = {**engine, "host": engine_address}
    config["scaler"] = scaler
    return config


def scaler_host(scaled_object: dict[str, Any]) -> str:
    """The host of the ScaledObject's ``external-push`` ``scalerAddress`` (``<name>-scaler.<ns>.svc``)."""
    for trigger in (scaled_object.get("spec") or {}).get("triggers") or []:
        address = ((trigger or {}).get("metadata") or {}).get("scalerAddress")
        if isinstance(address, str) and address:
            host = address.rpartition(":")[0]
            if not _DNS_NAME.fullmatch(host):
                raise PodError(f"scalerAddress: {address!r} does not name a host")
            return host
    raise PodError("spec.triggers: no trigger with a scalerAddress")


class HostsFile:
    """The hosts file KEDA's operator resolves names with (bind-mounted over its /etc/hosts, so it is
    edited in place, never replaced). A line added here carries :data:`HOSTS_MARK`."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path

    def map(self, *, host: str, address: str) -> None:
        """Resolve ``host`` to ``address`` (a line appended unless it is there)."""
        if not _DNS_NAME.fullmatch(host):
            raise PodError(f"{host!r} is not a host name")
        ipaddress.IPv4Address(address)
        line = f"{address} {host}  {HOSTS_MARK}"
        with self.path.open("a+", encoding="utf-8") as hosts:
            hosts.seek(0)
            if line in hosts.read().splitlines():
                return
            hosts.write(line + "\n")

    def unmap(self, hosts: Iterable[str]) -> None:
        """Take out the marked lines naming any of ``hosts`` (the file rewritten in place)."""
        names = set(hosts)
        if not names:
            return
        with self.path.open("r+", encoding="utf-8") as file:
            lines = file.read().splitlines()
            kept = [
                line
                for line in lines
                if not (line.endswith(HOSTS_MARK) and names.intersection(line.split()[1:2]))
            ]
            file.seek(0)
            file.write("".join(f"{line}\n" for line in kept))
            file.truncate()


def gateway_argv(config: pathlib.Path, *, log_level: str) -> list[str]:
    return [sys.executable, "-m", "noctaya", "gateway", "--config", str(config), "--log-level", log_level]


def backend_argv(template: str, *, host: str, port: int, model: str) -> list[str]:
    """``--backend-cmd`` for one Pod: ``{host}``, ``{port}`` and ``{model}`` filled in."""
    if "{port}" not in template:
        raise ValueError("the backend command must contain the {port} placeholder")
    argv = [
        word.replace("{host}", host).replace("{port}", str(port)).replace("{model}", model)
        for word in shlex.split(template)
    ]
    if not argv:
        raise ValueError("the backend command is empty")
    return argv


def _ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


@dataclasses.dataclass(frozen=True, kw_only=True)
class Settings:
    kubectl: tuple[str, ...]  # the argv prefix: the binary and ``--kubeconfig``
    kubeconfig: pathlib.Path
    hosts: pathlib.Path
    run_dir: pathlib.Path
    backend_cmd: str = DEFAULT_BACKEND
    namespace: str | None = None
    operator: bool = True
    log_level: str = "INFO"


@dataclasses.dataclass(eq=False)
class Restarting:
    """A child restarted with a backoff when it exits on its own."""

    child: processes.Child
    backoff: float = BACKOFF_FIRST
    next_start: float = 0.0
    reported: bool = False

    def due(self, now: float) -> bool:
        return not self.child.running and now >= self.next_start

    def exited(self, now: float) -> None:
        self.next_start = now + self.backoff
        self.backoff = min(self.backoff * 2, BACKOFF_MAX)


@dataclasses.dataclass(eq=False)
class Backend:
    pod: str
    #: the model server's port, held (bound, never listening) until the server has ended for good
    reservation: processes.PortReservation
    process: Restarting
    joined: bool = False

    @property
    def port(self) -> int:
        return self.reservation.port


@dataclasses.dataclass(eq=False)
class Hosted:
    """One LLMService's processes on this host."""

    namespace: str
    name: str
    address: str
    engine_address: str
    model: str
    config_path: pathlib.Path
    config_text: str
    front: service.Service
    gateway: Restarting
    backends: dict[str, Backend] = dataclasses.field(default_factory=dict)
    scaler_host: str | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


class LocalPods:
    def __init__(self, *, settings: Settings) -> None:
        self.settings = settings
        self.hosts = HostsFile(settings.hosts)
        self.hosted: dict[tuple[str, str], Hosted] = {}
        self.operator: processes.Child | None = None
        self.refused: dict[tuple[str, str], str] = {}  # what was said about a service not run here
        self._tasks: set[asyncio.Task[None]] = set()
        self._server = self._api_server()
        self._failure = ""  # the last kubectl failure said

    def _api_server(self) -> str:
        try:
            config = yaml.safe_load(self.settings.kubeconfig.read_text(encoding="utf-8"))
            return str(config["clusters"][0]["cluster"]["server"])
        except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError) as exc:
            raise PodError(f"kubeconfig {self.settings.kubeconfig}: no cluster server ({exc})") from None

    async def run(self, stop: asyncio.Event) -> int:
        self.settings.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            if self.settings.operator:
                await self._start_operator()
            where = f"namespace {self.settings.namespace}" if self.settings.namespace else "all namespaces"
            say(f"watching LLMServices in {where}; Ctrl-C stops everything (logs: {self.settings.run_dir})")
            while not stop.is_set():
                listing = await self._observe()
                if listing is not None:
                    await self._reconcile(listing)
                if self.operator is not None and not self.operator.running:
                    code, tail = self.operator.returncode, self.operator.log_tail()
                    say(f"the operator exited ({code}); its log ends:\n{tail}")
                    return 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), POLL)
            return 0
        finally:
            await self._stop_all()

    async def _start_operator(self) -> None:
        argv = [
            sys.executable, "-m", "noctaya", "operator", "--kubeconfig", str(self.settings.kubeconfig),
            "--no-leader-election", "--health-listen", "", "--log-level", self.settings.log_level,
        ]  # fmt: skip
        if self.settings.namespace:
            argv += ["--namespace", self.settings.namespace]
        self.operator = processes.Child(
            name="operator", argv=argv, log_path=self.settings.run_dir / "operator.log"
        )
        await self.operator.start()
        pid, log = self.operator.pid, self.operator.log_path
        say(f"operator running against {self._server} (pid {pid}, log: {log})")

    async def _observe(self) -> list[dict[str, Any]] | None:
        scope = ["-n", self.settings.namespace] if self.settings.namespace else ["-A"]
        argv = [
            *self.settings.kubectl, "get", "configmaps,scaledobjects.keda.sh,pods", *scope,
            "-l", SERVICE_LABEL, "-o", "json", f"--request-timeout={KUBECTL_TIMEOUT:.0f}s",
        ]  # fmt: skip
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(process.communicate(), KUBECTL_TIMEOUT + 5)
        except TimeoutError:
            process.kill()
            await process.wait()
            say(f"kubectl get timed out ({KUBECTL_TIMEOUT:.0f} s); trying again")
            return None
        if process.returncode is not None and process.returncode < 0:
            return None  # ended by a signal (a Ctrl-C reaches the whole foreground group)
        if process.returncode != 0:
            failure = err.decode("utf-8", "replace").strip()[-500:]
            if failure != self._failure:  # said once, not every second
                self._failure = failure
                say(f"kubectl get failed (trying again every {POLL:g} s): {failure}")
            return None
        self._failure = ""
        if len(out) > MAX_LISTING_BYTES:
            say(f"kubectl get answered more than {MAX_LISTING_BYTES} bytes; narrow it with --namespace")
            return None
        try:
            items = json.loads(out).get("items")
        except (ValueError, AttributeError):
            say("kubectl get answered no JSON list")
            return None
        return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else None

    async def _reconcile(self, listing: list[dict[str, Any]]) -> None:
        groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for item in listing:
            meta = item.get("metadata") or {}
            owner = (meta.get("labels") or {}).get(SERVICE_LABEL)
            if isinstance(owner, str) and isinstance(meta.get("namespace"), str):
                groups.setdefault((meta["namespace"], owner), []).append(item)
        for key in [k for k in self.hosted if k not in groups]:
            self._spawn(self._retire(self.hosted.pop(key), why="its gateway ConfigMap is gone"))
        now = time.monotonic()
        for key, items in groups.items():
            try:
                await self._host(key, items, now=now)
            except PodError as exc:
                if self.refused.get(key) != str(exc):
                    self.refused[key] = str(exc)
                    say(f"{key[0]}/{key[1]}: not run here: {exc}")

    def _named(self, items: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any] | None:
        return next(
            (i for i in items if i.get("kind") == kind and (i.get("metadata") or {}).get("name") == name),
            None,
        )

    async def _host(self, key: tuple[str, str], items: list[dict[str, Any]], *, now: float) -> None:
        name = key[1]
        configmap = self._named(items, "ConfigMap", f"{name}-gateway")
        if configmap is None:
            if key in self.hosted:
                self._spawn(self._retire(self.hosted.pop(key), why="its gateway ConfigMap is gone"))
            return
        text = (configmap.get("data") or {}).get("config.yaml")
        hosted = self.hosted.get(key)
        if hosted is None or hosted.config_text != text:
            hosted = await self._configure(key, text, hosted=hosted)
        self.refused.pop(key, None)
        scaled_object = self._named(items, "ScaledObject", name)
        if scaled_object is not None and hosted.scaler_host is None:
            hosted.scaler_host = scaler_host(scaled_object)
            self.hosts.map(host=hosted.scaler_host, address=hosted.address)
            say(f"{hosted.key}: KEDA reaches its ExternalScaler: {hosted.scaler_host} -> {hosted.address}")
        await self._keep(hosted.gateway, now=now, what=f"{hosted.key}: gateway")
        pods = {
            str(p["metadata"]["name"]): p
            for p in items
            if p.get("kind") == "Pod"
            and (p["metadata"].get("labels") or {}).get(COMPONENT_LABEL) == "backend"
        }
        for pod_name, backend in list(hosted.backends.items()):
            pod = pods.get(pod_name)
            if pod is None or pod["metadata"].get("deletionTimestamp"):
                del hosted.backends[pod_name]
                self._spawn(self._stop_backend(hosted, backend))
        for pod_name, pod in pods.items():
            if (
                pod_name not in hosted.backends
                and _ready(pod)
                and not pod["metadata"].get("deletionTimestamp")
            ):
                hosted.backends[pod_name] = self._backend(hosted, pod_name)
        for backend in hosted.backends.values():
            if not backend.process.child.running:
                hosted.front.remove(backend.pod)
            started = await self._keep(backend.process, now=now, what=f"{hosted.key}: Pod {backend.pod}")
            if started:
                hosted.front.remove(backend.pod)
                backend.joined = False
                self._spawn(self._join(hosted, backend))

    async def _configure(self, key: tuple[str, str], text: object, *, hosted: Hosted | None) -> Hosted:
        namespace, name = key
        if not isinstance(text, str):
            raise PodError(f"ConfigMap {name}-gateway: no config.yaml")
        try:
            rendered = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise PodError(f"ConfigMap {name}-gateway: config.yaml is not YAML ({exc})") from None
        if not isinstance(rendered, dict):
            raise PodError(f"ConfigMap {name}-gateway: config.yaml is not a mapping")
        for field, why in (
            ("apiKeyFile", "its client API key Secret is mounted in the Pod only"),
            ("report", "it reports to an aggregate scaler (more than one gateway)"),
        ):
            if rendered.get(field) is not None:
                raise PodError(f"{field} is set: {why}")
        if (rendered.get("scaler") or {}).get("tls") is not None:
            raise PodError("scaler.tls is set: its certificates are mounted in the Pod only")
        seed = f"{self._server} {namespace}/{name}"
        address = hosted.address if hosted else loopback(f"{seed} gateway")
        engine_address = hosted.engine_address if hosted else loopback(f"{seed} backend")
        config = gateway_config(rendered, address=address, engine_address=engine_address)
        path = self.settings.run_dir / f"gateway-{namespace}-{name}.yaml"
        written = path.with_suffix(".yaml.tmp")
        written.write_text(yaml.safe_dump(config), encoding="utf-8")
        written.replace(path)  # the gateway reloads its file (configReloadInterval)
        backend_port = int(urllib.parse.urlsplit(config["backendUrl"]).port or 0)
        if hosted is not None:
            hosted.config_text = text
            if hosted.front.port != backend_port:
                raise PodError("the backend port changed: stop and start this command again")
            say(f"{hosted.key}: its gateway configuration changed; the gateway reloads it")
            return hosted
        front = service.Service(host=engine_address, port=backend_port)
        try:
            await front.start()
        except OSError as exc:
            raise PodError(f"the backend's address {engine_address}:{backend_port}: {exc}") from None
        gateway = processes.Child(
            name=f"gateway {namespace}/{name}",
            argv=gateway_argv(path, log_level=self.settings.log_level),
            log_path=self.settings.run_dir / f"gateway-{namespace}-{name}.log",
        )
        model = rendered.get("servedModel")
        hosted = Hosted(
            namespace=namespace,
            name=name,
            address=address,
            engine_address=engine_address,
            model=model if isinstance(model, str) and model else name,
            config_path=path,
            config_text=text,
            front=front,
            gateway=Restarting(child=gateway),
        )
        self.hosted[key] = hosted
        say(
            f"{hosted.key}: gateway at http://{config['listen']}/v1 (model {hosted.model!r}), "
            f"its backend Pods' model servers behind {engine_address}:{backend_port}"
        )
        return hosted

    async def _keep(self, restarting: Restarting, *, now: float, what: str) -> bool:
        """Start the child if it is due; True when it was started."""
        child = restarting.child
        if child.running:
            return False
        if child.process is not None and not restarting.reported:
            restarting.reported = True
            restarting.exited(now)
            say(f"{what} exited ({child.returncode}), started again in {restarting.next_start - now:.0f} s; "
                f"its log ends:\n{child.log_tail()}")  # fmt: skip
        if not restarting.due(now):
            return False
        await child.start()
        restarting.reported = False
        return True

    def _backend(self, hosted: Hosted, pod: str) -> Backend:
        reservation = processes.PortReservation()
        port = reservation.port
        argv = backend_argv(self.settings.backend_cmd, host="127.0.0.1", port=port, model=hosted.model)
        child = processes.Child(
            name=f"model server of {pod}",
            argv=argv,
            log_path=self.settings.run_dir / f"backend-{hosted.namespace}-{pod}.log",
        )
        say(f"{hosted.key}: Pod {pod} Ready: its model server on 127.0.0.1:{port} (log: {child.log_path})")
        return Backend(pod=pod, reservation=reservation, process=Restarting(child=child))

    async def _join(self, hosted: Hosted, backend: Backend) -> None:
        """Add the Pod's server to the Service once its port accepts (a readiness the Pod reports
        without it; the gateway probes the model's own readiness through the Service)."""
        deadline = time.monotonic() + ENGINE_START_TIMEOUT
        child = backend.process.child
        while child.running and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", backend.port)
                writer.close()
                with contextlib.suppress(OSError):
                    await writer.wait_closed()
                if hosted.backends.get(backend.pod) is backend:
                    hosted.front.add(name=backend.pod, port=backend.port)
                    backend.joined = True
                    backend.process.backoff = BACKOFF_FIRST
                return
            await asyncio.sleep(0.1)
        if child.running:
            say(f"{hosted.key}: Pod {backend.pod}: its model server took no connection in "
                f"{ENGINE_START_TIMEOUT:.0f} s")  # fmt: skip

    async def _stop_backend(self, hosted: Hosted, backend: Backend) -> None:
        hosted.front.forget(backend.pod)
        code = await backend.process.child.stop(grace=STOP_GRACE)
        backend.reservation.close()
        say(f"{hosted.key}: Pod {backend.pod} gone: its model server stopped ({code})")

    async def _retire(self, hosted: Hosted, *, why: str | None) -> None:
        if why is not None:
            say(f"{hosted.key}: {why}: stopping its gateway and model servers")
        await asyncio.gather(
            hosted.gateway.child.stop(grace=STOP_GRACE),
            *(b.process.child.stop(grace=STOP_GRACE) for b in hosted.backends.values()),
        )
        for backend in hosted.backends.values():
            backend.reservation.close()
        await hosted.front.stop()
        if hosted.scaler_host:
            self.hosts.unmap([hosted.scaler_host])

    def _spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _stop_all(self) -> None:
        hosted, self.hosted = list(self.hosted.values()), {}
        if hosted or self.operator is not None:
            say("stopping every gateway, model server and the operator")
        await asyncio.gather(
            *self._tasks, *(self._retire(h, why=None) for h in hosted), return_exceptions=True
        )
        if self.operator is not None:
            await self.operator.stop(grace=STOP_GRACE)
        say("stopped")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--backend-cmd",
        default=DEFAULT_BACKEND,
        help="the command each Ready backend Pod runs here, with {port} (and {host}, {model}: the "
        "service's served model name); default: the built-in fake engine",
    )
    parser.add_argument(
        "--namespace", default=None, help="only LLMServices of this namespace (default: all namespaces)"
    )
    parser.add_argument(
        "--run-dir",
        type=pathlib.Path,
        default=None,
        help="logs and gateway configurations (default <state>/try)",
    )
    parser.add_argument(
        "--no-operator",
        action="store_true",
        help="run no operator here (one reconciles this cluster already; default: run one)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level of the operator and the gateways (default %(default)s)",
    )


def main(*, kubectl: str, kubeconfig: pathlib.Path, hosts: pathlib.Path, state: pathlib.Path,
         args: argparse.Namespace) -> int:  # fmt: skip
    """Run until SIGINT or SIGTERM: 0 then, 1 when the operator exits, 2 for bad options."""
    try:
        backend_argv(args.backend_cmd, host="127.0.0.1", port=1, model="m")
    except ValueError as exc:
        say(f"error: --backend-cmd: {exc}")
        return 2
    if args.namespace is not None and not _DNS_NAME.fullmatch(args.namespace):
        say(f"error: --namespace: {args.namespace!r} is not a namespace name")
        return 2
    if not hosts.is_file():
        say(f"error: no KEDA hosts file at {hosts}: bring the cluster up first (scripts/cluster.sh up)")
        return 1
    # the children (the operator reads NOCTAYA_<FLAG>) take their settings from their flags only
    for name in [n for n in os.environ if n.startswith("NOCTAYA_")]:
        del os.environ[name]
    settings = Settings(
        kubectl=(kubectl, "--kubeconfig", str(kubeconfig)),
        kubeconfig=kubeconfig,
        hosts=hosts,
        run_dir=args.run_dir or state / "try",
        backend_cmd=args.backend_cmd,
        namespace=args.namespace,
        operator=not args.no_operator,
        log_level=args.log_level,
    )

    async def run() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        return await LocalPods(settings=settings).run(stop)

    try:
        return asyncio.run(run())
    except (PodError, OSError) as exc:
        say(f"error: {exc}")
        return 1
