"""``listeners.bind``: sockets bound as ``loop.create_server`` binds them, before a server starts.

Aspects: a free address is bound and not yet listening (a connection is refused until the server
serves it); a taken one fails with the system's reason and the address, leaving no socket open, for
an address and for a name that resolves to several.
"""

from __future__ import annotations

import errno
import os
import socket

import pytest

from noctaya.serving import listeners


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_a_free_address_is_bound_but_not_listening_until_served() -> None:
    sockets = await listeners.bind("127.0.0.1", 0)
    try:
        assert len(sockets) == 1
        (sock,) = sockets
        host, port = sock.getsockname()
        assert host == "127.0.0.1" and port > 0
        assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR)
        assert not sock.getblocking()
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection((host, port), timeout=5).close()
        sock.listen(1)
        socket.create_connection((host, port), timeout=5).close()
    finally:
        listeners.close(sockets)
    assert all(sock.fileno() == -1 for sock in sockets)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_taken_address_fails_with_the_reason_and_leaves_no_socket_open(host: str) -> None:
    taken = socket.create_server(("127.0.0.1", 0))
    try:
        port = taken.getsockname()[1]
        before = open_descriptors()
        with pytest.raises(OSError) as failed:
            await listeners.bind(host, port)
        assert failed.value.errno == errno.EADDRINUSE
        assert f"Address already in use (binding ('127.0.0.1', {port}))" in str(failed.value)
        assert open_descriptors() == before  # with "localhost", a ::1 socket bound first is closed
    finally:
        taken.close()
