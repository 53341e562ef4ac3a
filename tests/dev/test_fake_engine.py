"""The fake OpenAI-compatible engine, driven by the real ``openai`` SDK.

Aspects: chat and text completions, plain and streamed (with usage), parse in the SDK; max_tokens caps
the answer; embeddings as floats and as base64 (the SDK's default); models list; /health turns ready
after the configured delay; failure modes (500s, never ready, crash mid-stream, invalid SSE);
/metrics exposes the queue depth while requests run; malformed or too deeply nested JSON is a 400;
as a process it prints its address and, on SIGTERM, turns unready, finishes the open stream and
exits 0.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from collections.abc import AsyncIterator

import aiohttp
import openai
import pytest

from noctaya.dev import fake_engine

MESSAGES: list[openai.types.chat.ChatCompletionMessageParam] = [{"role": "user", "content": "hello there"}]


@pytest.fixture
async def engine() -> AsyncIterator[fake_engine.RunningEngine]:
    async with fake_engine.running(fake_engine.FakeEngine(tokens=4)) as running:
        yield running


@pytest.fixture
async def client(engine: fake_engine.RunningEngine) -> AsyncIterator[openai.AsyncOpenAI]:
    async with openai.AsyncOpenAI(base_url=engine.url + "/v1", api_key="x", max_retries=0) as sdk:
        yield sdk


async def test_chat_plain_and_streamed(client: openai.AsyncOpenAI) -> None:
    result = await client.chat.completions.create(model="fake-model", messages=MESSAGES)
    assert result.choices[0].message.content == "tok tok tok tok"
    assert result.choices[0].finish_reason == "length"
    assert result.usage is not None and (result.usage.prompt_tokens, result.usage.completion_tokens) == (2, 4)
    stream = await client.chat.completions.create(
        model="fake-model",
        messages=MESSAGES,
        stream=True,
        stream_options={"include_usage": True},
        max_tokens=2,
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "tok tok "
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 2


async def test_text_completions(client: openai.AsyncOpenAI) -> None:
    result = await client.completions.create(model="fake-model", prompt="a b c", max_tokens=3)
    assert result.choices[0].text == "tok tok tok" and result.usage is not None
    stream = await client.completions.create(model="fake-model", prompt="a", stream=True)
    assert "".join([c.choices[0].text async for c in stream]) == "tok " * 4


async def test_embeddings_and_models(client: openai.AsyncOpenAI) -> None:
    default = await client.embeddings.create(
        model="fake-model", input=["one", "two words"]
    )  # base64 on the wire
    floats = await client.embeddings.create(model="fake-model", input="one", encoding_format="float")
    assert len(default.data) == 2 and len(default.data[0].embedding) == 8
    assert default.data[0].embedding == pytest.approx(floats.data[0].embedding)
    assert [m.id for m in (await client.models.list()).data] == ["fake-model"]


async def test_health_follows_ready_delay_and_failure_modes(
    engine: fake_engine.RunningEngine, client: openai.AsyncOpenAI
) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(engine.url + "/health") as response:
            assert response.status == 200
        engine.state.ready_delay = 3600
        async with http.get(engine.url + "/health") as response:
            assert response.status == 503
        engine.state.ready_delay = 0
        engine.state.failure = "never-ready"
        async with http.get(engine.url + "/health") as response:
            assert response.status == 503
        async with http.post(engine.url + "/v1/chat/completions", data=b"{oops") as response:
            assert response.status == 400
        nested = b"[" * 5000 + b"]" * 5000
        async with http.post(engine.url + "/v1/chat/completions", data=nested) as response:
            assert response.status == 400
            assert (await response.json())["error"]["code"] == "invalid_json"
    engine.state.failure = "error-500"
    with pytest.raises(openai.InternalServerError):
        await client.chat.completions.create(model="fake-model", messages=MESSAGES)
    engine.state.failure = "crash-mid-stream"
    stream = await client.chat.completions.create(model="fake-model", messages=MESSAGES, stream=True)
    with pytest.raises(openai.APIError):
        async for _ in stream:
            pass
    with pytest.raises(openai.APIConnectionError):
        await client.chat.completions.create(model="fake-model", messages=MESSAGES)
    engine.state.failure = "invalid-sse"
    async with aiohttp.ClientSession() as http:
        body = {"model": "m", "stream": True, "messages": MESSAGES}
        async with http.post(engine.url + "/v1/chat/completions", json=body) as response:
            assert "data: {not json" in await response.text()


async def test_metrics_show_queue_depth(engine: fake_engine.RunningEngine) -> None:
    engine.state.token_delay = 0.05
    async with aiohttp.ClientSession() as http:
        running = asyncio.create_task(http.post(engine.url + "/v1/completions", json={"prompt": "x"}))
        async with asyncio.timeout(30):
            while engine.state.active == 0:  # noqa: ASYNC110  (the request is being admitted)
                await asyncio.sleep(0.005)
        async with http.get(engine.url + "/metrics") as response:
            assert "fake_engine_queue_depth 1" in await response.text()
        async with await running as response:
            assert response.status == 200
        async with http.get(engine.url + "/metrics") as response:
            text = await response.text()
    assert "fake_engine_queue_depth 0" in text and "fake_engine_requests_total 1" in text


@pytest.mark.e2e
async def test_process_sigterm_finishes_the_open_stream_and_exits_0() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "noctaya.dev.fake_engine",
        "--port",
        "0",
        "--tokens",
        "10",
        "--token-delay",
        "30ms",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = (await asyncio.wait_for(process.stdout.readline(), 15)).decode()
        match = re.search(r"listening on (http://\S+)", line)
        assert match, line
        url = match.group(1)
        async with aiohttp.ClientSession() as http:
            body = {"model": "m", "stream": True, "messages": MESSAGES}
            async with http.post(url + "/v1/chat/completions", json=body) as response:
                await response.content.readline()
                process.send_signal(signal.SIGTERM)
                rest = await response.content.read()
        assert rest.endswith(b"data: [DONE]\n\n") and rest.count(b'"tok "') == 10
        assert await asyncio.wait_for(process.wait(), 15) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
