"""Readiness probing of the backend.

Aspects: the probe's answer is read only up to a bound (a backend whose readiness path answers 200
with an endless body is seen Ready at once, not read until the probe times out); a
non-2xx answer is not Ready and is named in ``last_error``; a cold backend nobody waits for is probed
at the idle rate, and the first demand wakes the probe at once and switches it to the cold rate; what
a failing probe got is in ``/noctaya/queue`` and the log at once (once per change, not per probe),
long before the activation timeout, and the first passing probe clears it; a Ready backend that
answers its probes late, or not within ``warm_probe_timeouts`` probe timeouts, stays Ready however many
in a row (each counted in the metric), while an answer other than 2xx, a refused connect or a connect
that hangs takes it out at once; a cold backend's late answer is not Ready.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from noctaya.gateway import readiness, testing

# a fake loop clock: loopback I/O takes no loop time, so intervals and "at once" are exact under load
pytestmark = pytest.mark.looptime


async def test_probe_reads_a_bounded_part_of_the_answer() -> None:
    async def endless(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        with contextlib.suppress(ConnectionError):
            while True:  # ends when the gateway closes the connection
                await response.write(b"x" * 16384)
        return response

    async def failing(request: web.Request) -> web.Response:
        return web.Response(status=503, text="loading")

    app = web.Application()
    app.router.add_get("/health", endless)
    app.router.add_get("/loading", failing)
    runner, url = await testing.serve(app, shutdown_timeout=0.2)
    try:
        async with aiohttp.ClientSession() as session:
            probe = readiness.Readiness(
                url=url + "/health", cold_interval=0.05, warm_interval=1, timeout=2, on_change=lambda _: None
            )
            loop = asyncio.get_running_loop()
            started = loop.time()
            assert await probe.probe_once(session) is True
            assert probe.last_error is None
            assert loop.time() - started < 1.0  # stopped at the bound, not read until the 2 s timeout
            loading = readiness.Readiness(
                url=url + "/loading", cold_interval=0.05, warm_interval=1, timeout=2, on_change=lambda _: None
            )
            assert await loading.probe_once(session) is False
            assert loading.last_error == "readiness /loading answered 503"
    finally:
        await runner.cleanup()


async def test_idle_probing_is_slow_and_demand_wakes_it() -> None:
    probes: list[float] = []
    loop = asyncio.get_running_loop()

    async def loading(request: web.Request) -> web.Response:
        probes.append(loop.time())
        return web.Response(status=503, text="scaled to zero")

    app = web.Application()
    app.router.add_get("/health", loading)
    runner, url = await testing.serve(app, shutdown_timeout=0.2)
    demand = [0]
    probe = readiness.Readiness(
        url=url + "/health",
        cold_interval=0.02,
        warm_interval=1,
        idle_interval=10,
        timeout=2,
        on_change=lambda _: None,
        wanted=lambda: demand[0] > 0,
    )
    try:
        async with aiohttp.ClientSession() as session:
            task = asyncio.create_task(probe.run(session))
            try:
                await asyncio.sleep(9.5)
                assert len(probes) == 1  # the first probe, then nothing for the 10 s idle period
                demand[0] = 1
                woken_at = loop.time()
                probe.wake()
                await asyncio.sleep(0.201)
                assert probes[1] == woken_at  # woken at once, not after the idle period
                assert len(probes) == 2 + 10  # then every 20 ms while demand lasts
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    finally:
        await runner.cleanup()


async def test_a_failing_probe_is_visible_at_once_in_the_queue_state_and_the_log(
    serve_app: Any, http: aiohttp.ClientSession, caplog: pytest.LogCaptureFixture
) -> None:
    healthy = asyncio.Event()
    probes = 0

    async def health(request: web.Request) -> web.Response:
        nonlocal probes
        probes += 1
        return web.Response() if healthy.is_set() else web.Response(status=404, text="Not Found")

    async def chat(request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_post("/v1/chat/completions", chat)
    caplog.set_level(logging.INFO, logger="noctaya.gateway.readiness")
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(activationTimeout="300s", probeInterval="50ms")
        held = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json={"model": "m"}))

        async def queue() -> dict[str, Any]:
            async with http.get(gateway.url + "/noctaya/queue") as response:
                state: dict[str, Any] = await response.json()
                return state

        async with asyncio.timeout(5):  # at once: not after the 300 s activation timeout
            while (state := await queue())["queued"] != 1 or state["backendError"] is None:  # noqa: ASYNC110
                await asyncio.sleep(0.05)
        assert state["backendError"] == "readiness /health answered 404" and not state["backendReady"]
        probed = probes
        async with asyncio.timeout(5):
            while probes < probed + 3:  # noqa: ASYNC110 - counting the backend's own probe answers
                await asyncio.sleep(0.05)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert warnings == ["backend not ready: readiness /health answered 404"]  # once, not per probe
        healthy.set()
        async with await held as response:
            assert response.status == 200
        assert (await queue())["backendError"] is None
        assert "backend readiness /health passes" in [r.getMessage() for r in caplog.records]


def warm_probe(
    url: str, *, changes: list[bool], late: list[float], late_limit: int = 3
) -> readiness.Readiness:
    """A probe of ``url`` with a 0.5 s timeout that waits 1.5 s for a Ready backend's answer, its changes
    and the times of the late or missing answers it stays Ready through told to ``changes`` and
    ``late``."""
    loop = asyncio.get_running_loop()
    return readiness.Readiness(
        url=url,
        cold_interval=0.05,
        warm_interval=1,
        timeout=0.5,
        on_change=changes.append,
        late_limit=late_limit,
        on_late=lambda: late.append(loop.time()),
    )


async def turned(probe: readiness.Readiness, *, ready: bool) -> None:
    while probe.ready is not ready:  # noqa: ASYNC110 - the probe loop's own period, on the fake clock
        await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def probing(
    health: Callable[[web.Request], Awaitable[web.Response]],
    *,
    late_limit: int = 3,
    released: asyncio.Event | None = None,
) -> AsyncIterator[tuple[readiness.Readiness, list[bool], list[float]]]:
    """A backend answering ``/health`` with ``health`` and a :func:`warm_probe` of it running its loop:
    the probe, its changes and its late answers. On exit ``released`` is set (a held answer ends),
    then the loop and the backend stop."""
    app = web.Application()
    app.router.add_get("/health", health)
    runner, url = await testing.serve(app, shutdown_timeout=0.2)
    changes: list[bool] = []
    late: list[float] = []
    probe = warm_probe(url + "/health", changes=changes, late=late, late_limit=late_limit)
    try:
        async with aiohttp.ClientSession() as session:
            task = asyncio.create_task(probe.run(session))
            try:
                yield probe, changes, late
            finally:
                if released is not None:
                    released.set()
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    finally:
        await runner.cleanup()


async def test_a_ready_backend_answering_late_or_not_at_all_stays_ready_and_a_503_does_not() -> None:
    mode = "ok"
    arrived: asyncio.Queue[str] = asyncio.Queue()
    released = asyncio.Event()

    async def health(request: web.Request) -> web.Response:
        arrived.put_nowait(mode)
        if mode == "slow":
            await asyncio.sleep(1.2)  # past one timeout, within three
        elif mode == "hang":
            await released.wait()  # answers nothing within three timeouts
        return web.Response(status=503 if mode == "503" else 200)

    loop = asyncio.get_running_loop()

    async def probes(count: int, *, then: str) -> None:
        """Let ``count`` more probes arrive, then answer the next ones as ``then``."""
        nonlocal mode
        for _ in range(count):
            await arrived.get()
        mode = then

    async with probing(health, released=released) as (probe, changes, late):
        await probes(1, then="slow")
        await probes(3, then="hang")  # three late answers in a row: Ready all along
        assert changes == [True] and len(late) == 2  # the third is being answered
        started = loop.time()
        await probes(4, then="503")  # and four answered by nothing: Ready all along
        assert changes == [True] and len(late) == 6
        assert late[-1] - late[-2] == pytest.approx(1 + 1.5, abs=0.06)  # waited three timeouts
        assert loop.time() - started > 4 * 2.5 - 1
        await arrived.get()  # the 503 probe (the hanging ones were given up on)
        await turned(probe, ready=False)  # an answer that says not ready counts at once
        assert changes == [True, False]
        assert probe.last_problem == "readiness /health answered 503"
        await probes(0, then="slow")
        await probes(2, then="ok")  # a cold probe waits one timeout: late is not Ready yet
        assert not probe.ready and len(late) == 7
        await turned(probe, ready=True)
        assert changes == [True, False, True] and len(late) == 7


@pytest.mark.parametrize("late_limit", [1, 3])
async def test_a_connect_that_hangs_is_no_late_answer(late_limit: int) -> None:
    async def health(request: web.Request) -> web.Response:
        return web.Response()

    # a listener whose accept queue is full: the kernel drops every later SYN, so a connect hangs
    dropping = socket.socket()
    dropping.bind(("127.0.0.1", 0))
    dropping.listen(0)
    queued = socket.socket()
    queued.setblocking(False)
    await asyncio.get_running_loop().sock_connect(queued, dropping.getsockname())
    try:
        async with probing(health, late_limit=late_limit) as (probe, changes, late):
            await turned(probe, ready=True)
            # the backend's address now drops every connect (its node is gone)
            probe.url = "http://{}:{}/health".format(*dropping.getsockname())
            await turned(probe, ready=False)  # at the first probe, not the third
            assert changes == [True, False] and late == []
    finally:
        queued.close()
        dropping.close()


async def test_a_failed_connect_while_a_probe_waits_is_not_undone_by_its_timeout() -> None:
    released = asyncio.Event()
    hanging = False
    arrived = asyncio.Event()

    async def health(request: web.Request) -> web.Response:
        if hanging:
            arrived.set()
            await released.wait()
        return web.Response()

    async with probing(health, released=released) as (probe, changes, late):
        await turned(probe, ready=True)
        hanging = True
        await arrived.wait()  # a warm probe waits for its answer
        probe.mark_cold(reason="connect to the backend failed (refused)")
        await asyncio.sleep(2)  # past that probe's whole wait
        assert changes == [True, False] and late == [] and not probe.ready
