"""``noctaya dev`` end to end with the openai SDK: the single-gateway lifecycle.

Aspects: idle stays at 0 replicas; a cold streaming request gets SSE heartbeats while the backend
starts and then completes; 0 -> 1 -> 2 -> 0 under concurrent load; 429 at queue overflow; reject mode
answers 503 at once and a retry succeeds; a backend that never turns ready ends in activation_timeout,
after which demand returns to 0 and no replica lingers; one that exits at once, again and again, fails
its client early with the exit code and last output line; a replica killed mid-stream gives that client
an error and the next requests recover; streams in flight survive a scale-down drain; SIGINT stops
every child while a request is held (the harness checks the same after SIGTERM for every test), and
even a SIGKILLed runner leaves no child behind.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from typing import Any

import aiohttp
import httpx2
import openai
import pytest

pytestmark = pytest.mark.e2e
MESSAGES: Any = [{"role": "user", "content": "hello"}]
FAST = ("--retry-grace", "300ms")


async def stream_text(client: openai.AsyncOpenAI, **kwargs: Any) -> str:
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True, **kwargs)
    parts = [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
    return "".join(parts)


def idle(state: dict[str, Any]) -> bool:
    return state["status"]["replicas_desired"] == 0 and not state["replicas"]


def cold(state: dict[str, Any]) -> bool:
    """Idle, and the gateway has seen it (until its next probe it would still proxy a request)."""
    return idle(state) and not any(g["queue"].get("backendReady") for g in state["gateways"])


@pytest.mark.timeout(40)
async def test_idle_stays_at_zero_and_a_cold_stream_gets_heartbeats(start_dev: Any) -> None:
    dev = await start_dev(*FAST, "--heartbeat-interval", "200ms", engine={"ready_delay": "1500ms"})
    await asyncio.sleep(1.0)
    state = dev.state()
    assert idle(state) and state["status"]["activations"] == 0 and state["keda"]["pushes"] == 0
    # a cold model list before the backend was ever up is the service name, and wakes nothing
    listed = await dev.client().models.list()
    assert [m.id for m in listed.data] == ["dev"]
    state = dev.state()
    assert idle(state) and state["keda"]["pushes"] == 0 and state["status"]["demand"] == 0

    body = {"model": "m", "messages": MESSAGES, "stream": True}
    async with (
        aiohttp.ClientSession() as http,
        http.post(f"{dev.url}/chat/completions", json=body) as response,
    ):
        assert response.status == 200
        lines = [raw.decode().strip() async for raw in response.content]
        lines = [line for line in lines if line]
    first_data = next(i for i, line in enumerate(lines) if line.startswith("data:"))
    assert sum(1 for line in lines[:first_data] if line.startswith(":")) >= 3, lines[:first_data]
    assert lines[-1] == "data: [DONE]"
    assert dev.state()["keda"]["pushes"] >= 1

    assert (await stream_text(dev.client())).split() == ["tok"] * 8  # warm now
    await dev.wait(cold, within=15, what="back to 0 replicas, the gateway seeing it")
    # cold again: the model list is the one the engine gave while it was warm, and wakes nothing
    pushes = dev.state()["keda"]["pushes"]
    listed = await dev.client().models.list()
    assert [m.id for m in listed.data] == ["fake-model"]
    state = dev.state()
    assert idle(state) and state["keda"]["pushes"] == pushes and state["status"]["demand"] == 0


@pytest.mark.timeout(60)
async def test_scales_0_1_2_0_under_concurrent_load(start_dev: Any) -> None:
    dev = await start_dev(
        *FAST,
        "--target",
        "2",
        "--max",
        "2",
        engine={"ready_delay": "700ms", "tokens": 40, "token_delay": "50ms"},
    )
    client = dev.client()
    seen: set[tuple[int, int]] = set()

    async def watch() -> None:
        while True:
            status = dev.state()["status"]
            seen.add((status["replicas_desired"], status["replicas_ready"]))
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    try:
        texts = await asyncio.gather(*(stream_text(client) for _ in range(6)))
        assert all(text.split() == ["tok"] * 40 for text in texts)

        # the watcher may miss a short (2, 2) moment; the wait records what it sees too
        def both_ready(s: dict[str, Any]) -> bool:
            seen.add((s["status"]["replicas_desired"], s["status"]["replicas_ready"]))
            return (2, 2) in seen

        await dev.wait(both_ready, within=15, what="2 desired and 2 ready replicas")
        await dev.wait(idle, within=15, what="back to 0 replicas")
    finally:
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    assert (2, 2) in seen
    scalings = [line.split("keda: ", 1)[1] for line in dev.output().splitlines() if "keda: scale" in line]
    assert scalings[0] == "scale 0 -> 1 (push)", scalings
    assert any(s.startswith("scale 1 -> 2") for s in scalings), scalings
    assert scalings[-1].startswith("scale 2 -> 0") or scalings[-1].startswith("scale 1 -> 0"), scalings


@pytest.mark.timeout(40)
async def test_queue_overflow_is_429(start_dev: Any) -> None:
    dev = await start_dev(*FAST, "--max-queue", "2", engine={"ready_delay": "2s"})
    client = dev.client()
    results = await asyncio.gather(
        *(client.chat.completions.create(model="m", messages=MESSAGES) for _ in range(5)),
        return_exceptions=True,
    )
    refused = [r for r in results if isinstance(r, openai.RateLimitError)]
    served = [r for r in results if not isinstance(r, BaseException)]
    assert (len(served), len(refused)) == (2, 3), results
    assert refused[0].response.headers.get("retry-after")


@pytest.mark.timeout(40)
async def test_reject_mode_503_then_a_retry_succeeds(start_dev: Any) -> None:
    dev = await start_dev("--cold-start-mode", "reject", "--retry-after", "1s", "--retry-grace", "5s")
    client = dev.client()
    with pytest.raises(openai.APIStatusError) as info:
        await client.chat.completions.create(model="m", messages=MESSAGES)
    assert info.value.status_code == 503
    assert info.value.response.headers.get("retry-after") == "1"
    # the gateway answers 503 until its own probe has seen the replica ready: wait for that view
    await dev.wait(
        lambda s: any((g.get("queue") or {}).get("backendReady") for g in s["gateways"]),
        within=15,
        what="the gateway sees a ready backend",
    )
    reply = await client.chat.completions.create(model="m", messages=MESSAGES)
    assert reply.choices[0].message.content


@pytest.mark.timeout(40)
async def test_never_ready_backend_times_out_and_leaves_nothing(start_dev: Any) -> None:
    dev = await start_dev(*FAST, "--activation-timeout", "2s", engine={"failure": "never-ready"})
    client = dev.client()
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as info:
        await client.chat.completions.create(model="m", messages=MESSAGES)
    assert info.value.status_code == 504
    assert "activation_timeout" in str(info.value.body)
    assert 1.5 < time.monotonic() - started < 10
    replica_pids = [r["pid"] for r in dev.state()["replicas"]]
    assert replica_pids, "a replica was started"
    state = await dev.wait(
        lambda s: idle(s) and s["status"]["demand"] == 0, within=15, what="demand 0 and no replica"
    )
    assert state["status"]["replicas_ready"] == 0
    assert not await dev.left_behind(set(replica_pids))


@pytest.mark.timeout(40)
async def test_a_crash_looping_backend_fails_its_client_early_with_the_exit(start_dev: Any) -> None:
    exits = f"{sys.executable} -c \"import sys; sys.exit('cannot load /m.gguf')\" {{port}}"
    dev = await start_dev(*FAST, "--activation-timeout", "60s", "--crash-loop-exits", "2", backend=exits)
    started = time.monotonic()
    with pytest.raises(openai.APIStatusError) as info:
        await dev.client().chat.completions.create(model="m", messages=MESSAGES)
    assert time.monotonic() - started < 30  # two exits and a 1 s backoff, not the 60 s timeout
    assert info.value.status_code == 502
    assert "exited with code 1 (last output: cannot load /m.gguf)" in info.value.message
    assert "crash loop: 2 exits without a Ready replica" in dev.output()
    await dev.wait(lambda s: idle(s) and s["crashLoop"] is None, within=20, what="scaled to 0, loop over")
    assert "crash loop over" in dev.output()


@pytest.mark.timeout(45)
async def test_replica_killed_mid_stream_fails_that_client_and_recovers(start_dev: Any) -> None:
    dev = await start_dev(*FAST, engine={"ready_delay": "300ms", "tokens": 100, "token_delay": "50ms"})
    client = dev.client()
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    received = 0
    with pytest.raises((openai.APIError, httpx2.HTTPError)):
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                received += 1
            if received == 5:
                (replica,) = dev.state()["replicas"]
                os.kill(replica["pid"], signal.SIGKILL)
        raise AssertionError(f"stream ended cleanly after {received} tokens")
    assert 5 <= received < 100
    deadline = time.monotonic() + 20
    content: str | None = None
    while content is None:
        try:
            reply = await client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=3)
            content = reply.choices[0].message.content
        except openai.APIError:
            assert time.monotonic() < deadline, dev.output()
            await asyncio.sleep(0.2)
    assert content
    assert dev.state()["restarts"] >= 1


@pytest.mark.timeout(60)
async def test_streams_in_flight_survive_a_scale_down_drain(start_dev: Any) -> None:
    dev = await start_dev(
        *FAST,
        "--target",
        "4",
        "--max",
        "2",
        engine={"ready_delay": "300ms", "tokens": 200, "token_delay": "50ms"},
    )
    client = dev.client()
    warm = [asyncio.create_task(stream_text(client, max_tokens=40)) for _ in range(8)]  # demand 8: 2 replicas
    await dev.wait(lambda s: s["status"]["replicas_ready"] == 2, within=15, what="2 ready replicas")
    # with both replicas serving, new connections spread over them
    long = [asyncio.create_task(stream_text(client, max_tokens=120)) for _ in range(4)]
    short = [asyncio.create_task(stream_text(client, max_tokens=10)) for _ in range(4)]
    await asyncio.gather(*warm, *short)
    # demand falls to the 4 long streams (target 4): the local KEDA scales 2 -> 1 while they run
    await dev.wait(lambda s: s["status"]["replicas_desired"] == 1, within=10, what="scale-down to 1")
    assert not any(task.done() for task in long)
    for text in await asyncio.gather(*long):
        assert text.split() == ["tok"] * 120  # every token, also from the replica being drained
    assert "draining" in dev.output()


@pytest.mark.timeout(40)
async def test_sigint_stops_every_child_while_a_request_is_held(start_dev: Any) -> None:
    dev = await start_dev(*FAST, "--drain-timeout", "1s", engine={"ready_delay": "30s"})
    held = asyncio.create_task(stream_text(dev.client()))
    await dev.wait(lambda s: len(s["replicas"]) == 1, within=10, what="a starting replica")
    pids = set(dev.pids)
    assert await dev.stop(signal.SIGINT) == 0
    assert not await dev.left_behind(pids)
    held.cancel()
    await asyncio.gather(held, return_exceptions=True)


@pytest.mark.timeout(40)
async def test_children_stop_even_when_the_runner_is_killed(start_dev: Any) -> None:
    # a missing tool is a failure, not a skip: without it the children would outlive the runner
    assert sys.platform.startswith("linux"), "parent-death signals need Linux"
    assert shutil.which("setpriv"), "parent-death signals need setpriv (util-linux)"
    dev = await start_dev(*FAST, "--min", "1")
    await dev.wait(lambda s: len(s["replicas"]) == 1, within=10, what="the minReplicaCount replica")
    pids = set(dev.pids) - {dev.proc.pid}
    assert len(pids) == 2  # the gateway and the replica
    dev.kill()  # SIGKILL: no chance to clean up
    assert not await dev.left_behind(pids)
