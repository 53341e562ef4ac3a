"""Backend replicas as processes (the built-in fake engine) behind the local Service.

Aspects: scaling up starts processes that join the Service once ready; scaling down drains a
replica: a stream running on it completes in full before it gets SIGTERM; a replica that dies is
replaced (crash-loop backoff) and the restart is counted; a replica that exits at once, again and
again, makes a crash loop: a real gateway's waiting client (the openai SDK) gets a 502 naming the
last exit code and output line at once, not after the activation timeout, and scaling to 0 ends it;
each replica's port stays held (bound, never probed and released) until it has ended; stopping the
deployment leaves no process; a command without ``{port}`` is refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import pathlib
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Callable

import aiohttp
import openai
import pytest

from noctaya.dev import replicas, service
from noctaya.gateway import testing

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
async def deployment(
    tmp_path: pathlib.Path, events: list[str], *, command: str = ENGINE, crash_loop_exits: int = 3
) -> AsyncIterator[replicas.Deployment]:
    svc = service.Service()
    await svc.start()
    dep = replicas.Deployment(
        command=command,
        readiness_path="/health",
        service=svc,
        log_dir=tmp_path,
        drain_timeout=10,
        stop_grace=5,
        crash_loop_exits=crash_loop_exits,
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


EXITS_AT_ONCE = (
    f"{sys.executable} -c \"import sys; print('loading', flush=True); "
    f"print('error: no model at /m.gguf \\x1b[2J', file=sys.stderr); sys.exit(3)\" {{port}}"
)


@pytest.mark.timeout(60)
async def test_a_crash_loop_fails_the_waiting_client_at_once_with_the_last_exit(
    tmp_path: pathlib.Path,
) -> None:
    events: list[str] = []
    async with (
        deployment(tmp_path, events, command=EXITS_AT_ONCE, crash_loop_exits=2) as dep,
        testing.GatewayStarter(backend_url=dep.service.url) as starter,
    ):
        gateway = await starter.start(activationTimeout="60s")
        client = openai.AsyncOpenAI(base_url=gateway.url + "/v1", api_key="unused", max_retries=0, timeout=50)
        loop = asyncio.get_running_loop()
        try:
            held = asyncio.create_task(client.completions.create(model="m", prompt="hi"))
            await gateway.wait_for(lambda: gateway.admission.queued == 1)
            started = loop.time()
            dep.scale(1)  # as the local KEDA does on the held request's demand
            with pytest.raises(openai.APIStatusError) as caught:
                await held
        finally:
            await client.close()
        assert loop.time() - started < 30  # two exits and a backoff, not the 60 s activation timeout
        message = caught.value.message
        assert caught.value.status_code == 502, message
        assert "replica-2 exited with code 3 (last output: error: no model at /m.gguf ?[2J)" in message
        assert dep.crash_loop is not None and dep.exits_without_ready == 2
        assert any(e.startswith("crash loop: 2 exits without a Ready replica") for e in events), events
        # the Service answers the same to anyone while the loop lasts, as an OpenAI-shaped error
        async with aiohttp.ClientSession() as http, http.get(dep.service.url + "/v1/models") as response:
            assert response.status == 503
            assert (await response.json())["error"]["code"] == "backend_failed"
        dep.scale(0)
        after: str | None = dep.crash_loop  # (read again: scale(0) ended it)
        assert after is None and not dep.service.listening  # refused again, as with no Pod
        assert "crash loop over: requests wait for a replica again" in events


@pytest.mark.timeout(60)
async def test_a_replicas_port_is_held_from_its_start_until_it_has_ended(tmp_path: pathlib.Path) -> None:
    """A replica that never listens: its port is still taken (nothing else can bind it) until the
    replica is stopped, then free again."""
    events: list[str] = []
    never_listens = f'{sys.executable} -c "import time; time.sleep(60)" {{port}}'
    async with deployment(tmp_path, events, command=never_listens) as dep:
        dep.scale(1)
        await until(lambda: bool(dep.live) and dep.live[0].child.running)
        (replica,) = dep.live
        with socket.socket() as other, pytest.raises(OSError) as caught:
            other.bind(("127.0.0.1", replica.port))
        assert caught.value.errno == errno.EADDRINUSE
        dep.scale(0)
        await until(lambda: replica.phase is replicas.Phase.STOPPED)
        with socket.socket() as other:
            other.bind(("127.0.0.1", replica.port))


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
