"""The local Service: round robin over ready endpoints per connection, like kube-proxy.

Aspects: connections alternate between endpoints; with no endpoint the port refuses connections (as a
ClusterIP Service without endpoints does) and keeps its number, and listens again with the first
endpoint; a connection accepted for an endpoint that just died goes to another ready endpoint, and
with none it is reset; an endpoint that closes a connection and then refuses (crashed) is out at
once with all its connections;
a removed endpoint gets no new connections while its open one carries on; busy/idle accounting
tells a streaming connection from an idle keep-alive one; the connection bound refuses the excess.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from noctaya.dev import service


@contextlib.asynccontextmanager
async def named_server(name: bytes) -> AsyncIterator[int]:
    """A TCP server that answers every line with its name and echoes it."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while line := await reader.readline():
                writer.write(name + b":" + line)
                await writer.drain()
        writer.close()

    srv = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield srv.sockets[0].getsockname()[1]
    finally:
        srv.close()
        await srv.wait_closed()


@contextlib.asynccontextmanager
async def started(svc: service.Service) -> AsyncIterator[service.Service]:
    await svc.start()
    try:
        yield svc
    finally:
        await svc.stop()


async def ask(port: int, line: bytes = b"hi\n") -> tuple[bytes, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(line)
    await writer.drain()
    return await asyncio.wait_for(reader.readline(), 2), writer


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


async def test_round_robin_and_removal() -> None:
    async with named_server(b"a") as port_a, named_server(b"b") as port_b, started(service.Service()) as svc:
        svc.add(name="a", port=port_a)
        svc.add(name="b", port=port_b)
        assert svc.ready
        answers = []
        for _ in range(4):
            answer, writer = await ask(svc.port)
            answers.append(answer)
            await close(writer)
        assert sorted(answers) == [b"a:hi\n", b"a:hi\n", b"b:hi\n", b"b:hi\n"]
        held, writer = await ask(svc.port)
        name = held.split(b":")[0].decode()
        svc.remove(name)
        for _ in range(3):  # no new connection goes to the removed endpoint
            answer, other = await ask(svc.port)
            assert not answer.startswith(name.encode())
            await close(other)
        writer.write(b"still\n")  # the open connection carries on
        await writer.drain()
        endpoint = svc.endpoint(name)
        assert endpoint is not None and endpoint.connections == 1
        await close(writer)


async def test_no_endpoint_refuses_connections_and_the_first_endpoint_listens_again() -> None:
    async with named_server(b"a") as port_a, started(service.Service()) as svc:
        assert not svc.ready and not svc.listening
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", svc.port)
        svc.add(name="a", port=port_a)
        answer, held = await ask(svc.port)
        assert answer == b"a:hi\n"
        svc.remove("a")
        assert not svc.listening
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", svc.port)
        held.write(b"still\n")  # the open connection carries on
        await held.drain()
        svc.add(name="a", port=port_a)  # same port again
        answer, writer = await ask(svc.port)
        assert answer == b"a:hi\n"
        await close(writer)
        await close(held)


async def test_a_dead_endpoint_is_passed_over_and_with_none_left_the_connection_is_reset() -> None:
    async with named_server(b"b") as port_b, started(service.Service()) as svc:
        async with named_server(b"dead") as port_dead:
            pass  # closed: connecting to it is refused, like a replica that just died
        svc.add(name="dead", port=port_dead)
        svc.add(name="b", port=port_b)
        for _ in range(4):
            answer, writer = await ask(svc.port)
            assert answer == b"b:hi\n"
            await close(writer)
        svc.remove("b")
        reader, writer = await asyncio.open_connection("127.0.0.1", svc.port)
        with pytest.raises(ConnectionResetError):
            await asyncio.wait_for(reader.read(), 2)
        await close(writer)
        assert svc.refused == 1


async def test_a_crashed_endpoint_is_out_with_all_its_connections_before_its_clients_learn() -> None:
    """An endpoint whose process died: its connections end and its port refuses. The Service takes
    it out and closes its other connections together, before the client of the cut connection
    hears of it, so that client's next connection is refused (as a real Service's is once the dead
    Pod's address refuses), never accepted and then reset; nothing else has removed the endpoint."""
    accepted: list[asyncio.StreamWriter] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)
        with contextlib.suppress(ConnectionError):
            while line := await reader.readline():
                writer.write(b"c:" + line)
                await writer.drain()

    engine = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with started(service.Service()) as svc:
        svc.add(name="c", port=engine.sockets[0].getsockname()[1])
        clients = []
        for _ in range(2):
            reader, writer = await asyncio.open_connection("127.0.0.1", svc.port)
            writer.write(b"hi\n")
            assert await asyncio.wait_for(reader.readline(), 10) == b"c:hi\n"
            clients.append((reader, writer))
        engine.close()  # the crash: the port refuses and every connection ends
        for writer in accepted:
            writer.transport.abort()
        (cut, cut_writer), (idle, idle_writer) = clients
        assert await asyncio.wait_for(cut.read(), 10) == b""
        assert not svc.ready and not svc.listening
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", svc.port)
        assert await asyncio.wait_for(idle.read(), 10) == b""  # closed with the other
        await close(cut_writer)
        await close(idle_writer)


async def test_busy_and_idle_connections() -> None:
    async with named_server(b"a") as port_a, started(service.Service()) as svc:
        svc.add(name="a", port=port_a)
        _, writer = await ask(svc.port)
        endpoint = svc.endpoint("a")
        assert endpoint is not None
        assert endpoint.busy(quiet=30.0) == 1  # a byte moved just now (the machine's pace aside)
        async with asyncio.timeout(5):  # nothing moves any more: it turns idle after the quiet period
            while endpoint.busy(quiet=0.2):  # noqa: ASYNC110 - the byte clock is time.monotonic
                await asyncio.sleep(0.05)
        assert endpoint.connections == 1  # open but idle, like a pooled keep-alive connection
        await close(writer)


async def test_connection_bound() -> None:
    async with named_server(b"a") as port_a, started(service.Service(max_connections=1)) as svc:
        svc.add(name="a", port=port_a)
        _, first = await ask(svc.port)
        reader, second = await asyncio.open_connection("127.0.0.1", svc.port)
        with pytest.raises(ConnectionResetError):
            await asyncio.wait_for(reader.read(), 2)
        await close(second)
        await close(first)
