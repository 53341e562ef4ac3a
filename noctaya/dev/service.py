"""A local stand-in for a Kubernetes Service: one fixed port, round-robin over ready replicas.

The gateway needs one backend URL, as it has in a cluster. ``Service`` holds a fixed loopback port and
forwards each TCP connection to the next ready endpoint, like kube-proxy: balancing is per
connection, and an endpoint taken out stops getting new connections while the open ones carry on.

With no ready endpoint the port refuses connections, as a ClusterIP Service without endpoints does
(kube-proxy rejects the SYN): the port stays bound (``SO_REUSEPORT``) but nothing listens on it, so a
client sees "connection refused" and knows its request reached nothing. The listener comes back with
the first endpoint. A connection accepted for an endpoint that turns out to be gone (it died a moment
ago) is tried on the other ready endpoints; with none left it is reset, not answered. That window
is kept short: when an endpoint closes a connection and its port then refuses, it is out at once
and its other connections are closed together, as a crashed process's are.

It keeps each endpoint's open connections and when each last moved a byte, so the runner can
drain a replica before stopping it. Bounded: at most ``max_connections`` proxied connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import socket
import struct
import time

logger = logging.getLogger(__name__)

CHUNK = 64 * 1024


@dataclasses.dataclass(eq=False)
class Connection:
    last_activity: float = dataclasses.field(default_factory=time.monotonic)  # a byte last moved
    writers: tuple[asyncio.StreamWriter, ...] = ()

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


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

    def close_idle(self, *, quiet: float) -> int:
        """Close the open connections that moved no byte for ``quiet`` seconds, as an engine closes
        its idle keep-alive connections when it shuts down gracefully; returns how many."""
        now = time.monotonic()
        idle = [c for c in self.open if now - c.last_activity >= quiet]
        for connection in idle:
            connection.close()
        return len(idle)


class Service:
    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, max_connections: int = 4096) -> None:
        self.host = host
        self.port = port
        self.max_connections = max_connections
        self._endpoints: list[Endpoint] = []
        self._all: dict[str, Endpoint] = {}  # endpoints with open connections, ready or not
        self._rr = itertools.count()
        self._holder: socket.socket | None = None  # keeps the port while nothing listens
        self._listener: socket.socket | None = None
        self._server: asyncio.Server | None = None
        self._serving: asyncio.Task[asyncio.Server] | None = None
        self._started = False
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
        self._listen()

    def remove(self, name: str) -> None:
        """No new connections to ``name``; its open connections stay until they end."""
        self._endpoints = [e for e in self._endpoints if e.name != name]
        if not self._endpoints:
            self._unlisten()

    def forget(self, name: str) -> None:
        self.remove(name)
        self._all.pop(name, None)

    @property
    def listening(self) -> bool:
        return self._listener is not None

    async def start(self) -> None:
        """Take the port (``port=0``: any free one, read back); it refuses until an endpoint is added."""
        holder = self._socket()
        holder.bind((self.host, self.port))
        self._holder = holder
        self.port = holder.getsockname()[1]
        self._started = True
        if self._endpoints:
            self._listen()

    def _socket(self) -> socket.socket:
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        return sock

    def _listen(self) -> None:
        """Listen now (the kernel queues connections at once; the accept loop starts a moment later)."""
        if not self._started or self._listener is not None:
            return
        listener = self._socket()
        try:
            listener.bind((self.host, self.port))
            listener.listen(1024)
        except OSError:
            listener.close()
            raise
        listener.setblocking(False)
        self._listener = listener
        self._serving = asyncio.ensure_future(asyncio.start_server(self._accept, sock=listener))
        self._serving.add_done_callback(self._served)

    def _served(self, task: asyncio.Task[asyncio.Server]) -> None:
        if task.cancelled() or task.exception() is not None:
            return
        server = task.result()
        if self._serving is task:
            self._server = server
        else:  # stopped listening before the accept loop started
            server.close()

    def _unlisten(self) -> None:
        """Stop listening: new connections are refused; the open ones carry on."""
        if self._server is not None:
            self._server.close()  # closes the listening socket
        elif self._serving is not None:
            self._serving.cancel()
        if self._listener is not None and self._server is None:
            self._listener.close()
        self._server = self._serving = self._listener = None

    async def stop(self) -> None:
        self._started = False
        self._unlisten()
        if self._holder is not None:
            self._holder.close()
            self._holder = None
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

    async def _connect(self) -> tuple[Endpoint, asyncio.StreamReader, asyncio.StreamWriter] | None:
        """The next ready endpoint that accepts, trying each ready endpoint at most once."""
        start = next(self._rr)
        for offset in range(len(self._endpoints)):
            if not self._endpoints:
                return None
            endpoint = self._endpoints[(start + offset) % len(self._endpoints)]
            try:
                up_reader, up_writer = await asyncio.wait_for(
                    asyncio.open_connection("127.0.0.1", endpoint.port), timeout=5
                )
            except (OSError, TimeoutError):
                continue
            return endpoint, up_reader, up_writer
        return None

    @staticmethod
    def _reset(writer: asyncio.StreamWriter) -> None:
        """Abort with RST (SO_LINGER 0), as a host with nothing behind the port does."""
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    async def _forward(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected = None if self.connections >= self.max_connections else await self._connect()
        if connected is None:
            self.refused += 1
            self._reset(writer)
            return
        endpoint, up_reader, up_writer = connected
        self.connections += 1
        connection = Connection(writers=(writer, up_writer))
        endpoint.open.add(connection)
        try:
            pumps = [
                asyncio.ensure_future(self._pump(reader, up_writer, connection)),
                asyncio.ensure_future(self._pump(up_reader, writer, connection)),
            ]
            try:
                # either side ending ends the connection: HTTP/1.1 over a proxy needs no half-close
                await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
                if pumps[1].done():  # the endpoint's side ended first: did the endpoint die?
                    await self._check(endpoint)
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

    async def _check(self, endpoint: Endpoint) -> None:
        """After an endpoint closed a connection: if its port now refuses, its process is gone, and
        it goes as a dead Pod's connections go — out of the Service, every open connection closed
        at once — before the client learns of this one. The client of a connection cut by a crash
        then finds the Service refusing (as a real one refuses once the dead Pod's address refuses
        the SYN), not accepting a connection that could only be reset."""
        if endpoint not in self._endpoints:
            return
        try:
            _, probe = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", endpoint.port), timeout=5)
        except ConnectionRefusedError:
            logger.info("%s refuses connections: out of the Service", endpoint.name)
            self.remove(endpoint.name)
            for connection in list(endpoint.open):
                connection.close()
        except (OSError, TimeoutError):
            return  # a slow endpoint is not a dead one: its readiness probe decides
        else:
            probe.close()

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
