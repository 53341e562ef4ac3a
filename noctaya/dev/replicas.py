"""Backend replicas as local processes, kept at the count the local KEDA asks for.

``Deployment`` plays the part of a Kubernetes Deployment plus kubelet for ``--backend-cmd``: each
replica is the command with ``{port}`` replaced by a port bound for it (a socket on port 0, read
back and held with ``SO_REUSEADDR`` for the replica's life, ``processes.PortReservation``: nothing
else takes it, and the engine, which sets ``SO_REUSEADDR`` as servers do, listens on it); it joins
the local ``Service`` once its readiness path answers 2xx (probed every 100 ms while starting, every
second once ready, three failures in a row take it out) and leaves it on scale-down, where it is
drained first: no new connections, then a wait until none of its open connections is moving bytes (a
stream still running keeps it; idle keep-alive ones do not, and are closed), bounded by
``drain_timeout``, then SIGTERM (the engine finishes what it holds and closes idle connections),
then SIGKILL after ``stop_grace``. A replica that exits on its own leaves the Service the moment it
exits (as a Pod whose container died leaves its endpoints) and is replaced, with a crash-loop
backoff (1 s doubling to 30 s, reset by a Ready replica). What the readiness probe last got (a
status, a refused connect) is kept per replica and reported once per change, so a wrong readiness
path shows at once, not as a hang.

A crash loop: ``crash_loop_exits`` replica exits in a row (default 3) with no replica Ready since the
backend was scaled up from 0 (or since the last Ready). Then, until a replica turns Ready or the
backend is scaled to 0, the Service's only endpoint is :class:`FailureAnswer`: every request it gets,
the gateways' readiness probes included, is answered 503 with the last exit (its code and the last
line of its output, printable, bounded) in ``Noctaya-Backend-Failed`` and as an OpenAI-shaped error,
so a gateway ends its activation at once and its waiting clients get that reason instead of waiting
out ``activationTimeout``. The replicas go on being restarted with their backoff meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import enum
import itertools
import logging
import pathlib
import shlex
import socket
import time
from collections.abc import Callable, Coroutine

import aiohttp
from aiohttp import web

from noctaya.contract import gateway as gateway_contract
from noctaya.dev import processes, service

logger = logging.getLogger(__name__)

PROBE_STARTING = 0.1
PROBE_READY = 1.0
PROBE_TIMEOUT = 1.0
UNREADY_AFTER = 3
QUIET = 0.5  # a connection that moved no byte for this long is idle (between requests)
MAX_REPLICAS = 64
BACKOFF_FIRST, BACKOFF_MAX = 1.0, 30.0
CRASH_LOOP_EXITS = 3
"""Replica exits in a row, none Ready, that make a crash loop (``--crash-loop-exits``; 0: never)."""
CRASH_LOOP_ENDPOINT = "crash-loop"
"""The Service endpoint name of :class:`FailureAnswer` while the replicas crash-loop."""
MAX_REASON_CHARS = gateway_contract.MAX_BACKEND_FAILED_CHARS


def printable(text: str, *, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` as it may go into a header, a client's error and a terminal: printable ASCII (each
    other character ``?``), at most ``limit`` characters."""
    shown = "".join(c if " " <= c <= "~" else "?" for c in text[: limit + 1]).strip()
    return shown if len(shown) <= limit else shown[: limit - 1] + "~"


def exit_reason(replica: Replica) -> str:
    """Why ``replica`` ended: its exit code or signal and the last line of its output, bounded."""
    code = replica.child.returncode
    how = (
        "exited" if code is None else f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
    )
    lines = [line for line in replica.child.log_tail().splitlines() if line.strip()]
    return printable(f"{replica.name} {how}" + (f" (last output: {lines[-1].strip()})" if lines else ""))


