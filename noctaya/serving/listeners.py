"""Listening sockets opened before anything else of a server starts.

A server whose port is taken must fail at once: before it starts its sidecars, its probes and its
timers, each of which would have to be stopped again (and some of which, a demand reporter, are
seen by other processes meanwhile). :func:`listen` opens the sockets much as
``loop.create_server(host, port, reuse_address=True)`` does (every address ``host`` resolves to,
an address whose family the host cannot open a socket for passed over, ``SO_REUSEADDR``, an IPv6
socket for IPv6 alone) and listens on them at once: a port is held from then on, so another process
binding it too (``SO_REUSEADDR`` lets two sockets bind one port until one listens) fails here, not
later. Connections that arrive before the server serves the sockets (aiohttp's ``SockSite``) wait in
the backlog; the caller closes the sockets if it never gets that far.
"""

from __future__ import annotations

import asyncio
import socket

__all__ = ["close", "listen"]


async def listen(host: str, port: int, *, backlog: int) -> list[socket.socket]:
    """Sockets listening on every address of ``host`` (a name or an address) at ``port`` (0: one the
    system picks; with several addresses, each picks its own), non-blocking, with ``backlog``.
    ``OSError`` with the system's reason and the address when one cannot be bound or listened on;
    none is left open then."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(
        host, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    opened: list[socket.socket] = []
    unopened: OSError | None = None
    seen: set[tuple[int, object]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:  # the same address for another protocol
                continue
            seen.add((family, address))
            try:
                sock = socket.socket(family, kind, proto)
            except OSError as exc:  # a family this host has no sockets for (IPv6 turned off)
                unopened = exc
                continue
            opened.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
                sock.listen(backlog)
            except OSError as exc:
                raise OSError(exc.errno, f"{exc.strerror} (binding {address!r})") from None
            sock.setblocking(False)
    except BaseException:
        close(opened)
        raise
    if not opened:
        if unopened is not None:
            raise OSError(unopened.errno, f"no socket for {host!r}: {unopened.strerror}")
        raise OSError(f"{host!r} resolves to no address")
    return opened


def close(sockets: list[socket.socket]) -> None:
    """Close sockets :func:`listen` returned that were never served (closing one twice does
    nothing: a served one was closed, or detached, by its server)."""
    for sock in sockets:
        sock.close()
