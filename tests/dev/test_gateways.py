"""Gateway processes of ``noctaya dev`` (real child processes on loopback).

Aspects: when one gateway exits during start, starting the others stops too (no start left waiting
behind the failure) and the failure names the gateway, its exit code and its last output; stopping
ends every gateway process.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Callable

import aiohttp
import pytest

from noctaya.dev import gateways, processes


def gateway(port: int, tmp_path: pathlib.Path, name: str, code: str) -> gateways.GatewayProcess:
    child = processes.Child(name=name, argv=[sys.executable, "-c", code], log_path=tmp_path / f"{name}.log")
    return gateways.GatewayProcess(port=port, child=child)


@pytest.mark.timeout(30)
async def test_a_gateway_failing_to_start_ends_the_other_starts(
    tmp_path: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    events: list[str] = []
    group = gateways.Gateways(front=None, on_event=events.append)
    failing = gateway(reserve_port(), tmp_path, "gateway-0", "import sys; print('bad config'); sys.exit(3)")
    silent = gateway(reserve_port(), tmp_path, "gateway-1", "import time; time.sleep(60)")  # never answers
    group.add(failing)
    group.add(silent)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1.0)) as session:
        with pytest.raises(ExceptionGroup) as info:
            await group.start_all(session=session)
    [error] = info.value.exceptions
    assert isinstance(error, gateways.StartError)
    assert "gateway-0 exited with code 3" in str(error) and "bad config" in str(error)
    assert silent.child.running and not silent.healthy and events == []
    await group.stop(grace=2.0)
    assert not failing.child.running and not silent.child.running
