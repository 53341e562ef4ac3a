"""``noctaya dev`` scaling on the engines' own queue, with the fake engine reporting vLLM's names.

Aspects: through two gateways and the aggregate scaler (real processes), streams beyond the fake
engine's one slot are reported as ``vllm:num_requests_waiting``; the aggregate scaler reads the Ready
replica from the runner's endpoints file, serves the engine signal (its ``/healthz`` and the status
line show it) and the local KEDA scales 1 -> 2 while a gateway-count target of 100 alone would not;
when the streams end the queue drains and the backend goes back to one replica.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from tests.e2e.conftest import engine_cmd

pytestmark = pytest.mark.e2e
MESSAGES: Any = [{"role": "user", "content": "hello"}]


async def stream_text(client: openai.AsyncOpenAI) -> str:
    stream = await client.chat.completions.create(model="m", messages=MESSAGES, stream=True)
    return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])


@pytest.mark.timeout(90)
async def test_the_aggregate_scaler_scales_on_the_engines_queue(start_dev: Any) -> None:
    backend = engine_cmd(ready_delay="0s", tokens=60, token_delay="50ms") + " --slots 1"
    dev = await start_dev(
        "--target",
        "100",
        "--max",
        "2",
        "--engine-queue-target",
        "1",
        "--engine-interval",
        "200ms",
        "--scale-down-window",
        "1s",
        backend=backend,
        gateways=2,
        cooldown="60s",
    )
    client = dev.client(timeout=60.0)
    texts = await asyncio.gather(*(stream_text(client) for _ in range(3)))
    assert all(texts)
    output = dev.output()
    assert "keda: scale 1 -> 2" in output, output[-3000:]
    assert "engine ok" in output and "engineQueue" in output, output[-3000:]
    await dev.wait(lambda s: s["status"]["replicas_desired"] == 1, within=30, what="back to one replica")
