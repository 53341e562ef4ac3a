"""The whole scale-from-zero lifecycle on one machine, as ``noctaya dev`` runs it.

Pieces and how they connect (the same shape as in a cluster):

    client -> [gateway(s)] -> backend "Service" (round robin) -> replica processes
                   |  demand                                          ^
                   v                                                  | scale
      co-located ExternalScaler (1 gateway) or aggregate scaler  <- local KEDA (gRPC, as KEDA)

Gateways and the aggregate scaler are child processes running the real commands
(``noctaya gateway --config``, ``noctaya scaler --config``); this module writes their configs and
``gateways`` keeps the gateways up (one that exits is replaced, like a Deployment replaces a Pod).
With several gateways a second local Service on the public port spreads clients over the gateways
that answer ``/healthz``. Stopping (SIGINT/SIGTERM) stops the local KEDA, then the gateways (they
drain), the scaler and the replicas, and only then exits: no child outlives the runner.
``state_file`` (JSON) mirrors the live state for scripts and tests.

Logs, configs and the scaler token go to a run directory: a fresh temporary one, removed at exit
unless ``keep_run_dir`` (then its path is the last line printed); a ``run_dir`` given is the caller's
and is always kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import pathlib
import secrets
import shutil
import signal
import sys
import tempfile
import time
from typing import Any

import aiohttp

from noctaya.contract import engines, fields
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract
from noctaya.dev import certificates, gateways, keda, processes, replicas, service, view
from noctaya.scaler import credentials

logger = logging.getLogger(__name__)

STATUS_INTERVAL = 0.25


@dataclasses.dataclass(frozen=True)
class Settings:
    backend_cmd: str
    listen_host: str = "127.0.0.1"
    listen_port: int = 8080
    readiness_path: str = "/health"
    gateways: int = 1
    scaling: keda.Scaling = dataclasses.field(
        default_factory=lambda: keda.Scaling(name="dev", namespace="default")
    )
    target: int = 10
    #: the gateways' tunables (``readiness_path`` is taken from the field above)
    gateway: gateway_contract.GatewaySettings = dataclasses.field(
        default_factory=gateway_contract.GatewaySettings
    )
    api_key_file: str | None = None
    scaler_tls: bool = False
    member_ttl: str = "10s"
    #: the gateways' report period to the aggregate scaler, at most a quarter of ``member_ttl`` (a live
    #: member reporting less often than its expiry would flap out of the aggregate between reports)
    report_interval: str = "2s"
    replica_drain_timeout: float = 30.0
    replica_stop_grace: float = 10.0
    gateway_stop_grace: float = 30.0
    service_port: int = 0
    #: logs and configs; None: a fresh temporary directory, removed at exit unless ``keep_run_dir``
    run_dir: pathlib.Path | None = None
    keep_run_dir: bool = False
    state_file: pathlib.Path | None = None
    log_level: str = "WARNING"
    #: read the engines' own metrics (its ``endpointsFile`` is replaced by the runner's file of Ready
    #: replicas); None: the gateways' count alone
    engine: engines.EngineSignalSection | None = None
    #: replica exits in a row, none Ready, that make a crash loop (waiting clients are answered the
    #: last exit at once, ``replicas``); 0: never
    crash_loop_exits: int = replicas.CRASH_LOOP_EXITS


def _python_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "noctaya", *args]


class DevRunner:
    def __init__(self, *, settings: Settings, out: view.View) -> None:
        self.settings = settings
        self.view = out
        #: the directory is ours to remove only when we made it and were not asked to keep it
        self.remove_run_dir = settings.run_dir is None and not settings.keep_run_dir
        if settings.run_dir is None:
            self.run_dir = pathlib.Path(tempfile.mkdtemp(prefix="noctaya-dev-"))
        else:
            self.run_dir = settings.run_dir
            self.run_dir.mkdir(parents=True, exist_ok=True)
        self.backend = service.Service(port=settings.service_port)
        # with several gateways, a public Service on the listen address spreads clients over them
        front = (
            service.Service(host=settings.listen_host, port=settings.listen_port)
            if settings.gateways > 1
            else None
        )
        self.deployment = replicas.Deployment(
            command=settings.backend_cmd,
            readiness_path=settings.readiness_path,
            service=self.backend,
            log_dir=self.run_dir / "replicas",
            drain_timeout=settings.replica_drain_timeout,
            stop_grace=settings.replica_stop_grace,
            crash_loop_exits=settings.crash_loop_exits,
            on_event=self.view.event,
        )
        self.gateways = gateways.Gateways(front=front, on_event=self.view.event)
        self.scaler: processes.Child | None = None
        self.scaler_report_port = 0
        self._ports: list[processes.PortReservation] = []  # held until the runner stops
        self.grpc_port = self._reserve_port()
        #: the Ready replicas' host:port, one a line: what a headless Service's DNS answers in a cluster
        self.endpoints_file = self.run_dir / "engine-endpoints"
        self._endpoints: list[str] | None = None
        self.engine: dict[str, Any] | None = None  # the last engine signal seen
        self.keda: keda.LocalKeda | None = None
        self.bundle: certificates.Bundle | None = None
        self._session: aiohttp.ClientSession | None = None

    # ---------------------------------------------------------------- public
    @property
    def url(self) -> str:
        host = self.settings.listen_host
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        return f"http://{host}:{self.settings.listen_port}/v1"

    async def run(self, stop: asyncio.Event) -> int:
        """Run until ``stop`` is set; raises ``gateways.StartError`` when a child does not come up."""
        session = self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1.0))
        try:
            async with asyncio.TaskGroup() as group:
                keda_task = await self._start(group, session=session)
                self._announce()
                group.create_task(self._status_forever(session=session), name="noctaya-dev-status")
                group.create_task(self.gateways.supervise(session=session), name="noctaya-dev-gateways")
                await stop.wait()
                # order: no more scaling, gateways drain (replicas still serve them), scaler, replicas
                self.view.event("stopping: gateways drain, then the scaler and the replicas stop")
                keda_task.cancel()
                await self._stop_gateways_and_scaler()
                raise _Stop
        except* _Stop:
            pass
        finally:
            await self._stop_all()
            self.view.event("stopped: no process left behind")
            if self.remove_run_dir:
                shutil.rmtree(self.run_dir, ignore_errors=True)
            else:
                self.view.event(f"logs and configs kept in {self.run_dir}")
            self.view.close()
        return 0

    # ---------------------------------------------------------------- start
    def _reserve_port(self) -> int:
        """A port for one of our own children, held so that nothing else takes it before it binds."""
        reservation = processes.PortReservation()
        self._ports.append(reservation)
        return reservation.port

    async def _start(self, group: asyncio.TaskGroup, *, session: aiohttp.ClientSession) -> asyncio.Task[None]:
        s = self.settings
        await self.backend.start()
        group.create_task(self.deployment.run(), name="noctaya-dev-deployment")
        if s.scaler_tls:
            self.bundle = await asyncio.to_thread(certificates.make_bundle, directory=self.run_dir / "pki")
        front = self.gateways.front
        if front is not None:
            await self._start_scaler(session=session)
            await front.start()
        for index in range(s.gateways):
            port = self._reserve_port() if front is not None else s.listen_port
            self.gateways.add(self._gateway(index=index, port=port))
        await self.gateways.start_all(session=session)
        self.keda = keda.LocalKeda(
            address=f"127.0.0.1:{self.grpc_port}",
            scaling=s.scaling,
            target=self.deployment,
            credentials=None
            if self.bundle is None
            else credentials.channel_credentials(
                ca_file=str(self.bundle.ca_cert),
                cert_file=str(self.bundle.client_cert),
                key_file=str(self.bundle.client_key),
            ),
            server_name="localhost" if self.bundle is not None else None,
            on_event=self.view.event,
        )
        return group.create_task(self.keda.run(), name="noctaya-dev-keda")

    def _tls(self) -> fields.TlsFiles | None:
        if self.bundle is None:
            return None
        return fields.TlsFiles(
            cert_file=str(self.bundle.server_cert),
            key_file=str(self.bundle.server_key),
            ca_file=str(self.bundle.ca_cert),
        )

    @property
    def service_ref(self) -> fields.ServiceRef:
        return fields.ServiceRef(name=self.settings.scaling.name, namespace=self.settings.scaling.namespace)

    @property
    def gateway_settings(self) -> gateway_contract.GatewaySettings:
        """The gateways' tunables; a cold ``GET /v1/models`` answers ``--served-model`` or, as the
        operator renders it, the service's name, and never wakes the backend."""
        s = self.settings
        served = s.gateway.served_model or s.scaling.name
        return s.gateway.model_copy(update={"readiness_path": s.readiness_path, "served_model": served})

    @property
    def engine_section(self) -> engines.EngineSignalSection | None:
        engine = self.settings.engine
        if engine is None:
            return None
        return engine.model_copy(update={"endpoints_file": str(self.endpoints_file)})

    def write_endpoints(self) -> None:
        """Keep the file of Ready replicas current (replaced whole, so a reader never sees half)."""
        ready = sorted(
            f"127.0.0.1:{r.port}" for r in self.deployment.replicas if r.phase is replicas.Phase.READY
        )
        if ready == self._endpoints:
            return
        tmp = self.endpoints_file.with_name(self.endpoints_file.name + ".tmp")
        tmp.write_text("".join(f"{e}\n" for e in ready))
        tmp.replace(self.endpoints_file)
        self._endpoints = ready

    def scaler_config(self) -> scaler_contract.ScalerConfig:
        """The aggregate scaler's config; a member's demand is bounded by one gateway's own bounds."""
        s = self.settings
        gateway = self.gateway_settings
        return scaler_contract.ScalerConfig(
            service=self.service_ref,
            grpc_listen=f"127.0.0.1:{self.grpc_port}",
            report_listen=f"127.0.0.1:{self.scaler_report_port}",
            target=s.target,
            metric_name=s.scaling.metric_name,
            token_file=str(self.run_dir / "scaler-token"),
            max_member_demand=gateway.max_queue + gateway.max_in_flight,
            member_ttl=fields.parse_seconds(s.member_ttl),
            tls=self._tls(),
            engine=self.engine_section,
        )

    async def _start_scaler(self, *, session: aiohttp.ClientSession) -> None:
        s = self.settings
        token = self.run_dir / "scaler-token"
        token.write_text(secrets.token_urlsafe(32))
        token.chmod(0o600)
        self.scaler_report_port = self._reserve_port()
        path = self.run_dir / "scaler.json"
        path.write_text(json.dumps(self.scaler_config().document(), indent=2))
        self.scaler = processes.Child(
            name="scaler",
            argv=_python_command("scaler", "--config", str(path), "--log-level", s.log_level),
            log_path=self.run_dir / "scaler.log",
        )
        await self.scaler.start()
        await gateways.wait_healthy(
            self.scaler, f"http://127.0.0.1:{self.scaler_report_port}/healthz", session=session
        )
        self.view.event(f"aggregate scaler up (reports :{self.scaler_report_port}, gRPC :{self.grpc_port})")

    def gateway_config(self, *, port: int) -> gateway_contract.GatewayConfig:
        """The config of a gateway listening on ``port``: co-located scaler, or reporting."""
        s = self.settings
        scaler: gateway_contract.ScalerSection | None = None
        report: gateway_contract.ReportSection | None = None
        if s.gateways > 1:
            report = gateway_contract.ReportSection(
                url=f"http://127.0.0.1:{self.scaler_report_port}",
                token_file=str(self.run_dir / "scaler-token"),
                interval=min(fields.parse_seconds(s.report_interval), fields.parse_seconds(s.member_ttl) / 4),
            )
        else:
            scaler = gateway_contract.ScalerSection(
                listen=f"127.0.0.1:{self.grpc_port}",
                target=s.target,
                metric_name=s.scaling.metric_name,
                tls=self._tls(),
                engine=self.engine_section,
            )
        return gateway_contract.GatewayConfig.wire(
            settings=self.gateway_settings,
            listen=f"{s.listen_host if s.gateways == 1 else '127.0.0.1'}:{port}",
            backend_url=self.backend.url,
            api_key_file=s.api_key_file,
            service=self.service_ref,
            scaler=scaler,
            report=report,
        )

    def _gateway(self, *, index: int, port: int) -> gateways.GatewayProcess:
        s = self.settings
        path = self.run_dir / f"gateway-{index}.json"
        path.write_text(json.dumps(self.gateway_config(port=port).document(), indent=2))
        child = processes.Child(
            name=f"gateway-{index}",
            argv=_python_command("gateway", "--config", str(path), "--log-level", s.log_level),
            log_path=self.run_dir / f"gateway-{index}.log",
        )
        return gateways.GatewayProcess(port=port, child=child)

    def _announce(self) -> None:
        s = self.settings
        lines = [
            f"noctaya dev: OpenAI-compatible endpoint at {self.url}",
            f'  from openai import OpenAI; client = OpenAI(base_url="{self.url}", api_key="...")'
            + (f"  (api_key: the key in {s.api_key_file})" if s.api_key_file else ""),
            f"  backend: {s.backend_cmd}",
            f"  scaling: min {s.scaling.min_replicas}, max {s.scaling.max_replicas}, target {s.target}, "
            f"cooldown {s.scaling.cooldown:g}s, polling {s.scaling.polling_interval:g}s, "
            f"{s.gateways} gateway(s){' + aggregate scaler' if s.gateways > 1 else ''}"
            f"{', scaler mTLS' if self.bundle else ''}",
            f"  logs and configs: {self.run_dir}",
        ]
        for line in lines:
            self.view.event(line)

    # ---------------------------------------------------------------- running
    async def _status_forever(self, *, session: aiohttp.ClientSession) -> None:
        while True:
            if self.settings.engine is not None:
                self.write_endpoints()
            await self.gateways.refresh(session=session)
            if self.settings.engine is not None:
                self.engine = await self._engine_document(session=session)
            snapshot = self.snapshot()
            self.view.status(snapshot)
            if self.settings.state_file is not None:
                self._write_state(snapshot)
            await asyncio.sleep(STATUS_INTERVAL)

    async def _engine_document(self, *, session: aiohttp.ClientSession) -> dict[str, Any] | None:
        """The engine signal as the process serving KEDA shows it: the only gateway's
        ``/noctaya/queue``, or the aggregate scaler's ``/healthz``."""
        if self.scaler is None:
            queues = [g.queue for g in self.gateways.members if g.queue]
            found = queues[0].get("engine") if queues else None
            return found if isinstance(found, dict) else None
        try:
            async with session.get(f"http://127.0.0.1:{self.scaler_report_port}/healthz") as response:
                body = await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError):
            return None
        found = body.get("engine") if isinstance(body, dict) else None
        return found if isinstance(found, dict) else None

    def snapshot(self) -> view.Snapshot:
        d = self.deployment
        seen = self.keda.seen if self.keda is not None else keda.Observation()
        queues = [g.queue for g in self.gateways.members if g.queue]
        return view.Snapshot(
            replicas_desired=d.desired,
            replicas_ready=d.ready,
            replicas_starting=d.count(replicas.Phase.STARTING),
            replicas_draining=d.count(replicas.Phase.DRAINING),
            demand=sum(int(q.get("demand", 0)) for q in queues),
            queued=sum(int(q.get("queued", 0)) for q in queues),
            in_flight=sum(int(q.get("inFlight", 0)) for q in queues),
            metric=seen.metric,
            target=seen.target,
            active=seen.active,
            activations=seen.activations,
            gateways_up=self.gateways.healthy,
            gateways=len(self.gateways.members),
            readiness="; ".join(
                f"{r.name}: {r.probe_error}" for r in d.replicas if r.probe_error and not replicas.leaving(r)
            ),
            **_failures(queues),
            next_warm_window=seen.schedule or None,
            engine=view.engine_summary(self.engine),
        )

    def state(self, snapshot: view.Snapshot) -> dict[str, Any]:
        seen = self.keda.seen if self.keda is not None else keda.Observation()
        return {
            "pid": os.getpid(),
            "url": self.url,
            "runDir": str(self.run_dir),
            "time": time.time(),
            "backendUrl": self.backend.url,
            "grpcPort": self.grpc_port,
            "scalerReportPort": self.scaler_report_port or None,
            "scalerPid": self.scaler.pid if self.scaler is not None else None,
            "status": dataclasses.asdict(snapshot),
            "keda": {
                "pushes": seen.pushes,
                "reconnects": seen.reconnects,
                "errors": seen.errors,
                "streamConnected": seen.stream_connected,
                "lastError": seen.last_error,
                "scheduled": seen.scheduled,
            },
            "replicas": [
                {
                    "name": r.name,
                    "port": r.port,
                    "pid": r.child.pid,
                    "phase": r.phase.value,
                    "readiness": r.probe_error,
                }
                for r in self.deployment.replicas
            ],
            "restarts": self.deployment.restarts,
            "crashLoop": self.deployment.crash_loop,
            "gateways": [
                {
                    "name": g.child.name,
                    "port": g.port,
                    "pid": g.child.pid,
                    "healthy": g.healthy,
                    "generation": g.generation,
                    "queue": g.queue,
                }
                for g in self.gateways.members
            ],
        }

    def _write_state(self, snapshot: view.Snapshot) -> None:
        path = self.settings.state_file
        assert path is not None
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.state(snapshot)))
        tmp.replace(path)

    # ---------------------------------------------------------------- stop
    async def _stop_gateways_and_scaler(self) -> None:
        await self.gateways.stop(grace=self.settings.gateway_stop_grace)
        if self.scaler is not None:
            await self.scaler.stop(grace=5.0)

    async def _stop_all(self) -> None:
        """Stop whatever still runs (idempotent; also the path after a failed start)."""
        s = self.settings
        await self._stop_gateways_and_scaler()
        # the deployment task was cancelled with the task group and stopped its replicas; make sure
        for replica in self.deployment.replicas:
            if replica.child.running:
                await replica.child.stop(grace=s.replica_stop_grace)
        if self.gateways.front is not None:
            await self.gateways.front.stop()
        await self.backend.stop()
        for reservation in self._ports:
            reservation.close()
        if self._session is not None:
            await self._session.close()
        if s.state_file is not None:
            with contextlib.suppress(OSError):
                s.state_file.unlink()


def _failures(queues: list[dict[str, Any]]) -> dict[str, Any]:
    """Failed requests and activations over every gateway, with the last reason any of them gave."""
    counts = {"failed_requests": 0, "failed_activations": 0}
    last: dict[str, Any] = {"last_request_failure": None, "last_activation_failure": None}
    for queue in queues:
        failures = queue.get("failures")
        if not isinstance(failures, dict):
            continue
        counts["failed_requests"] += int(failures.get("requests") or 0)
        counts["failed_activations"] += int(failures.get("activations") or 0)
        last["last_request_failure"] = failures.get("lastRequestReason") or last["last_request_failure"]
        last["last_activation_failure"] = (
            failures.get("lastActivationReason") or last["last_activation_failure"]
        )
    return {**counts, **last}


class _Stop(Exception):
    """Leaves the task group when the runner is told to stop."""


def install_stop_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