class FailureAnswer:
    """A loopback HTTP server answering every request 503 with :attr:`reason`, in
    ``Noctaya-Backend-Failed`` and as an OpenAI-shaped error (the Service's endpoint during a crash
    loop)."""

    def __init__(self) -> None:
        self.reason = ""
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._answer)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=0.5)
        await runner.setup()
        self._runner = runner
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = int(sock.getsockname()[1])
        await web.SockSite(runner, sock).start()

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _answer(self, _request: web.Request) -> web.Response:
        error = {
            "message": f"the model backend failed to start: {self.reason}",
            "type": "backend_error",
            "param": None,
            "code": "backend_failed",
        }
        headers = {gateway_contract.BACKEND_FAILED_HEADER: self.reason, "Connection": "close"}
        return web.json_response({"error": error}, status=503, headers=headers)


class Phase(enum.Enum):
    STARTING = "starting"
    READY = "ready"
    DRAINING = "draining"
    STOPPED = "stopped"
    FAILED = "failed"


def render_command(template: str, *, port: int) -> list[str]:
    if "{port}" not in template:
        raise ValueError("the backend command must contain the {port} placeholder")
    argv = shlex.split(template.replace("{port}", str(port)))
    if not argv:
        raise ValueError("the backend command is empty")
    return argv


def leaving(replica: Replica) -> bool:
    return replica.phase in (Phase.DRAINING, Phase.STOPPED, Phase.FAILED)


@dataclasses.dataclass(eq=False)
class Replica:
    name: str
    port: int
    child: processes.Child
    #: the port's socket, held until the replica has ended (nothing else takes the port meanwhile)
    reservation: processes.PortReservation | None = None
    phase: Phase = Phase.STARTING
    started: float = dataclasses.field(default_factory=time.monotonic)
    ready_at: float | None = None
    failures: int = 0
    #: the last failing readiness outcome ("readiness /health answered 404"); None once it passes
    probe_error: str | None = None


