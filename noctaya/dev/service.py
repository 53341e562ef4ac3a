"""A local stand-in for a Kubernetes Service: one fixed port, round-robin over ready replicas.

The gateway needs one backend URL, as it has in a cluster. ``Service`` listens on a fixed loopback
port and forwards each TCP connection to the next ready endpoint, like kube-proxy: balancing is per
connection, a connection with no ready endpoint is closed at once (the gateway's readiness probe then
sees "not ready"), and an endpoint taken out stops getting new connections while the open ones carry
on. It keeps each endpoint's open connections and when each last moved a byte, so the runner can
drain a replica before stopping it. Bounded: at most ``max_connections`` proxied connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import time

logger = logging.getLogger(__name__)

CHUNK = 64 * 1024


@dataclasses.dataclass(eq=False)
class Connection:
    last_activity: float = dataclasses.field(default_factory=time.monotonic)  # a byte last moved


@dataclasses.dataclass(eq=False)
class Endpoint:
    name: str
    port: int
    open: set[Connection] = dataclasses.field(default_factory=set)

    @property
    def connections(self) -> int:
        return len(self.open)

    def busy(self, *, quiet: float) -> int:
        """Open connections that moved a byte within the last ``quiet`` seconds.

        An idle keep-alive connection (a pooled client connection between requests, or one that
        only carries a readiness probe now and then) is not busy; a streaming response is.
        """
        now = time.monotonic()
        return sum(1 for c in self.open if now - c.last_activity < quiet)


class Service:
    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, max_connections: int = 4096) -> None:
        self.host = host
        self.port = port
        self.max_connections = max_connections
        self._endpoints: list[Endpoint] = []
        self._all: dict[str, Endpoint] = {}  # endpoints with open connections, ready or not
        self._rr = itertools.count()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.connections = 0
        self.refused = 0

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ready(self) -> bool:
        """Like a Service with endpoints: at least one ready replica."""
        return bool(self._endpoints)

    def endpoint(self, name: str) -> Endpoint | None:
        return self._all.get(name)

    def add(self, *, name: str, port: int) -> None:
        if any(e.name == name for e in self._endpoints):
            return
        endpoint = self._all.setdefault(name, Endpoint(name=name, port=port))
        self._endpoints.append(endpoint)

    def remove(self, name: str) -> None:
        """No new connections to ``name``; its open connections stay until they end."""
        self._endpoints = [e for e in self._endpoints if e.name != name]

    def forget(self, name: str) -> None:
        self.remove(name)
        self._all.pop(name, None)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, self.host, self.port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._forward(reader, writer)
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._endpoints or self.connections >= self.max_connections:
            self.refused += 1
            return
        endpoint = self._endpoints[next(self._rr) % len(self._endpoints)]
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", endpoint.port), timeout=5
            )
        except (OSError, TimeoutError):
            self.refused += 1
            return
        self.connections += 1
        connection = Connection()
        endpoint.open.add(connection)
        try:
            pumps = [
                asyncio.ensure_future(self._pump(reader, up_writer, connection)),
                asyncio.ensure_future(self._pump(up_reader, writer, connection)),
            ]
            try:
                # either side ending ends the connection: HTTP/1.1 over a proxy needs no half-close
                await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for pump in pumps:
                    pump.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        finally:
            self.connections -= 1
            endpoint.open.discard(connection)
            up_writer.close()
            with contextlib.suppress(Exception):
                await up_writer.wait_closed()

    @staticmethod
    async def _pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter, connection: Connection) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                data = await source.read(CHUNK)
                if not data:
                    return
                connection.last_activity = time.monotonic()
                sink.write(data)
                await sink.drain()
