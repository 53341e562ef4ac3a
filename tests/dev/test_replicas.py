"""Backend replicas as processes (the built-in fake engine) behind the local Service.

Aspects: scaling up starts processes that join the Service once ready; scaling down drains a
replica: a stream running on it completes in full before it gets SIGTERM; a replica that dies is
replaced (crash-loop backoff) and the restart is counted; stopping the deployment leaves no process;
a command without ``{port}`` is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable

import aiohttp
import pytest

from noctaya.dev import replicas, service

ENGINE = (
    f"{sys.executable} -m noctaya.dev.fake_engine --port {{port}} --ready-delay 200ms "
    "--tokens 30 --token-delay 50ms"
)


async def until(predicate: Callable[[], bool], within: float = 10.0) -> None:
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 - polling a plain predicate is the point
            await asyncio.sleep(0.02)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@contextlib.asynccontextmanager
async def deployment(tmp_path: pathlib.Path, events: list[str]) -> AsyncIterator[replicas.Deployment]:
    svc = service.Service()
    await svc.start()
    dep = replicas.Deployment(
        command=ENGINE,
        readiness_path="/health",
        service=svc,
        log_dir=tmp_path,
        drain_timeout=10,
        stop_grace=5,
        on_event=events.append,
    )
    task = asyncio.create_task(dep.run())
    try:
        yield dep
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await svc.stop()


async def stream(url: str, ends: dict[int, float], index: int) -> int:
    body = {"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}
    tokens = 0
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{url}/v1/chat/completions", json=body) as response,
    ):
        assert response.status == 200
        async for line in response.content:
            if line.startswith(b"data: {"):
                tokens += 1
    ends[index] = time.monotonic()
    return tokens


@pytest.mark.timeout(60)
async def test_scale_up_then_drain_keeps_streams_whole(tmp_path: pathlib.Path) -> None:
    events: list[str] = []
    async with deployment(tmp_path, events) as dep:
        dep.scale(2)
        await until(lambda: dep.ready == 2)
        assert dep.service.ready
        pids = [r.child.pid for r in dep.replicas]
        ends: dict[int, float] = {}
        # two connections through the round-robin Service: one stream on each replica
        streams = [asyncio.create_task(stream(dep.service.url, ends, i)) for i in range(2)]

        def streaming(replica: replicas.Replica) -> bool:
            endpoint = dep.service.endpoint(replica.name)
            return endpoint is not None and endpoint.busy(quiet=0.5) == 1

        await until(lambda: all(streaming(r) for r in dep.live))  # both streams under way
        victim = max(dep.live, key=lambda r: r.started)  # the newest ready replica goes first
        endpoint = dep.service.endpoint(victim.name)
        assert endpoint is not None and endpoint.busy(quiet=0.5) == 1
        dep.scale(1)
        counts = await asyncio.gather(*streams)
        assert all(c >= 30 for c in counts), counts  # every token arrived, also on the drained one
        await until(lambda: victim.phase is replicas.Phase.STOPPED)
        stopped_at = time.monotonic()
        assert stopped_at >= max(ends.values())
        assert victim.child.returncode == 0  # it got SIGTERM after the drain and exited cleanly
        assert len(dep.live) == 1
        assert not alive(victim.child.pid or 0)
    assert not [pid for pid in pids if pid and alive(pid)]
    assert any("draining" in e for e in events)


@pytest.mark.timeout(60)
async def test_a_dead_replica_is_replaced(tmp_path: pathlib.Path) -> None:
    events: list[str] = []
    async with deployment(tmp_path, events) as dep:
        dep.scale(1)
        await until(lambda: dep.ready == 1)
        (first,) = dep.replicas
        os.kill(first.child.pid or 0, signal.SIGKILL)
        await until(lambda: dep.restarts == 1)
        await until(lambda: dep.ready == 1 and dep.replicas[0] is not first)
        assert any("exited with code -9" in e for e in events), events


def test_command_needs_the_port_placeholder(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ValueError, match="port"):
        replicas.render_command("server --port 8000", port=1)
    assert replicas.render_command("srv --port {port} --name 'a b'", port=31) == [
        "srv",
        "--port",
        "31",
        "--name",
        "a b",
    ]
