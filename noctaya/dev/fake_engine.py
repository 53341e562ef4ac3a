"""A small, fast OpenAI-compatible engine for tests, demos and benchmarks.

It speaks the OpenAI wire format closely enough for the ``openai`` SDK to parse every answer:
``/v1/models``, ``/v1/chat/completions`` and ``/v1/completions`` (plain JSON, or SSE chunks ending in
``data: [DONE]``, with ``stream_options.include_usage``), ``/v1/embeddings`` (float or base64). It
also has what a model server has around that: ``/v1/realtime``, a WebSocket that echoes every text
and binary message (the text ``close <code>`` closes it with that code), ``/health`` that turns
ready after ``ready_delay`` (503 before), ``/metrics`` with a queue-depth gauge (and vLLM's
``vllm:num_requests_running``, ``vllm:num_requests_waiting`` — requests beyond ``slots`` — and a
KV-cache gauge, v1's ``vllm:kv_cache_usage_perc`` or v0's ``vllm:gpu_cache_usage_perc``), and a
graceful SIGTERM (health turns 503, in-flight requests finish, exit 0).

The answer is ``tokens`` words (capped by the request's ``max_tokens``), one SSE chunk per word,
``token_delay`` apart. Failure modes: ``crash-mid-stream`` (the connection is cut after
``crash_after`` tokens), ``error-500``, ``never-ready``, ``invalid-sse`` (malformed event data).
Settings live on a mutable :class:`FakeEngine`, so a test can flip readiness or the failure mode.

Run: ``python -m noctaya.dev.fake_engine --port 8000 --ready-delay 2s --tokens 32 --token-delay 20ms``.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import dataclasses
import itertools
import json
import logging
import signal
import struct
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Final, Literal

import uvloop
from aiohttp import web

from noctaya.contract import fields

FailureMode = Literal["none", "crash-mid-stream", "error-500", "never-ready", "invalid-sse"]
FAILURE_MODES: Final[tuple[str, ...]] = (
    "none",
    "crash-mid-stream",
    "error-500",
    "never-ready",
    "invalid-sse",
)
MAX_TOKENS: Final = 100_000
MAX_EMBEDDING_INPUTS: Final = 2048
WORD: Final = "tok"
SSE_HEADERS: Final = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}

logger = logging.getLogger("noctaya.fake_engine")


@dataclasses.dataclass
class FakeEngine:
    """Behaviour and live state of one engine; tests may change any field while it runs."""

    model: str = "fake-model"
    ready_delay: float = 0.0
    tokens: int = 16
    token_delay: float = 0.0
    failure: FailureMode = "none"
    crash_after: int = 2
    embedding_dim: int = 8
    ready_override: bool | None = None  # force ready (True) or not ready (False); None = by delay
    #: requests reported as running at once; more are reported waiting (0: every one runs)
    slots: int = 0
    #: the KV-cache use reported (0..1, or any float a test wants an engine to claim)
    kv_cache_usage: float = 0.0
    #: the KV-cache gauge's name: vLLM v1's (``vllm:kv_cache_usage_perc``) or v0's
    kv_cache_metric: str = "vllm:kv_cache_usage_perc"
    started_at: float = dataclasses.field(default_factory=time.monotonic)
    active: int = 0
    served: int = 0
    draining: bool = False
    _ids: itertools.count[int] = dataclasses.field(default_factory=itertools.count)

    @property
    def ready(self) -> bool:
        if self.draining or self.failure == "never-ready":
            return False
        if self.ready_override is not None:
            return self.ready_override
        return time.monotonic() - self.started_at >= self.ready_delay

    def next_id(self, prefix: str) -> str:
        return f"{prefix}-{next(self._ids):08x}"


ENGINE = web.AppKey("noctaya.fake_engine", FakeEngine)


def _error(status: int, message: str, code: str) -> web.Response:
    payload = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    return web.json_response(payload, status=status)


async def _json_body(request: web.Request) -> dict[str, Any] | web.Response:
    try:
        document = await request.json()
    except (ValueError, UnicodeDecodeError):
        return _error(400, "request body is not valid JSON", "invalid_json")
    except RecursionError:  # a few KiB of brackets reach the decoder's nesting limit
        return _error(400, "request body is nested too deeply", "invalid_json")
    if not isinstance(document, dict):
        return _error(400, "request body must be a JSON object", "invalid_request")
    return document


def _token_count(engine: FakeEngine, body: dict[str, Any]) -> int:
    limit = body.get("max_completion_tokens", body.get("max_tokens"))
    count = engine.tokens
    if isinstance(limit, int) and not isinstance(limit, bool) and limit >= 0:
        count = min(count, limit)
    return max(0, min(count, MAX_TOKENS))


def _prompt_tokens(body: dict[str, Any]) -> int:
    messages = body.get("messages")
    if isinstance(messages, list):
        text = " ".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
    else:
        text = str(body.get("prompt", ""))
    return max(1, len(text.split()))


def _data(obj: object) -> bytes:
    return b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class _Generation:
    """Shared request-path logic for chat and text completions."""

    def __init__(self, *, engine: FakeEngine, chat: bool) -> None:
        self.engine = engine
        self.chat = chat

    async def handle(self, request: web.Request) -> web.StreamResponse:
        engine = self.engine
        if engine.draining:
            return _error(503, "engine is shutting down", "draining")
        body = await _json_body(request)
        if isinstance(body, web.Response):
            return body
        if not isinstance(body.get("model", engine.model), str):
            return _error(400, "model must be a string", "invalid_model")
        engine.active += 1
        try:
            if engine.failure == "error-500":
                return _error(500, "simulated engine failure", "internal_error")
            count = _token_count(engine, body)
            if body.get("stream") is True:
                return await self._stream(request, body, count)
            return await self._complete(request, body, count)
        finally:
            engine.active -= 1
            engine.served += 1

    def _envelope(self, rid: str, created: int) -> dict[str, Any]:
        return {
            "id": rid,
            "object": "chat.completion.chunk" if self.chat else "text_completion",
            "created": created,
            "model": self.engine.model,
        }

    def _choice(self, *, text: str, finish: str | None, first: bool = False) -> dict[str, Any]:
        if self.chat:
            delta: dict[str, Any] = {"role": "assistant", "content": text} if first else {"content": text}
            return {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}

    async def _complete(self, request: web.Request, body: dict[str, Any], count: int) -> web.StreamResponse:
        engine = self.engine
        if engine.token_delay > 0 and count:
            await asyncio.sleep(engine.token_delay * count)
        if engine.failure == "crash-mid-stream":
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)  # never sent: the connection is already gone
        text = " ".join([WORD] * count)
        prompt = _prompt_tokens(body)
        finish = "length" if count == engine.tokens and count > 0 else "stop"
        rid = engine.next_id("chatcmpl" if self.chat else "cmpl")
        choice: dict[str, Any]
        if self.chat:
            choice = {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": finish,
            }
        else:
            choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": finish}
        payload = {
            "id": rid,
            "object": "chat.completion" if self.chat else "text_completion",
            "created": int(time.time()),
            "model": engine.model,
            "choices": [choice],
            "usage": {"prompt_tokens": prompt, "completion_tokens": count, "total_tokens": prompt + count},
        }
        return web.Response(
            body=json.dumps(payload, separators=(",", ":")).encode(), content_type="application/json"
        )

    async def _stream(self, request: web.Request, body: dict[str, Any], count: int) -> web.StreamResponse:
        engine = self.engine
        rid = engine.next_id("chatcmpl" if self.chat else "cmpl")
        created = int(time.time())
        envelope = self._envelope(rid, created)
        response = web.StreamResponse(status=200, headers=SSE_HEADERS)
        await response.prepare(request)
        if self.chat:
            await response.write(
                _data({**envelope, "choices": [self._choice(text="", finish=None, first=True)]})
            )
        token = _data({**envelope, "choices": [self._choice(text=WORD + " ", finish=None)]})
        delay = engine.token_delay
        for i in range(count):
            if delay > 0:
                await asyncio.sleep(delay)
            if engine.failure == "crash-mid-stream" and i >= engine.crash_after:
                if request.transport is not None:
                    request.transport.abort()
                return response
            if engine.failure == "invalid-sse":
                await response.write(b"data: {not json\n\n")
                continue
            await response.write(token)
        finish = "length" if count == engine.tokens and count > 0 else "stop"
        await response.write(_data({**envelope, "choices": [self._choice(text="", finish=finish)]}))
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage") is True:
            prompt = _prompt_tokens(body)
            usage = {"prompt_tokens": prompt, "completion_tokens": count, "total_tokens": prompt + count}
            await response.write(_data({**envelope, "choices": [], "usage": usage}))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response


async def _health(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    if engine.ready:
        return web.json_response({"status": "ok"})
    return web.json_response({"status": "loading"}, status=503)


async def _models(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    model = {"id": engine.model, "object": "model", "created": int(engine.started_at), "owned_by": "noctaya"}
    return web.json_response({"object": "list", "data": [model]})


async def _embeddings(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    body = await _json_body(request)
    if isinstance(body, web.Response):
        return body
    if engine.failure == "error-500":
        return _error(500, "simulated engine failure", "internal_error")
    raw = body.get("input")
    inputs: list[Any] = raw if isinstance(raw, list) else [raw]
    if not inputs or len(inputs) > MAX_EMBEDDING_INPUTS or any(i is None for i in inputs):
        return _error(400, "input must be a string or a non-empty list", "invalid_input")
    as_base64 = body.get("encoding_format") == "base64"
    data = []
    for index, item in enumerate(inputs):
        seed = len(str(item)) + index
        vector = [((seed * (k + 1)) % 97) / 97.0 for k in range(engine.embedding_dim)]
        embedding: Any = (
            base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode() if as_base64 else vector
        )
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    tokens = sum(max(1, len(str(item).split())) for item in inputs)
    return web.json_response(
        {
            "object": "list",
            "data": data,
            "model": engine.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
    )


MAX_REALTIME_MESSAGE = 16 * 1024 * 1024


async def _realtime(request: web.Request) -> web.StreamResponse:
    """Echo WebSocket: text and binary messages come back as sent; ``close <code>`` closes."""
    socket = web.WebSocketResponse(max_msg_size=MAX_REALTIME_MESSAGE, protocols=("realtime",))
    if not socket.can_prepare(request).ok:
        return _error(400, "this route takes a WebSocket upgrade", "upgrade_required")
    await socket.prepare(request)
    async for message in socket:
        if message.type is web.WSMsgType.TEXT:
            if message.data.startswith("close "):
                code = int(message.data.split()[1]) if message.data.split()[1].isdigit() else 1000
                await socket.close(code=code, message=b"asked to close")
                break
            await socket.send_str(message.data)
        elif message.type is web.WSMsgType.BINARY:
            await socket.send_bytes(message.data)
    return socket


async def _metrics(request: web.Request) -> web.Response:
    engine = request.app[ENGINE]
    running = min(engine.active, engine.slots) if engine.slots else engine.active
    model = engine.model.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    text = (
        "# HELP fake_engine_queue_depth Requests being processed\n# TYPE fake_engine_queue_depth gauge\n"
        f"fake_engine_queue_depth {engine.active}\n"
        "# HELP fake_engine_requests_total Requests served\n# TYPE fake_engine_requests_total counter\n"
        f"fake_engine_requests_total {engine.served}\n"
        "# HELP fake_engine_ready 1 when the health endpoint reports ready\n# TYPE fake_engine_ready gauge\n"
        f"fake_engine_ready {int(engine.ready)}\n"
        # vLLM's names, so alert rules, dashboards and the engine signal read this engine too; it
        # serves every request at once, and reports those beyond ``slots`` as waiting
        "# HELP vllm:num_requests_running Requests being processed\n# TYPE vllm:num_requests_running gauge\n"
        f'vllm:num_requests_running{{model_name="{model}"}} {running}\n'
        "# HELP vllm:num_requests_waiting Requests waiting to be processed\n"
        "# TYPE vllm:num_requests_waiting gauge\n"
        f'vllm:num_requests_waiting{{model_name="{model}"}} {engine.active - running}\n'
        f"# HELP {engine.kv_cache_metric} KV-cache usage. 1 means 100 percent usage.\n"
        f"# TYPE {engine.kv_cache_metric} gauge\n"
        f'{engine.kv_cache_metric}{{model_name="{model}"}} {engine.kv_cache_usage!r}\n'
    )
    return web.Response(text=text, content_type="text/plain", charset="utf-8")


def make_app(engine: FakeEngine | None = None) -> web.Application:
    app = web.Application(client_max_size=16 * 1024 * 1024)
    engine = engine or FakeEngine()
    app[ENGINE] = engine
    app.router.add_get("/health", _health)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/v1/models", _models)
    app.router.add_get("/v1/realtime", _realtime)
    app.router.add_post("/v1/chat/completions", _Generation(engine=engine, chat=True).handle)
    app.router.add_post("/v1/completions", _Generation(engine=engine, chat=False).handle)
    app.router.add_post("/v1/embeddings", _embeddings)
    return app


MAX_HEAD_LINE = 64 * 1024
"""The engine's bound on a request line and a header: looser than the gateway's (as vLLM's server is), so the
gateway's own bound is the one a client meets (aiohttp's default, 8190 bytes, was not)."""


def bound_port(runner: web.AppRunner) -> int:
    """The TCP port the runner's first site listens on (useful after binding port 0)."""
    for address in runner.addresses:
        if isinstance(address, tuple):
            return int(address[1])
    raise RuntimeError("the runner listens on no TCP address")


