"""llama.cpp's server (built from source, a tiny generated model) behind ``noctaya dev``.

With the openai SDK, through the gateway: a cold start serves chat and ``/v1/completions``, with and
without streaming, and a stream's chunks arrive one by one as the engine writes them (timed);
``GET /v1/models`` is answered while cold without waking the backend (the engine's own list once it
has been Ready); concurrent streams scale it
1 -> 2; a request right after a stream is served (the engine closes a stream's connection); a
replica killed mid-stream fails only that stream; the crash and scale-to-zero windows lose
no request that never reached an engine; idle, it scales back to zero; reject mode answers 503 with
``Retry-After`` and then serves; README.md's command for the example runtime (its flags and
readiness path) runs as written.
The engine's own readiness path is ``/health`` (503 while loading).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import pathlib
import shlex
import signal
import time
from typing import Any

import aiohttp
import openai
import pytest
import yaml

from tests.e2e.test_backend_gone import connections_settled
from tests.engines import model
from tests.engines.conftest import ROOT

# one worker runs the tier: each test runs llama.cpp replicas, which would crowd each other out
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.xdist_group("engines")]
MESSAGES: Any = [{"role": "user", "content": "hello there"}]
LONG: Any = {"ignore_eos": True}  # llama.cpp: generate exactly max_tokens (random weights stop anywhere)
FAST = ("--retry-grace", "300ms", "--served-model", model.MODEL_NAME)


def idle(state: dict[str, Any]) -> bool:
    return state["status"]["replicas_desired"] == 0 and not state["replicas"]


def cold(state: dict[str, Any]) -> bool:
    """Idle, and the gateway has seen it (until its next probe it would still proxy a request)."""
    return idle(state) and not any(g["queue"].get("backendReady") for g in state["gateways"])


async def chat(client: openai.AsyncOpenAI, *, tokens: int = 4) -> str:
    reply = await client.chat.completions.create(
        model=model.MODEL_NAME, messages=MESSAGES, max_tokens=tokens, extra_body=LONG
    )
    assert reply.model and reply.usage is not None and reply.usage.completion_tokens == tokens
    return reply.choices[0].message.content or ""


async def timed_stream(client: openai.AsyncOpenAI, *, tokens: int) -> tuple[float, list[float], str]:
    """(time to first content chunk, arrival times of content chunks, text) of one chat stream."""
    started = time.perf_counter()
    stream = await client.chat.completions.create(
        model=model.MODEL_NAME, messages=MESSAGES, max_tokens=tokens, stream=True, extra_body=LONG
    )
    arrivals: list[float] = []
    text = []
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.perf_counter())
            text.append(chunk.choices[0].delta.content)
    return arrivals[0] - started, arrivals, "".join(text)


@pytest.mark.timeout(90)
async def test_cold_start_chat_completions_and_streaming(start_dev: Any, llama_cmd: str) -> None:
    dev = await start_dev(*FAST, backend=llama_cmd)
    client = dev.client(timeout=60.0)
    assert idle(dev.state())
    assert await chat(client)  # cold: held until /health answers 200, then served

    completion = await client.completions.create(
        model=model.MODEL_NAME, prompt="once upon a time", max_tokens=5, extra_body=LONG
    )
    assert completion.usage is not None and completion.usage.completion_tokens == 5
    text_stream = await client.completions.create(
        model=model.MODEL_NAME, prompt="once", max_tokens=6, stream=True, extra_body=LONG
    )
    assert len([c async for c in text_stream if c.choices and c.choices[0].text]) >= 3

    ttft, arrivals, text = await timed_stream(client, tokens=200)  # a few ms a token: ~0.5 s
    assert text and len(arrivals) >= 100, len(arrivals)
    # relayed as generated, not in one burst at the end: the chunks come in many separate moments
    # spread over the generation (a loaded machine may bunch a few, never all; it only slows the
    # engine, which spreads them more). The time to the first chunk is the engine's prompt work, which
    # load stretches at will, so it is not compared.
    assert ttft > 0
    span = arrivals[-1] - arrivals[0]
    assert span >= 0.05, span  # 200 tokens at a few ms each; one burst would be well under 5 ms
    moments = 1 + sum(1 for a, b in itertools.pairwise(arrivals) if b - a > 0.0005)
    assert moments >= 10, moments  # a buffered relay gives 1 or 2; a loaded machine bunches down to ~15
    assert dev.state()["status"]["activations"] >= 1


@pytest.mark.timeout(90)
async def test_requests_right_after_streams_are_served(start_dev: Any, llama_cmd: str) -> None:
    """llama.cpp's server closes a connection after a stream without saying so (no
    ``Connection: close``): a request sent on it then would be lost after it was written."""
    dev = await start_dev(*FAST, backend=llama_cmd)
    client = dev.client(timeout=60.0)
    assert await chat(client)
    for _ in range(40):
        _, arrivals, text = await timed_stream(client, tokens=3)
        assert text and arrivals
        assert await chat(client, tokens=2)  # at once, on the gateway's pooled connections


@pytest.mark.timeout(60)
async def test_models_while_cold_do_not_wake_the_engine(start_dev: Any, llama_cmd: str) -> None:
    dev = await start_dev(*FAST, backend=llama_cmd)
    client = dev.client()
    for _ in range(5):
        listing = await client.models.list()
        assert [m.id for m in listing.data] == [model.MODEL_NAME]
    await asyncio.sleep(0.5)  # a wake-up would have shown by now: KEDA polls every 200 ms
    state = dev.state()
    assert idle(state) and state["status"]["activations"] == 0 and state["keda"]["pushes"] == 0
    assert await chat(client)  # a real request does wake it
    warm = await client.models.list()  # warm: the engine's own answer, proxied
    assert model.MODEL_NAME in [m.id for m in warm.data]
    # cold again: the gateway answers the list the engine gave when it turned Ready, waking nothing
    await dev.wait(cold, within=30, what="back to 0 replicas, the gateway seeing it")
    pushes = dev.state()["keda"]["pushes"]
    listed = await client.models.list()
    assert [m.id for m in listed.data] == [m.id for m in warm.data]
    assert idle(dev.state()) and dev.state()["keda"]["pushes"] == pushes


@pytest.mark.timeout(120)
async def test_concurrent_streams_scale_one_to_two(start_dev: Any, llama_cmd: str) -> None:
    dev = await start_dev(*FAST, "--target", "2", "--max", "2", backend=llama_cmd)
    client = dev.client(timeout=90.0)
    results = await asyncio.gather(*(timed_stream(client, tokens=200) for _ in range(6)))
    assert all(text for _, _, text in results)
    output = dev.output()
    assert "keda: scale 0 -> 1" in output and "keda: scale 1 -> 2" in output, output[-3000:]
    await dev.wait(lambda s: "replica-2: ready after" in dev.output(), within=30, what="a second replica")
    await dev.wait(idle, within=40, what="back to 0 replicas")


@pytest.mark.timeout(90)
async def test_kill_mid_stream_fails_that_stream_and_the_next_request_is_served(
    start_dev: Any, llama_cmd: str
) -> None:
    dev = await start_dev(*FAST, backend=llama_cmd)
    client = dev.client(timeout=60.0)
    assert await chat(client)
    stream = await client.chat.completions.create(
        model=model.MODEL_NAME, messages=MESSAGES, max_tokens=4000, stream=True, extra_body=LONG
    )
    received = 0
    with pytest.raises(openai.APIError) as caught:
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                received += 1
            if received == 5:
                state = dev.state()
                (replica,), restarts = state["replicas"], state["restarts"]
                os.kill(replica["pid"], signal.SIGKILL)
        raise AssertionError(f"stream ended cleanly after {received} chunks")
    assert "backend" in str(caught.value)  # the gateway's error event, OpenAI-shaped
    # The next request goes once the runner has reaped the killed process: it takes the replica out
    # of the Service (which then stops listening) before it counts the restart. Sooner, the Service
    # may still route to it: the stream's connection can close a moment before the dying process's
    # listening socket (the kernel closes its files one by one, and may be preempted between them on
    # a loaded machine), so a request sent then is accepted, then reset, and is a 502 (it was sent;
    # it is never replayed). Once the Service refuses, the gateway holds the request instead.
    await dev.wait(lambda s: s["restarts"] > restarts, within=10, what="the killed replica reaped")
    assert await chat(client)  # held while the replacement loads, then served


@pytest.mark.timeout(120)
async def test_the_crash_and_scale_to_zero_windows_lose_nothing(start_dev: Any, llama_cmd: str) -> None:
    dev = await start_dev(*FAST, "--min", "2", "--max", "2", backend=llama_cmd)
    await dev.wait(lambda s: s["status"]["replicas_ready"] == 2, within=60, what="2 ready replicas")
    client = dev.client(timeout=60.0)
    victim = dev.state()["replicas"][0]
    for index in range(20):
        if index == 5:
            os.kill(victim["pid"], signal.SIGKILL)
            await connections_settled(victim_port=victim["port"], service_url=dev.state()["backendUrl"])
        assert await chat(client, tokens=2)
        await asyncio.sleep(0.05)
    await dev.stop()

    dev = await start_dev(*FAST, backend=llama_cmd, cooldown="500ms")
    client = dev.client(timeout=60.0)
    assert await chat(client)
    deadline = time.monotonic() + 30
    # the moment the last replica stopped on scale to zero (not the instant its idle connections are
    # closed: a request written to one at that very instant may have reached it, and is a 502)
    while "replica-1: stopped" not in dev.output():
        assert time.monotonic() < deadline, dev.output()
        await asyncio.sleep(0.005)

    async def later(delay: float) -> str:
        await asyncio.sleep(delay)
        return await chat(client, tokens=2)

    results = await asyncio.gather(*(later(0.05 * i) for i in range(20)), return_exceptions=True)
    assert all(isinstance(r, str) and r for r in results), results
    assert "keda: scale 0 -> 1" in dev.output().split("replica-1: stopped", 1)[1]
    await dev.wait(idle, within=30, what="back to 0 replicas")


@pytest.mark.timeout(90)
async def test_reject_mode_answers_503_then_serves(start_dev: Any, llama_cmd: str) -> None:
    dev = await start_dev(
        "--cold-start-mode", "reject", "--retry-after", "1s", "--retry-grace", "10s", backend=llama_cmd
    )
    client = dev.client(timeout=60.0)
    with pytest.raises(openai.APIStatusError) as caught:
        await chat(client)
    assert caught.value.status_code == 503
    assert caught.value.response.headers["retry-after"] == "1"
    # reject mode answers from the gateway's own view of the backend, which follows its probe, not
    # the replica supervisor's: the retry goes once the gateway has seen the replica ready
    await dev.wait(
        lambda s: any((g.get("queue") or {}).get("backendReady") for g in s["gateways"]),
        within=60,
        what="a gateway that sees the backend ready",
    )
    assert await chat(client)


def readme_command() -> list[str]:
    """The ``noctaya dev`` arguments of README.md's llama.cpp example, as a shell would split them."""
    text = (ROOT / "README.md").read_text()
    section = text.split("### llama.cpp's server under `noctaya dev`", 1)[1].split("```bash", 1)[1]
    block = section.split("```", 1)[0].replace("\\\n", " ")
    (line,) = [line for line in block.splitlines() if line.startswith(".venv/bin/noctaya dev ")]
    return shlex.split(line)[2:]


