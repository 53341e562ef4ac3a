"""Loopback ports a test holds for as long as it runs, so no other process can take them.

A test that must name a port before its server exists (a config file, a child's command line, a
client built before the server starts, a server restarted on the same port) takes a
:class:`PortReservation`: a TCP socket with ``SO_REUSEADDR`` bound to ``127.0.0.1:0`` that never
listens. While it is open:

- the kernel hands that port to nobody else (neither ``bind(0)`` nor a connect's own source port);
- a server that binds the port with ``SO_REUSEADDR`` (aiohttp, uvloop and gRPC all set it) may bind
  and listen on it, again after a restart, and receives every connection;
- while no server listens, a connection is refused at once (as to a server that is down).

Unlike a port that was probed, released and bound again later, nothing can race for it. Tests that
can let the server pick its own port (port 0, read back from the server) do that instead.
"""

from __future__ import annotations

import socket
import types


class PortReservation:
    """One reserved loopback port; ``close()`` (or leaving the ``with`` block) gives it back."""

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind(("127.0.0.1", 0))
        except BaseException:
            self._socket.close()
            raise
        self.port: int = int(self._socket.getsockname()[1])

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> PortReservation:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        self.close()