@dataclasses.dataclass
class RunningEngine:
    """An engine served in-process (tests, benchmarks): its state and base URL."""

    state: FakeEngine
    url: str


@contextlib.asynccontextmanager
async def running(
    engine: FakeEngine | None = None, *, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[RunningEngine]:
    """Serve an engine on ``host:port`` (0: any free port) for the duration of the ``async with``."""
    engine = engine or FakeEngine()
    runner = web.AppRunner(
        make_app(engine),
        access_log=None,
        handle_signals=False,
        shutdown_timeout=0.5,
        handler_cancellation=True,
        max_line_size=MAX_HEAD_LINE,
        max_field_size=MAX_HEAD_LINE,
    )
    await runner.setup()
    try:
        site = web.TCPSite(runner, host, port, reuse_address=True)
        await site.start()
        yield RunningEngine(state=engine, url=f"http://{host}:{bound_port(runner)}")
    finally:
        await runner.cleanup()


async def serve(engine: FakeEngine, *, host: str, port: int, drain_timeout: float) -> int:
    app = make_app(engine)
    runner = web.AppRunner(
        app,
        handle_signals=False,
        access_log=None,
        shutdown_timeout=drain_timeout,
        handler_cancellation=True,
        max_line_size=MAX_HEAD_LINE,
        max_field_size=MAX_HEAD_LINE,
    )
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        site = web.TCPSite(runner, host, port, backlog=4096, reuse_address=True)
        await site.start()
        bound = bound_port(runner)
        print(f"fake engine listening on http://{host}:{bound}", flush=True)
        await stop.wait()
        engine.draining = True  # /health turns 503; runner.cleanup lets in-flight requests finish
    finally:
        await runner.cleanup()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m noctaya.dev.fake_engine", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--ready-delay", default="0s", help="time until /health turns 200 (Go duration)")
    parser.add_argument("--tokens", type=int, default=16, help="words in each completion")
    parser.add_argument("--token-delay", default="0s", help="time between words (Go duration)")
    parser.add_argument("--failure", choices=FAILURE_MODES, default="none")
    parser.add_argument("--crash-after", type=int, default=2, help="tokens sent before crash-mid-stream cuts")
    parser.add_argument(
        "--drain-timeout", default="30s", help="longest wait for in-flight requests on SIGTERM"
    )
    parser.add_argument(
        "--slots", type=int, default=0, help="requests reported running; more wait (0: all run)"
    )
    parser.add_argument("--kv-cache-usage", type=float, default=0.0, help="KV-cache use reported (0..1)")
    parser.add_argument(
        "--kv-cache-metric",
        default="vllm:kv_cache_usage_perc",
        choices=("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"),
        help="the KV-cache gauge's name: vLLM v1's or v0's",
    )
    args = parser.parse_args(argv)
    try:
        engine = FakeEngine(
            model=args.model,
            ready_delay=fields.parse_seconds(args.ready_delay),
            tokens=max(0, min(args.tokens, MAX_TOKENS)),
            token_delay=fields.parse_seconds(args.token_delay),
            failure=args.failure,
            crash_after=args.crash_after,
            slots=max(0, args.slots),
            kv_cache_usage=args.kv_cache_usage,
            kv_cache_metric=args.kv_cache_metric,
        )
        drain = fields.parse_seconds(args.drain_timeout)
    except ValueError as exc:
        parser.error(str(exc))
    logging.basicConfig(level=logging.WARNING)
    return uvloop.run(serve(engine, host=args.host, port=args.port, drain_timeout=drain))


if __name__ == "__main__":
    sys.exit(main())