@pytest.mark.timeout(90)
async def test_the_llamacpp_example_runtime_runs_as_written(
    start_dev: Any, llama_server: pathlib.Path, tiny_model: pathlib.Path
) -> None:
    """README.md's command, run as written, is the example runtime's flags and readiness path: only
    the hub download (``--hf-repo``, not built in) gives way to a local file, the port to ``{port}``."""
    runtime = yaml.safe_load((ROOT / "examples" / "runtimes" / "llamacpp-cpu.yaml").read_text())
    spec = runtime["spec"]
    args = readme_command()
    backend = args.pop(args.index("--backend-cmd") + 1)
    args.remove("--backend-cmd")
    served = args[args.index("--served-model") + 1]
    binary, *flags = shlex.split(backend)
    assert binary == "$LLAMA"
    expected = [a.replace("{{ .Service.Name }}", served) for a in spec["container"]["args"]]
    repo = expected.index("--hf-repo")
    expected[repo : repo + 2] = ["--model", "model.gguf"]
    port = expected.index("--port")
    assert expected[port + 1] == str(spec["container"]["port"]["containerPort"])
    expected[port + 1] = "{port}"
    assert flags == expected, (flags, expected)
    assert args[args.index("--readiness-path") + 1] == spec["health"]["readiness"]["httpGet"]["path"]

    command = backend.replace("$LLAMA", shlex.quote(str(llama_server)))
    command = command.replace("--model model.gguf", f"--model {shlex.quote(str(tiny_model))}")
    dev = await start_dev("--retry-grace", "300ms", *args, backend=command)
    client = dev.client(timeout=60.0)
    assert [m.id for m in (await client.models.list()).data] == [served]  # cold: the gateway's answer
    assert await chat(client)
    # --metrics: the engine exposes the series the runtime names (scraped from the Pod, not the
    # gateway, whose own /metrics is its own)
    (replica,) = dev.state()["replicas"]
    url = f"http://127.0.0.1:{replica['port']}" + spec["metrics"].get("path", "/metrics")
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        assert response.status == 200
        assert spec["metrics"]["queueDepth"] in await response.text()
