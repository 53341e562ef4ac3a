"""The gateways of ``noctaya dev``: real ``noctaya gateway`` processes, kept up like a Deployment.

Each gateway is a child process running ``noctaya gateway --config`` with the file the runner wrote
for it. ``Gateways`` starts them and waits until they answer ``/healthz``, replaces one that exits
(as a Deployment replaces its Pod), reads every gateway's ``/noctaya/queue`` for the live view and,
with several gateways, keeps the public round-robin Service pointed at those that answer and are
not draining.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from noctaya.dev import processes, service

CHILD_START_TIMEOUT = 30.0
RESTART_DELAY = 1.0
RESTART_DELAY_MAX = 30.0
"""A gateway that keeps failing is replaced after 1 s, 2 s, 4 s … at most this (a crash-loop backoff)."""


class StartError(Exception):
    """A child process did not come up."""


async def wait_healthy(
    child: processes.Child, url: str, *, session: aiohttp.ClientSession, own_pid: bool = False
) -> None:
    """Until ``url`` answers 200 (with ``own_pid``: from the child itself, per the ``pid`` of its
    answer, not from another process that holds the port); :class:`StartError` when the child exits
    or takes too long."""
    deadline = time.monotonic() + CHILD_START_TIMEOUT
    while True:
        if not child.running:
            raise StartError(f"{child.name} exited with code {child.returncode}:\n{child.log_tail()}")
        with contextlib.suppress(aiohttp.ClientError, TimeoutError, ValueError):
            async with session.get(url) as response:
                if response.status == 200 and (not own_pid or await _pid(response) == child.pid):
                    return
        if time.monotonic() > deadline:
            raise StartError(
                f"{child.name} did not answer {url} within {CHILD_START_TIMEOUT:g}s:\n{child.log_tail()}"
            )
        await asyncio.sleep(0.05)


async def _pid(response: aiohttp.ClientResponse) -> int | None:
    document = await response.json()
    pid = document.get("pid") if isinstance(document, dict) else None
    return pid if isinstance(pid, int) else None


@dataclasses.dataclass(eq=False)
class GatewayProcess:
    port: int
    child: processes.Child
    healthy: bool = False
    queue: dict[str, Any] = dataclasses.field(default_factory=dict)
    generation: int = 1
    failed_starts: int = 0  # in a row; the restart delay doubles with each


class Gateways:
    """The gateway processes, and the public Service in front of them when there are several."""

    def __init__(self, *, front: service.Service | None, on_event: Callable[[str], None]) -> None:
        self.front = front
        self.on_event = on_event
        self.members: list[GatewayProcess] = []
        self.stopping = False

    @property
    def healthy(self) -> int:
        return sum(1 for g in self.members if g.healthy)

    def add(self, gateway: GatewayProcess) -> None:
        self.members.append(gateway)

    async def start(self, gateway: GatewayProcess, *, session: aiohttp.ClientSession) -> None:
        await gateway.child.start()
        await wait_healthy(
            gateway.child, f"http://127.0.0.1:{gateway.port}/healthz", session=session, own_pid=True
        )
        gateway.healthy = True
        if self.front is not None:
            self.front.add(name=gateway.child.name, port=gateway.port)
        self.on_event(f"{gateway.child.name} up on :{gateway.port} (pid {gateway.child.pid})")

    async def start_all(self, *, session: aiohttp.ClientSession) -> None:
        """Start every gateway at once; the first that fails ends the others' waits (an
        ``ExceptionGroup`` of :class:`StartError`), so no start is left running behind it."""
        async with asyncio.TaskGroup() as group:
            for gateway in self.members:
                name = f"noctaya-dev-start-{gateway.child.name}"
                group.create_task(self.start(gateway, session=session), name=name)

    async def supervise(self, *, session: aiohttp.ClientSession) -> None:
        """Replace a gateway that exited, as a Deployment replaces its Pod."""
        while True:
            await asyncio.sleep(0.1)
            for gateway in self.members:
                if gateway.child.running or self.stopping:
                    continue
                gateway.healthy = False
                if self.front is not None:
                    self.front.remove(gateway.child.name)
                self.on_event(
                    f"{gateway.child.name} exited with code {gateway.child.returncode}; replacing it"
                )
                await asyncio.sleep(min(RESTART_DELAY_MAX, RESTART_DELAY * 2**gateway.failed_starts))
                gateway.generation += 1
                try:
                    await self.start(gateway, session=session)
                except StartError as exc:
                    gateway.failed_starts += 1
                    self.on_event(str(exc))
                else:
                    gateway.failed_starts = 0

    async def refresh(self, *, session: aiohttp.ClientSession) -> None:
        """Read every gateway's ``/noctaya/queue``; only healthy, non-draining ones get clients."""

        async def one(gateway: GatewayProcess) -> None:
            if not gateway.child.running:
                gateway.healthy, gateway.queue = False, {}
                return
            try:
                async with session.get(f"http://127.0.0.1:{gateway.port}/noctaya/queue") as response:
                    gateway.queue = await response.json() if response.status == 200 else {}
                    gateway.healthy = response.status == 200 and not gateway.queue.get("draining", False)
            except (aiohttp.ClientError, TimeoutError, ValueError):
                gateway.healthy, gateway.queue = False, {}
            if self.front is not None:
                if gateway.healthy:
                    self.front.add(name=gateway.child.name, port=gateway.port)
                else:
                    self.front.remove(gateway.child.name)

        await asyncio.gather(*(one(g) for g in self.members))

    async def stop(self, *, grace: float) -> None:
        """SIGTERM to every gateway (they drain), SIGKILL after ``grace``; no more replacements."""
        self.stopping = True
        await asyncio.gather(*(g.child.stop(grace=grace) for g in self.members), return_exceptions=True)
