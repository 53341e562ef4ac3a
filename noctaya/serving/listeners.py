"""Listening sockets bound before anything else of a server starts.

A server whose port is taken must fail at once: before it starts its sidecars, its probes and its
timers, each of which would have to be stopped again (and some of which, a demand reporter, are
seen by other processes meanwhile). :func:`bind` binds the sockets the way
``loop.create_server(host, port)`` would (every address ``host`` resolves to, ``SO_REUSEADDR``, an
IPv6 socket for IPv6 alone) and hands them over unlistened; the caller serves them (aiohttp's
``SockSite``) once the server is built, and closes them if it never gets that far.
"""

from __future__ import annotations

import asyncio
import socket

__all__ = ["bind", "close"]


async def bind(host: str, port: int) -> list[socket.socket]:
    """Sockets bound to every address of ``host`` (a name or an address) at ``port`` (0: one the
    system picks; with several addresses, each picks its own). ``OSError`` with the failing
    address and the system's reason when one cannot be bound; none is left open then."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(
        host, port, family=socket.AF_UNSPEC, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    bound: list[socket.socket] = []
    seen: set[tuple[int, object]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:  # the same address for another protocol
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            bound.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as exc:
                raise OSError(exc.errno, f"{exc.strerror} (binding {address!r})") from None
            sock.setblocking(False)
    except BaseException:
        close(bound)
        raise
    if not bound:
        raise OSError(f"{host!r} resolves to no address")
    return bound


def close(sockets: list[socket.socket]) -> None:
    """Close sockets :func:`bind` returned that were never served."""
    for sock in sockets:
        sock.close()