class Deployment:
    def __init__(
        self,
        *,
        command: str,
        readiness_path: str,
        service: service.Service,
        log_dir: pathlib.Path,
        drain_timeout: float = 30.0,
        stop_grace: float = 10.0,
        crash_loop_exits: int = CRASH_LOOP_EXITS,
        on_event: Callable[[str], None] = lambda _message: None,
    ) -> None:
        render_command(command, port=1)  # validate early
        if crash_loop_exits < 0:
            raise ValueError("crash_loop_exits must be 0 (never) or more")
        self.command = command
        self.readiness_path = readiness_path
        self.service = service
        self.log_dir = log_dir
        self.drain_timeout = drain_timeout
        self.stop_grace = stop_grace
        self.on_event = on_event
        self.desired = 0
        self.replicas: list[Replica] = []
        self.restarts = 0
        self._names = itertools.count(1)
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._crash_backoff = 0.0
        self._next_start = 0.0
        self._session: aiohttp.ClientSession | None = None
        self.crash_loop_exits = crash_loop_exits
        self.exits_without_ready = 0  # replica exits since the last Ready one (or the scale-up from 0)
        #: the last exit while the replicas crash-loop (what waiting clients are answered), else None
        self.crash_loop: str | None = None
        self._failure = FailureAnswer()

    # ---------------------------------------------------------------- reading
    def count(self, *phases: Phase) -> int:
        return sum(1 for r in self.replicas if r.phase in phases)

    @property
    def ready(self) -> int:
        return self.count(Phase.READY)

    @property
    def live(self) -> list[Replica]:
        return [r for r in self.replicas if r.phase in (Phase.STARTING, Phase.READY)]

    # ---------------------------------------------------------------- control
    def scale(self, replicas: int) -> None:
        replicas = max(0, min(MAX_REPLICAS, replicas))
        if replicas != self.desired:
            if replicas == 0:  # the next scale-up from 0 is a new activation
                self._end_crash_loop()
            self.desired = replicas
            self._wake.set()

    async def run(self) -> None:
        """Reconcile until cancelled; then every replica is stopped."""
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT))
        try:
            await self._failure.start()
            while True:
                self._reconcile()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.2):
                        await self._wake.wait()
                self._wake.clear()
        finally:
            await self._shutdown()

    def _spawn(self, coro: Coroutine[object, object, None], name: str) -> None:
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _reconcile(self) -> None:
        now = time.monotonic()
        for replica in self.live:
            if replica.child.returncode is not None:  # exited on its own: crashed
                self._failed(replica)
        live = self.live
        missing = self.desired - len(live)
        if missing > 0 and now >= self._next_start:
            for _ in range(missing):
                replica = self._new_replica()
                self.replicas.append(replica)
                self._spawn(self._start(replica), "noctaya-dev-replica-start")
        elif missing < 0:
            # not-ready replicas go first, newest first (like a ReplicaSet's scale-down ranking)
            victims = sorted(live, key=lambda r: (r.phase is Phase.READY, -r.started))[:-missing]
            for replica in victims:
                replica.phase = Phase.DRAINING
                self.service.remove(replica.name)
                self._spawn(self._drain(replica), "noctaya-dev-replica-drain")
        self.replicas = [r for r in self.replicas if r.phase not in (Phase.STOPPED, Phase.FAILED)]

    def _new_replica(self) -> Replica:
        name = f"replica-{next(self._names)}"
        reservation = processes.PortReservation()
        port = reservation.port
        child = processes.Child(
            name=name, argv=render_command(self.command, port=port), log_path=self.log_dir / f"{name}.log"
        )
        return Replica(name=name, port=port, child=child, reservation=reservation)

    async def _start(self, replica: Replica) -> None:
        try:
            await replica.child.start()
        except OSError as exc:
            self.on_event(f"{replica.name}: cannot start {replica.child.argv[0]!r}: {exc}")
            self._failed(
                replica, reason=printable(f"{replica.name} cannot start {replica.child.argv[0]!r}: {exc}")
            )
            return
        self.on_event(f"{replica.name}: started on port {replica.port} (pid {replica.child.pid})")
        self._spawn(self._watch(replica), "noctaya-dev-replica-watch")
        await self._probe(replica)

    async def _watch(self, replica: Replica) -> None:
        """Take a replica that exits on its own out of the Service at once."""
        process = replica.child.process
        if process is None:
            return
        await process.wait()
        if not leaving(replica):
            self._failed(replica)

    def _probed(self, replica: Replica, outcome: str | None) -> None:
        """Remember what the probe got; report a failing outcome once per change."""
        if outcome != replica.probe_error:
            replica.probe_error = outcome
            if outcome is not None:
                self.on_event(f"{replica.name}: {outcome}")

    async def _probe(self, replica: Replica) -> None:
        assert self._session is not None
        url = f"http://127.0.0.1:{replica.port}{self.readiness_path}"
        while replica.phase in (Phase.STARTING, Phase.READY) and replica.child.running:
            outcome: str | None
            try:
                async with self._session.get(url, allow_redirects=False) as response:
                    ok = 200 <= response.status < 300
                    outcome = None if ok else f"readiness {self.readiness_path} answered {response.status}"
            except (aiohttp.ClientError, TimeoutError) as exc:
                ok = False
                # a refused connect while starting is the engine still loading: not worth a line
                refused = isinstance(exc, aiohttp.ClientConnectorError)
                outcome = (
                    replica.probe_error
                    if refused
                    else f"readiness {self.readiness_path} failed: {type(exc).__name__} {exc}".rstrip()
                )
            if leaving(replica):
                return  # changed while the probe was in flight
            self._probed(replica, outcome)
            if ok:
                replica.failures = 0
                if replica.phase is Phase.STARTING:
                    replica.phase = Phase.READY
                    replica.ready_at = time.monotonic()
                    self._crash_backoff = 0.0
                    self._end_crash_loop()
                    self.service.add(name=replica.name, port=replica.port)
                    self.on_event(f"{replica.name}: ready after {replica.ready_at - replica.started:.1f}s")
            elif replica.phase is Phase.READY:
                replica.failures += 1
                if replica.failures >= UNREADY_AFTER:
                    replica.phase = Phase.STARTING
                    self.service.remove(replica.name)
                    self.on_event(f"{replica.name}: not ready any more")
            await asyncio.sleep(PROBE_READY if replica.phase is Phase.READY else PROBE_STARTING)
        self._wake.set()

    def _failed(self, replica: Replica, *, reason: str | None = None) -> None:
        if replica.phase in (Phase.FAILED, Phase.STOPPED):
            return
        replica.phase = Phase.FAILED
        self.service.forget(replica.name)
        self._release(replica)
        self.restarts += 1
        self._crash_backoff = min(BACKOFF_MAX, max(BACKOFF_FIRST, self._crash_backoff * 2))
        self._next_start = time.monotonic() + self._crash_backoff
        tail = replica.child.log_tail().strip().splitlines()[-3:]
        self.on_event(
            f"{replica.name}: exited with code {replica.child.returncode}; restarting in "
            f"{self._crash_backoff:.0f}s" + (f" (last output: {' | '.join(tail)})" if tail else "")
        )
        if self.ready == 0:
            self.exits_without_ready += 1
            self._crash_looping(reason or exit_reason(replica))
        self._wake.set()

    def _crash_looping(self, reason: str) -> None:
        """Past ``crash_loop_exits`` exits with none Ready: the Service answers ``reason`` (the
        last exit) to whoever asks, the gateways' probes first, until a replica turns Ready."""
        if not self.crash_loop_exits or self.exits_without_ready < self.crash_loop_exits or not self.desired:
            return
        self._failure.reason = reason
        if self.crash_loop is None and self._failure.port:
            self.service.add(name=CRASH_LOOP_ENDPOINT, port=self._failure.port)
            self.on_event(
                f"crash loop: {self.exits_without_ready} exits without a Ready replica; waiting requests "
                f"are answered with the last one ({reason})"
            )
        self.crash_loop = reason

    def _end_crash_loop(self) -> None:
        self.exits_without_ready = 0
        if self.crash_loop is not None:
            self.crash_loop = None
            self.service.forget(CRASH_LOOP_ENDPOINT)
            self.on_event("crash loop over: requests wait for a replica again")

    @staticmethod
    def _release(replica: Replica) -> None:
        """The replica has ended: its port is free again."""
        if replica.reservation is not None:
            replica.reservation.close()
            replica.reservation = None

    async def _drain(self, replica: Replica) -> None:
        endpoint = self.service.endpoint(replica.name)
        deadline = time.monotonic() + self.drain_timeout
        if endpoint is not None and replica.ready_at is not None:
            self.on_event(f"{replica.name}: draining ({endpoint.connections} open connections)")
            while endpoint.busy(quiet=QUIET) and time.monotonic() < deadline:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
            # idle keep-alive connections are closed before the engine gets SIGTERM: a client that
            # would send on one then opens a new one, which the Service refuses or routes elsewhere
            endpoint.close_idle(quiet=QUIET)
        code = await replica.child.stop(grace=self.stop_grace)
        self.service.forget(replica.name)
        self._release(replica)
        replica.phase = Phase.STOPPED
        self.on_event(f"{replica.name}: stopped (exit code {code})")
        self._wake.set()

    async def _shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.gather(
            *(r.child.stop(grace=self.stop_grace) for r in self.replicas if r.child.running),
            return_exceptions=True,
        )
        for replica in self.replicas:
            self.service.forget(replica.name)
            self._release(replica)
            replica.phase = Phase.STOPPED
        self._end_crash_loop()
        await self._failure.stop()
        if self._session is not None:
            await self._session.close()
