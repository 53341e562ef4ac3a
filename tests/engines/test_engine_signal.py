"""Scaling on llama.cpp's own queue: a real server with ``--metrics`` and one slot behind ``noctaya dev``.

With ``--parallel 1`` the server runs one request at a time and defers the others, which its
``llamacpp:requests_deferred`` gauge counts. Concurrent streams through the gateway make that queue
grow; with ``--engine-queue-target 1`` (and a gateway-count target no load here reaches) the local
KEDA scales the backend 1 -> 2 on the engine's queue, the status line shows the engine signal, and
once the streams end the queue drains and the backend goes back to one replica. The same load with
only the gateways' count (the same high target) does not scale.
"""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import openai
import pytest

from tests.engines import conftest, model

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("engines")]
MESSAGES: Any = [{"role": "user", "content": "hello there"}]
LONG: Any = {"ignore_eos": True}  # generate exactly max_tokens
#: a cooldown no test waits for: going back from 2 is the metric's doing, not the idle path's
COMMON = ("--retry-grace", "300ms", "--served-model", model.MODEL_NAME, "--target", "100", "--max", "2")
STREAMS = 3
TOKENS = 1500


async def stream(client: openai.AsyncOpenAI) -> int:
    chunks = 0
    reply = await client.chat.completions.create(
        model=model.MODEL_NAME, messages=MESSAGES, max_tokens=TOKENS, stream=True, extra_body=LONG
    )
    async for chunk in reply:
        if chunk.choices and chunk.choices[0].delta.content:
            chunks += 1
    return chunks


def one_slot(llama_server: pathlib.Path, tiny_model: pathlib.Path) -> str:
    return conftest.server_command(binary=llama_server, model_path=tiny_model, extra="--metrics --parallel 1")


@pytest.mark.timeout(180)
async def test_the_engines_queue_scales_out_and_back(
    start_dev: Any, llama_server: pathlib.Path, tiny_model: pathlib.Path
) -> None:
    dev = await start_dev(
        *COMMON,
        "--engine-queue-target",
        "1",
        "--engine-queue-metric",
        "llamacpp:requests_deferred",
        "--engine-interval",
        "200ms",
        "--scale-down-window",
        "1s",
        backend=one_slot(llama_server, tiny_model),
        cooldown="60s",
    )
    client = dev.client(timeout=150.0)
    await asyncio.gather(*(stream(client) for _ in range(STREAMS)))
    output = dev.output()
    assert "keda: scale 1 -> 2" in output, output[-3000:]
    assert "engine ok" in output and "engineQueue" in output, output[-3000:]
    await dev.wait(
        lambda s: s["status"]["replicas_desired"] == 1,
        within=60,
        what="back to one replica as the queue drains",
    )
    assert "keda: scale 2 -> 1" in dev.output()


@pytest.mark.timeout(180)
async def test_the_same_load_on_the_gateways_count_alone_does_not_scale(
    start_dev: Any, llama_server: pathlib.Path, tiny_model: pathlib.Path
) -> None:
    dev = await start_dev(*COMMON, backend=one_slot(llama_server, tiny_model), cooldown="60s")
    client = dev.client(timeout=150.0)
    chunks = await asyncio.gather(*(stream(client) for _ in range(STREAMS)))
    assert all(chunks)
    output = dev.output()
    assert "keda: scale 0 -> 1" in output and "keda: scale 1 -> 2" not in output, output[-3000:]
    assert dev.state()["status"]["engine"] is None  # nothing reads the engines
