"""Ports the runner holds for its own children (``processes.PortReservation``), over real sockets.

Aspects: while held, a plain bind of the port fails and a connection is refused; a server binding it
with ``SO_REUSEADDR`` (as aiohttp does) listens on it and answers, also when started again after a
stop, and with it stopped connections are refused again.
"""

from __future__ import annotations

import asyncio
import errno
import socket

import pytest
from aiohttp import web

from noctaya.dev import processes


async def answer(port: int) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET / HTTP/1.0\r\n\r\n")
    body = await reader.read()
    writer.close()
    await writer.wait_closed()
    return body.rsplit(b"\r\n", 1)[-1]


async def served(request: web.Request) -> web.Response:
    return web.Response(text="served")


async def test_a_held_port_is_kept_from_others_and_open_to_a_reusing_server() -> None:
    reservation = processes.PortReservation()
    try:
        with socket.socket() as other, pytest.raises(OSError) as info:
            other.bind(("127.0.0.1", reservation.port))
        assert info.value.errno == errno.EADDRINUSE
        with pytest.raises(ConnectionRefusedError):
            await asyncio.open_connection("127.0.0.1", reservation.port)
        app = web.Application()
        app.router.add_get("/", served)
        for _ in range(2):  # a child that stops and is started again binds the same port
            runner = web.AppRunner(app)
            await runner.setup()
            try:
                await web.TCPSite(runner, "127.0.0.1", reservation.port, reuse_port=False).start()
                assert await answer(reservation.port) == b"served"
            finally:
                await runner.cleanup()
            with pytest.raises(ConnectionRefusedError):
                await asyncio.open_connection("127.0.0.1", reservation.port)
    finally:
        reservation.close()
