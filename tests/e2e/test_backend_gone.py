"""``noctaya dev`` end to end: requests that reach no backend are held, not failed.

The local Service refuses connections while it has no ready endpoint, as a ClusterIP Service does,
and a replica that dies leaves it at once. The gateway keeps calling the backend ready until its next
probe, so requests meet those windows; each of them provably reached nothing and is held as a cold
request instead of failing. Aspects: with one of two replicas killed, every request of a series
50 ms apart succeeds; in the moments after the last replica stopped on scale to zero, every request
of a series succeeds (the lease wakes the backend again); a wrong readiness path is reported at once
in ``noctaya dev``'s events and status line (and the gateway's queue state says its probe finds no
ready endpoint), not shown as a silent wait.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import signal
import sys
import time
from typing import Any

import aiohttp
import openai
import pytest

pytestmark = pytest.mark.e2e
MESSAGES: Any = [{"role": "user", "content": "hello"}]
PY = sys.executable


CLOSE_WAIT, ESTABLISHED = "08", "01"


def tcp_sockets() -> list[tuple[int, int, str]]:
    """(local port, remote port, state) of every IPv4 TCP socket on the machine."""
    rows = []
    for line in pathlib.Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        rows.append((int(fields[1].split(":")[1], 16), int(fields[2].split(":")[1], 16), fields[3]))
    return rows


async def connections_settled(*, victim_port: int, service_url: str) -> None:
    """The dead replica's connections are closed by the Service, and every connection the Service
    closed in turn is closed by its client (none left in CLOSE_WAIT): no pooled connection to it."""
    service_port = int(service_url.rsplit(":", 1)[1])
    deadline = time.monotonic() + 15  # the kernel's view: quick, but a loaded machine delays the close
    while True:
        rows = tcp_sockets()
        upstream = [r for r in rows if r[1] == victim_port and r[2] in (ESTABLISHED, CLOSE_WAIT)]
        stale = [r for r in rows if r[1] == service_port and r[2] == CLOSE_WAIT]
        if not upstream and not stale:
            return
        assert time.monotonic() < deadline, (upstream, stale)
        await asyncio.sleep(0.002)


async def ask(client: openai.AsyncOpenAI) -> str:
    reply = await client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=2)
    return reply.choices[0].message.content or ""


@pytest.mark.timeout(60)
async def test_a_killed_replica_fails_no_request_that_never_reached_it(start_dev: Any) -> None:
    dev = await start_dev(
        "--min", "2", "--max", "2", "--retry-grace", "300ms", engine={"ready_delay": "200ms", "tokens": 2}
    )
    await dev.wait(lambda s: s["status"]["replicas_ready"] == 2, within=20, what="2 ready replicas")
    client = dev.client()
    victim = dev.state()["replicas"][0]
    answers: list[str] = []
    for index in range(20):
        if index == 5:  # between two requests: nothing is in flight on it
            os.kill(victim["pid"], signal.SIGKILL)
            # a request written on a pooled connection in the instant the replica dies may have
            # reached it, so it is not held but fails: the series resumes once the kernel shows every
            # connection to it closed (well before the runner would have noticed the death by polling)
            await connections_settled(victim_port=victim["port"], service_url=dev.state()["backendUrl"])
        answers.append(await ask(client))
        await asyncio.sleep(0.05)
    assert answers == ["tok tok"] * 20
    assert "exited with code -9" in dev.output()


@pytest.mark.timeout(60)
async def test_requests_right_after_the_last_replica_stopped_are_held_and_served(start_dev: Any) -> None:
    dev = await start_dev("--retry-grace", "300ms", cooldown="500ms", engine={"ready_delay": "300ms"})
    client = dev.client()
    assert await ask(client) == "tok tok"  # warm: one replica
    deadline = time.monotonic() + 20
    # the moment the last replica stopped on scale to zero (not the instant its idle connections are
    # closed: a request written to one at that very instant may have reached it, and is a 502)
    while "replica-1: stopped" not in dev.output():
        assert time.monotonic() < deadline, dev.output()
        await asyncio.sleep(0.005)

    async def later(delay: float) -> str:
        await asyncio.sleep(delay)
        return await ask(client)

    results = await asyncio.gather(*(later(0.05 * i) for i in range(20)), return_exceptions=True)
    assert results == ["tok tok"] * 20, results
    # the series spans the moments after the stop: they were held and woke it again
    assert "keda: scale 0 -> 1" in dev.output().split("replica-1: stopped", 1)[1]


@pytest.mark.timeout(40)
async def test_a_wrong_readiness_path_is_reported_at_once(start_dev: Any) -> None:
    dev = await start_dev(
        "--readiness-path", "/healthz-typo", "--activation-timeout", "10s", engine={"ready_delay": "0s"}
    )
    client = dev.client()
    held = asyncio.create_task(ask(client))
    try:
        state = await dev.wait(
            lambda s: any(r.get("readiness") for r in s["replicas"]), within=10, what="a readiness outcome"
        )
        assert state["replicas"][0]["readiness"] == "readiness /healthz-typo answered 404"
        await dev.wait(
            lambda s: "readiness /healthz-typo answered 404" in dev.output(), within=5, what="the event line"
        )
        # the gateway probes the Service, which has no ready endpoint: it says so, not "starting". Its
        # probe runs on its own schedule, not the replica supervisor's: its outcome is waited for
        gateway = dev.state()["gateways"][0]
        async with aiohttp.ClientSession() as http, asyncio.timeout(10):
            while True:
                async with http.get(f"http://127.0.0.1:{gateway['port']}/noctaya/queue") as response:
                    queue = await response.json()
                if queue.get("backendError") is not None:
                    break
                await asyncio.sleep(0.05)
        assert queue["backendError"] == "readiness /healthz-typo failed: connection refused or timed out"
        assert queue["backendReady"] is False and queue["queued"] == 1

        def in_status_line(_: object) -> bool:
            lines = [line for line in dev.output().splitlines() if " status: " in line]
            return any("replica-1: readiness /healthz-typo answered 404" in line for line in lines)

        await dev.wait(in_status_line, within=5, what="the outcome in the status line")
        assert not held.done()
    finally:
        held.cancel()
        await asyncio.gather(held, return_exceptions=True)
