"""``listeners.listen``: sockets opened as ``loop.create_server`` opens them, before a server starts.

Aspects: a free address is listened on at once (a connection waits in the backlog until the server
serves it); a taken one fails with the system's reason and the address, leaving no socket open,
for an address and for a name that resolves to several (the one opened before is closed); a port
is held from the moment it is opened (another socket bound to it cannot listen); an address family
the host has no sockets for is passed over.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Iterator
from typing import Any

import pytest

from noctaya.serving import listeners


@contextlib.contextmanager
def recorded() -> Iterator[list[socket.socket]]:
    """Every socket made while in the block (the test makes its own before or after it)."""
    sockets: list[socket.socket] = []
    plain = socket.socket

    class Recorded(socket.socket):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            sockets.append(self)

    socket.socket = Recorded  # type: ignore[misc]
    try:
        yield sockets
    finally:
        socket.socket = plain  # type: ignore[misc]


def resolving_to(monkeypatch: pytest.MonkeyPatch, *addresses: tuple[int, tuple[Any, ...]]) -> None:
    """``loop.getaddrinfo`` answers ``addresses`` (family, socket address), in that order."""

    async def getaddrinfo(*args: object, **kwargs: object) -> list[tuple[Any, ...]]:
        return [
            (family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", address) for family, address in addresses
        ]

    monkeypatch.setattr(asyncio.get_running_loop(), "getaddrinfo", getaddrinfo)


async def test_a_free_address_is_listened_on_at_once() -> None:
    with recorded() as made:
        sockets = await listeners.listen("127.0.0.1", 0, backlog=8)
    try:
        assert sockets == made and len(sockets) == 1
        (sock,) = sockets
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
        assert not sock.getblocking()
        socket.create_connection((host, port), timeout=5).close()  # waits in the backlog
    finally:
        listeners.close(sockets)
    assert sock.fileno() == -1


@pytest.mark.parametrize("other_first", [False, True])
async def test_a_taken_address_fails_with_the_reason_and_leaves_no_socket_open(
    monkeypatch: pytest.MonkeyPatch, other_first: bool
) -> None:
    taken = socket.create_server(("127.0.0.1", 0))
    try:
        port = taken.getsockname()[1]
        if other_first:  # a name that resolves to a free address first, then the taken one
            resolving_to(
                monkeypatch, (socket.AF_INET, ("127.0.0.2", port)), (socket.AF_INET, ("127.0.0.1", port))
            )
        with recorded() as made, pytest.raises(OSError) as failed:
            await listeners.listen("qwen.local" if other_first else "127.0.0.1", port, backlog=8)
        assert failed.value.errno == errno.EADDRINUSE
        assert f"Address already in use (binding ('127.0.0.1', {port}))" in str(failed.value)
        assert len(made) == (2 if other_first else 1)
        assert all(sock.fileno() == -1 for sock in made)  # none left open
    finally:
        taken.close()


async def test_a_port_is_held_from_the_moment_it_is_opened() -> None:
    """Two ``SO_REUSEADDR`` sockets may bind one port until one listens: the sockets listen at once,
    so another process that bound the port too (a second gateway starting) fails at its own start."""
    other = socket.socket()
    other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    other.bind(("127.0.0.1", 0))
    try:
        sockets = await listeners.listen("127.0.0.1", other.getsockname()[1], backlog=8)
        try:
            with pytest.raises(OSError) as failed:
                other.listen(8)
            assert failed.value.errno == errno.EADDRINUSE
        finally:
            listeners.close(sockets)
    finally:
        other.close()


NO_SUCH_FAMILY = 255  # no address family has this number: a socket of it cannot be made


async def test_an_address_family_without_sockets_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    resolving_to(monkeypatch, (NO_SUCH_FAMILY, ("::1", 0, 0, 0)), (socket.AF_INET, ("127.0.0.1", 0)))
    sockets = await listeners.listen("localhost", 0, backlog=8)
    try:
        assert [sock.family for sock in sockets] == [socket.AF_INET]
    finally:
        listeners.close(sockets)
    resolving_to(monkeypatch, (NO_SUCH_FAMILY, ("::1", 0, 0, 0)))
    with pytest.raises(OSError, match="no socket for 'localhost'"):
        await listeners.listen("localhost", 0, backlog=8)
