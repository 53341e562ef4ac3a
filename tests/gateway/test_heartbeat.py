"""The shared heartbeat ticker, over real loopback connections.

Aspects: every held stream gets one ``: keepalive`` comment per round and a released one none; the
ticker runs on the interval; a stream whose client has gone is dropped from the registry without
disturbing the others; a stream whose client is not reading (transport paused) is skipped, not waited
on, and beats again once the client reads; the count of held streams follows hold/release.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest
from aiohttp import web

from noctaya.gateway import heartbeat, testing

KEEPALIVE = re.compile(rb": keepalive [0-9]+\.[0-9]s\n")
"""A held stream's comment: how long it has waited, to the tenth of a second."""


class Holder:
    """An app whose handler sends SSE headers, holds the stream in the ticker, waits, then ends."""

    def __init__(self, ticker: heartbeat.Heartbeat) -> None:
        self.ticker = ticker
        self.release = asyncio.Event()
        self.fill = 0  # bytes written right after holding: more than a client that does not read takes
        self.protocols: list[web.RequestHandler] = []
        self.app = web.Application()
        self.app.router.add_get("/", self.handle)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        self.ticker.hold(response, request=request, since=asyncio.get_running_loop().time())
        self.protocols.append(request.protocol)
        try:
            if self.fill:
                await response.write(b": " + b"x" * self.fill + b"\n\n")
            await self.release.wait()
        finally:
            self.ticker.release(response)
        await response.write(b"data: done\n\n")
        await response.write_eof()
        return response


@pytest.fixture
async def served() -> AsyncIterator[tuple[Holder, str]]:
    holder = Holder(heartbeat.Heartbeat(interval=0.05))
    runner, url = await testing.serve(holder.app, handler_cancellation=True, shutdown_timeout=0.5)
    try:
        yield holder, url
    finally:
        holder.release.set()
        await runner.cleanup()


async def until(predicate: Callable[[], bool], *, within: float = 5.0) -> None:
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110  (state changed by the server's tasks)
            await asyncio.sleep(0.005)


async def test_each_round_writes_one_comment_per_held_stream(served: tuple[Holder, str]) -> None:
    holder, url = served
    async with aiohttp.ClientSession() as session:
        responses = [await session.get(url) for _ in range(3)]
        await until(lambda: holder.ticker.held == 3)
        assert await holder.ticker.beat() == 3
        assert await holder.ticker.beat() == 3
        for response in responses:
            for _ in range(2):
                assert KEEPALIVE.fullmatch(await response.content.readline())
                assert await response.content.readline() == b"\n"
        holder.release.set()
        for response in responses:  # released: the body goes on with no further comment
            assert await response.content.readline() == b"data: done\n"
            response.release()
        await until(lambda: holder.ticker.held == 0)
        assert await holder.ticker.beat() == 0


@pytest.mark.looptime  # the loop clock is fake: the schedule is exact, whatever the machine's load
async def test_ticker_beats_every_interval(served: tuple[Holder, str]) -> None:
    holder, url = served
    task = asyncio.create_task(holder.ticker.run())
    try:
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            loop = asyncio.get_running_loop()
            started = loop.time()
            beats = 0
            while beats < 4:
                line = await response.content.readline()
                beats += KEEPALIVE.fullmatch(line) is not None
            # held in one slot: 4 beats come 3 to 4 intervals of 50 ms after the stream opened
            assert 0.15 <= loop.time() - started <= 0.2 + 1e-6
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_gone_client_is_dropped_and_others_keep_beating(served: tuple[Holder, str]) -> None:
    holder, url = served
    async with aiohttp.ClientSession() as stays, aiohttp.ClientSession() as leaves:
        kept = await stays.get(url)
        gone = await leaves.get(url)
        await until(lambda: holder.ticker.held == 2)
        gone.close()  # the connection closes; the server cancels that handler
        await until(lambda: holder.ticker.held == 1)
        assert await holder.ticker.beat() == 1
        assert KEEPALIVE.fullmatch(await kept.content.readline())
        kept.release()


async def test_a_stream_whose_client_does_not_read_is_skipped_not_waited_on(
    served: tuple[Holder, str],
) -> None:
    holder, url = served
    holder.fill = 16 * 1024 * 1024
    async with aiohttp.ClientSession() as session, session.get(url) as response:
        await until(lambda: bool(holder.protocols) and holder.protocols[0].writing_paused)
        assert await asyncio.wait_for(holder.ticker.beat(), 1.0) == 0  # skipped, at once
        received = 0
        while received < holder.fill:  # the client catches up; the server's write completes
            received += len(await response.content.readany())
        await until(lambda: not holder.protocols[0].writing_paused)
        assert await holder.ticker.beat() == 1
        tail = b""
        while not re.search(rb": keepalive [0-9.]+s\n\n$", tail):
            tail += await asyncio.wait_for(response.content.readany(), 2.0)
