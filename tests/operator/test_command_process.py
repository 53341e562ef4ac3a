"""``noctaya operator`` as its own process against the emulated API server.

Aspects: the command connects with ``--server``, takes the Lease, reconciles an LLMService to Ready,
serves ``/healthz`` (leader) and ``/metrics``, logs JSON lines, and on SIGTERM releases the Lease and
exits 0.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Callable

import aiohttp
import pytest

from tests.operator.apiserver import ApiServer
from tests.operator.cluster import SimulatedCluster
from tests.operator.conftest import WaitFor
from tests.operator.scenario import LLMSERVICES, RUNTIMES, runtime_body, service_body, status_of


@pytest.mark.e2e
@pytest.mark.timeout(90)
async def test_operator_process_reconciles_and_exits_cleanly(
    server: ApiServer, cluster: SimulatedCluster, wait_for: WaitFor, reserve_port: Callable[[], int]
) -> None:
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, service_body())
    port = reserve_port()  # held for the test: the operator binds it, nobody else can
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "noctaya",
        "operator",
        "--server",
        str(server.url).rstrip("/"),
        "-n",
        "ai",
        "--identity",
        "proc",
        "--lease-namespace",
        "noctaya-system",
        "--health-listen",
        f"127.0.0.1:{port}",
        "--log-format",
        "json",
        "--lease-duration",
        "3",
        "--lease-renew-deadline",
        "2",
        "--lease-retry-period",
        "0.5",
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        await wait_for(lambda: status_of(server).get("phase") == "Ready", within=60, message="Ready")
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/healthz") as rsp:
                assert rsp.status == 200
                assert (await rsp.json())["leader"] is True
            async with session.get(f"http://127.0.0.1:{port}/metrics") as rsp:
                assert 'noctaya_reconciles_total{result="ok"}' in await rsp.text()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(proc.wait(), 30) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    lease = server.must("coordination.k8s.io/v1/leases", "noctaya-system", "noctaya-operator")
    assert lease["spec"]["holderIdentity"] == ""
    assert proc.stderr is not None
    lines = [line for line in (await proc.stderr.read()).decode().splitlines() if line.startswith("{")]
    assert lines and all("level" in json.loads(line) for line in lines)
