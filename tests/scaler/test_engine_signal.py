"""The engine signal: every Ready replica's own metrics, read by the process serving KEDA.

Aspects: ``prometheus_client``'s parser as we use it (first listed name wins, queue series summed, KV
use the largest series, ``NaN``/negative/absurd values refused, a ``counter`` renamed away, lines it
would take quadratic time on never reach it, a response beyond its series or line bound refused);
a round over real replicas (fake engines with vLLM's v0 and v1 names) sums what they report, and
every way a replica can fail — unreachable, slow, huge (announced or not), compressed, redirected,
HTTP errors, malformed, NaN, too many series — ends within its bound, is counted, logged once per
change, shown and makes the served value fall back to the gateways' count; ``kvCacheUtil`` through
a real gateway's co-located scaler and the local KEDA scales out above its target and not at or
below it; the aggregate scaler serves the same value for the same replicas and gateway demand, and
one that cannot bind its gRPC port leaves no engine reader running.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import logging
import pathlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import grpc
import prometheus_client
import pytest
from aiohttp import web

from noctaya.contract import demand as demand_mod
from noctaya.contract import engines
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract
from noctaya.dev import fake_engine, keda
from noctaya.gateway import app as gateway_app
from noctaya.gateway import keys
from noctaya.scaler import aggregate, enginemetrics, hosting, signal
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

VLLM_QUEUE = ("vllm:num_requests_waiting",)
VLLM_KV = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")  # v1 first, then v0
REF = pb.ScaledObjectRef(name="qwen", namespace="ai")


def parse(text: str | bytes, **overrides: Any) -> enginemetrics.Values:
    options: dict[str, Any] = {
        "queue_metrics": VLLM_QUEUE,
        "kv_cache_metrics": VLLM_KV,
        "max_series": 1000,
        "max_line_bytes": 4096,
        "max_queue_value": 1e6,
        **overrides,
    }
    return enginemetrics.parse_values(text.encode() if isinstance(text, str) else text, **options)


def reason_of(text: str | bytes, **overrides: Any) -> str:
    with pytest.raises(enginemetrics.Unreadable) as caught:
        parse(text, **overrides)
    return caught.value.reason


# ------------------------------------------------------------------------------------------ parser
def test_first_listed_name_counts_queue_series_sum_and_kv_takes_the_largest() -> None:
    text = (
        "# TYPE vllm:num_requests_waiting gauge\n"
        'vllm:num_requests_waiting{engine="0"} 2\n'
        'vllm:num_requests_waiting{engine="1"} 3 1700000000000\n'  # a timestamp is read past
        "# TYPE vllm:gpu_cache_usage_perc gauge\n"
        "vllm:gpu_cache_usage_perc 0.9\n"
        "# TYPE vllm:kv_cache_usage_perc gauge\n"
        'vllm:kv_cache_usage_perc{engine="0"} 0.25\n'
        'vllm:kv_cache_usage_perc{engine="1"} 0.5\n'
    )
    assert parse(text) == enginemetrics.Values(queue=5.0, kv_cache=0.5)
    v0_only = "vllm:num_requests_waiting 1\nvllm:gpu_cache_usage_perc 0.75\n"  # untyped samples too
    assert parse(v0_only) == enginemetrics.Values(queue=1.0, kv_cache=0.75)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("vllm:num_requests_waiting NaN\nvllm:kv_cache_usage_perc 0.1\n", "invalid_value"),
        ("vllm:num_requests_waiting -1\nvllm:kv_cache_usage_perc 0.1\n", "invalid_value"),
        ("vllm:num_requests_waiting +Inf\nvllm:kv_cache_usage_perc 0.1\n", "invalid_value"),
        ("vllm:num_requests_waiting 2e6\nvllm:kv_cache_usage_perc 0.1\n", "invalid_value"),
        ("vllm:num_requests_waiting 1\nvllm:kv_cache_usage_perc 1.5\n", "invalid_value"),
        ("vllm:num_requests_waiting 1\nvllm:kv_cache_usage_perc nan\n", "invalid_value"),
        ("vllm:num_requests_waiting one\nvllm:kv_cache_usage_perc 0.1\n", "malformed"),
        ('vllm:num_requests_waiting{a="1} 1\nvllm:kv_cache_usage_perc 0.1\n', "malformed"),
        # beyond Python's 4300-digit int limit: the parser's int() raises ValueError
        ("vllm:num_requests_waiting " + "9" * 5000 + "\nvllm:kv_cache_usage_perc 0.1\n", "malformed"),
        # declared a counter, the parser renames its samples ..._total: the gauge is missing
        (
            "# TYPE vllm:num_requests_waiting counter\nvllm:num_requests_waiting 3\n"
            "vllm:kv_cache_usage_perc 0.1\n",
            "missing",
        ),
        ("vllm:kv_cache_usage_perc 0.1\n", "missing"),
        ("vllm:num_requests_waiting 1\n", "missing"),
        (b"vllm:num_requests_waiting 1\xff\n", "malformed"),
    ],
)
def test_hostile_or_absent_values_are_refused_with_their_reason(text: str | bytes, reason: str) -> None:
    assert reason_of(text) == reason


def test_series_and_line_bounds() -> None:
    many = "".join(f'other{{i="{i}"}} 1\n' for i in range(1001)) + "vllm:num_requests_waiting 0\n"
    assert reason_of(many) == "too_many_series"
    long_line = 'vllm:num_requests_waiting{a="' + "x" * 5000 + '"} 1\nvllm:kv_cache_usage_perc 0\n'
    assert reason_of(long_line) == "malformed"
    # a long line of another metric is only counted
    other = 'other{a="' + "x" * 5000 + '"} 1\nvllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc 0\n'
    assert parse(other) == enginemetrics.Values(queue=0.0, kv_cache=0.0)


def test_a_million_series_stop_at_the_bound() -> None:
    text = "s 1\n" * 1_000_000 + "vllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc 0\n"
    assert reason_of(text, max_series=50_000) == "too_many_series"


def test_lines_the_parser_is_quadratic_on_never_reach_it() -> None:
    """A comment of 4 MiB of blanks (the parser's ``_split_quoted`` copies the rest of the line per
    blank) and a sample of 100k labels (``parse_labels`` copies the rest per label) of other names
    are filtered out before parsing: the wanted values come back (within the test's timeout)."""
    blanks = "#" + " " * (4 << 20) + "HELP x y\n"
    labels = "other{" + ",".join(f'l{i}="v"' for i in range(100_000)) + "} 1\n"
    text = blanks + labels + "vllm:num_requests_waiting 4\nvllm:kv_cache_usage_perc 0.5\n"
    assert parse(text) == enginemetrics.Values(queue=4.0, kv_cache=0.5)


# ------------------------------------------------------------------------------------------ servers
@contextlib.asynccontextmanager
async def serving(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> AsyncIterator[str]:
    """``handler`` on ``/metrics`` of a loopback server on port 0; yields ``host:port``."""
    app = web.Application()
    app.router.add_get("/metrics", handler)
    app.router.add_get("/elsewhere", handler)
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=0.1, handler_cancellation=True
    )
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield f"127.0.0.1:{fake_engine.bound_port(runner)}"
    finally:
        await runner.cleanup()


def section(endpoints: pathlib.Path, **overrides: Any) -> engines.EngineSignalSection:
    document: dict[str, Any] = {
        "endpointsFile": str(endpoints),
        "queueMetrics": list(VLLM_QUEUE),
        "kvCacheMetrics": list(VLLM_KV),
        "kvCacheTarget": 0.8,
        "queueTarget": 1,
        "interval": "60s",  # the reader's own loop reads once at start; the tests read on demand
        "timeout": "2s",
        "maxResponseBytes": 65536,
        "maxSeries": 1000,
        **overrides,
    }
    return engines.EngineSignalSection.model_validate(document)


def write_endpoints(path: pathlib.Path, endpoints: list[str]) -> pathlib.Path:
    path.write_text("".join(f"{e}\n" for e in endpoints))
    return path


async def one_round(
    tmp_path: pathlib.Path, endpoints: list[str], registry: prometheus_client.CollectorRegistry | None = None
) -> enginemetrics.Round:
    file = write_endpoints(tmp_path / "endpoints", endpoints)
    metrics = enginemetrics.EngineMetrics(registry=registry) if registry is not None else None
    reader = enginemetrics.EngineReader(section=section(file), metrics=metrics)
    try:
        async with reader:
            return await reader.read_once()
    finally:
        reader.close()


async def test_a_round_sums_every_ready_replica(tmp_path: pathlib.Path) -> None:
    v1 = fake_engine.FakeEngine(kv_cache_usage=0.5)
    v0 = fake_engine.FakeEngine(kv_cache_usage=0.25, kv_cache_metric="vllm:gpu_cache_usage_perc", slots=1)
    v0.active = 3  # two beyond its one slot: reported waiting
    async with fake_engine.running(v1) as one, fake_engine.running(v0) as two:
        hosts = [one.url.removeprefix("http://"), two.url.removeprefix("http://")]
        result = await one_round(tmp_path, hosts)
    assert result.complete
    assert (result.replicas, result.queue, result.kv_cache) == (2, 2.0, 0.75)


async def test_no_endpoints_file_and_an_empty_one_mean_no_replica(tmp_path: pathlib.Path) -> None:
    reader = enginemetrics.EngineReader(section=section(tmp_path / "absent"))
    async with reader:
        result = await reader.read_once()
    reader.close()
    assert (result.replicas, result.complete, result.problem) == (0, False, None)


async def _slow(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()
    await response.prepare(request)
    await response.write(b"vllm:num_requests_waiting 1\n")
    await asyncio.sleep(30)  # never finishes within the read timeout
    return response


async def _huge(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse()  # chunked: no Content-Length announces it
    await response.prepare(request)
    line = b"# padding " + b"x" * 1000 + b"\n"
    for _ in range(200):  # 200 KB, beyond the 64 KiB bound
        await response.write(line)
    return response


async def _announced(request: web.Request) -> web.Response:
    return web.Response(body=b"x" * 70_000)


async def _gzip(request: web.Request) -> web.Response:
    body = gzip.compress(b"vllm:num_requests_waiting 1\nvllm:kv_cache_usage_perc 0.1\n")
    return web.Response(body=body, headers={"Content-Encoding": "gzip"})


async def _redirect(request: web.Request) -> web.Response:
    if request.path == "/elsewhere":  # following it would read a good answer
        return web.Response(text="vllm:num_requests_waiting 1\nvllm:kv_cache_usage_perc 0.1\n")
    raise web.HTTPFound("/elsewhere")


async def _error(request: web.Request) -> web.Response:
    return web.Response(status=503, text="loading")


async def _nan(request: web.Request) -> web.Response:
    return web.Response(text="vllm:num_requests_waiting 0\nvllm:kv_cache_usage_perc NaN\n")


async def _garbage(request: web.Request) -> web.Response:
    return web.Response(text="<html>not metrics</html>\n")  # no line of a wanted name at all


async def _broken(request: web.Request) -> web.Response:
    return web.Response(text="vllm:num_requests_waiting{model=unquoted} 1\nvllm:kv_cache_usage_perc 0\n")


async def _series(request: web.Request) -> web.StreamResponse:
    # a million series would be 20 MB; the byte bound comes first for such a body, so the series
    # bound is shown with short lines within the byte bound
    return web.Response(text="".join(f"s{i} 1\n" for i in range(5000)))


@pytest.mark.parametrize(
    ("handler", "reason"),
    [
        (_slow, "timeout"),
        (_huge, "too_large"),
        (_announced, "too_large"),
        (_gzip, "malformed"),
        (_redirect, "http_status"),
        (_error, "http_status"),
        (_nan, "invalid_value"),
        (_garbage, "missing"),
        (_broken, "malformed"),
        (_series, "too_many_series"),
    ],
)
async def test_every_failing_replica_is_bounded_counted_and_named(
    tmp_path: pathlib.Path,
    handler: Callable[[web.Request], Awaitable[web.StreamResponse]],
    reason: str,
) -> None:
    registry = prometheus_client.CollectorRegistry()
    async with fake_engine.running() as good, serving(handler) as bad:
        result = await one_round(tmp_path, [good.url.removeprefix("http://"), bad], registry)
    assert not result.complete
    assert [f.reason for f in result.failures] == [reason]
    assert registry.get_sample_value("noctaya_engine_reads_total", {"result": reason}) == 1
    assert registry.get_sample_value("noctaya_engine_reads_total", {"result": "ok"}) == 1
    assert registry.get_sample_value("noctaya_engine_replicas_unreadable") == 1
    assert result.document()["failures"] == [{"reason": reason, "detail": result.failures[0].detail}]


async def test_no_proxy_from_the_environment_is_used(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, reserve_port: Callable[[], int]
) -> None:
    """aiohttp would take ``HTTP_PROXY`` with ``trust_env``; the reader goes to the Pod itself."""
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{reserve_port()}")  # nobody listens there
    monkeypatch.setenv("http_proxy", f"http://127.0.0.1:{reserve_port()}")
    async with fake_engine.running() as replica:
        result = await one_round(tmp_path, [replica.url.removeprefix("http://")])
    assert result.complete


async def test_an_unreachable_replica_and_a_bad_endpoints_file(
    tmp_path: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    result = await one_round(tmp_path, [f"127.0.0.1:{reserve_port()}"])
    assert [f.reason for f in result.failures] == ["unreachable"]
    result = await one_round(tmp_path, ["no-port-here"])
    assert result.problem is not None and "host:port" in result.problem


async def test_a_failure_is_logged_once_per_change(
    tmp_path: pathlib.Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = fake_engine.FakeEngine(kv_cache_usage=float("nan"))
    async with fake_engine.running(engine) as one:
        file = write_endpoints(tmp_path / "endpoints", [one.url.removeprefix("http://")])
        reader = enginemetrics.EngineReader(section=section(file))
        with caplog.at_level(logging.INFO, logger=enginemetrics.__name__):
            async with reader:
                for _ in range(3):
                    await reader.read_once()
                engine.kv_cache_usage = 0.3
                for _ in range(2):
                    await reader.read_once()
        reader.close()
    lines = [r.getMessage() for r in caplog.records if r.name == enginemetrics.__name__]
    assert len(lines) == 2
    assert "invalid_value" in lines[0] and "falls back" in lines[0]
    assert "readable again" in lines[1]


# ------------------------------------------------------------------------------------------ signal
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_largest_term_wins_and_an_incomplete_or_stale_round_falls_back() -> None:
    demand = demand_mod.DemandSignal(initial=5)
    kv = section(pathlib.Path("/unused"))
    reader = enginemetrics.EngineReader(section=kv)
    clock = Clock()
    combined = signal.CombinedSignal(demand=demand, target=10, section=kv, reader=reader, clock=clock)
    assert combined.served_target == 0.8
    assert combined.value() == pytest.approx(0.5 * 0.8)  # no round yet: the gateways' 5/10
    reader.latest = enginemetrics.Round(at=0.0, replicas=2, kv_cache=1.8)
    assert combined.value() == pytest.approx(1.8)  # 1.8 / 0.8 = 2.25 replicas wanted
    demand.set(30)
    assert combined.value() == pytest.approx(3 * 0.8)  # the gateways' 30 / 10 is more
    reader.latest = enginemetrics.Round(
        at=0.0,
        replicas=2,
        kv_cache=1.8,
        failures=(enginemetrics.Failure(replica="x", reason="timeout", detail=""),),
    )
    assert combined.value() == pytest.approx(2.4) and combined.document()["state"] == "fallback"
    demand.set(0)
    reader.latest = enginemetrics.Round(at=0.0, replicas=2, kv_cache=1.8)
    clock.now = kv.stale_after + 0.01
    assert combined.value() == 0.0 and combined.document()["stale"] is True
    reader.close()


# ------------------------------------------------------------------------------ through the scalers
class Target:
    def __init__(self, desired: int) -> None:
        self.desired = desired

    def scale(self, replicas: int) -> None:
        self.desired = replicas


@contextlib.asynccontextmanager
async def gateway(config: gateway_contract.GatewayConfig) -> AsyncIterator[web.Application]:
    app = gateway_app.make_app(config, sidecars=hosting.gateway_sidecars(config))
    runner = web.AppRunner(app, handle_signals=False, access_log=None, shutdown_timeout=0.5)
    await runner.setup()
    host, port = config.listen_address
    await web.TCPSite(runner, host, port).start()
    try:
        yield app
    finally:
        await runner.cleanup()


async def served(address: str) -> tuple[float, float]:
    """GetMetricSpec's target and GetMetrics' value, as KEDA asks for them."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.ExternalScalerStub(channel)
        spec = (await stub.GetMetricSpec(REF, timeout=5)).metricSpecs[0]
        reply = await stub.GetMetrics(
            pb.GetMetricsRequest(scaledObjectRef=REF, metricName=spec.metricName.lower()), timeout=5
        )
        return spec.targetSizeFloat, reply.metricValues[0].metricValueFloat


async def settled(reader: enginemetrics.EngineReader) -> None:
    """A round read after a change (the reader's own first round over first, so none overtakes it)."""
    if reader.rounds == 0:
        await reader.wait_round()
    await reader.read_once()


def engine_reader(app: web.Application) -> enginemetrics.EngineReader:
    source = app[keys.ENGINE].source
    assert source is not None
    combined = source.__self__  # type: ignore[attr-defined]
    assert isinstance(combined, signal.CombinedSignal)
    return combined.reader


async def test_kv_cache_util_scales_out_above_its_target_and_not_at_or_below(
    tmp_path: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    engine = fake_engine.FakeEngine(kv_cache_usage=0.7)
    async with fake_engine.running(engine) as replica:
        file = write_endpoints(tmp_path / "endpoints", [replica.url.removeprefix("http://")])
        grpc_port = reserve_port()
        config = gateway_contract.build_config(
            {
                "listen": f"127.0.0.1:{reserve_port()}",
                "backendUrl": replica.url,
                "service": {"name": "qwen", "namespace": "ai"},
                "scaler": {
                    "listen": f"127.0.0.1:{grpc_port}",
                    "metricName": "kvCacheUtil",
                    "engine": section(file).document(),
                },
            }
        )
        async with gateway(config) as app, grpc.aio.insecure_channel(f"127.0.0.1:{grpc_port}") as channel:
            stub = pb_grpc.ExternalScalerStub(channel)
            target = Target(desired=1)
            local = keda.LocalKeda(
                address=f"127.0.0.1:{grpc_port}",
                scaling=keda.Scaling(
                    name="qwen",
                    namespace="ai",
                    min_replicas=1,
                    max_replicas=4,
                    metric_name="kvCacheUtil",
                    scale_down_window=0,
                ),
                target=target,
            )
            reader = engine_reader(app)
            for usage, replicas in ((0.7, 1), (0.8, 1), (0.9, 2), (0.7, 1)):
                engine.kv_cache_usage = usage
                await settled(reader)
                await local.poll_once(stub)
                assert (usage, target.desired) == (usage, replicas)
                assert local.seen.target == 0.8
                assert local.seen.active is False  # reading the engine is never demand
            async with aiohttp.ClientSession() as session:
                host, port = config.listen_address
                async with session.get(f"http://{host}:{port}/noctaya/queue") as response:
                    queue = await response.json()
            assert queue["engine"]["state"] == "ok"
            assert queue["engine"]["round"]["replicas"] == 1
            assert queue["engine"]["round"]["kvCache"] == pytest.approx(0.7)
            # the replica turns unreadable: the value falls back to the gateway's count (0 here)
            engine.kv_cache_usage = float("nan")
            await settled(reader)
            assert (await served(f"127.0.0.1:{grpc_port}")) == pytest.approx((0.8, 0.0))
            registry = app[keys.METRICS].registry
            assert registry.get_sample_value("noctaya_engine_fallback") == 1
            invalid = registry.get_sample_value("noctaya_engine_reads_total", {"result": "invalid_value"})
            assert invalid is not None and invalid >= 1


async def test_the_colocated_and_the_aggregate_scaler_agree(
    tmp_path: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    engines_up = [fake_engine.FakeEngine(kv_cache_usage=u, slots=1) for u in (0.6, 0.5)]
    for engine, active in zip(engines_up, (3, 1), strict=True):
        engine.active = active  # 2 + 0 waiting
    async with contextlib.AsyncExitStack() as stack:
        replicas = [await stack.enter_async_context(fake_engine.running(e)) for e in engines_up]
        file = write_endpoints(tmp_path / "endpoints", [r.url.removeprefix("http://") for r in replicas])
        signal_section = section(file, queueTarget=1).document()
        colocated_port = reserve_port()
        config = gateway_contract.build_config(
            {
                "listen": f"127.0.0.1:{reserve_port()}",
                "backendUrl": replicas[0].url,
                "service": {"name": "qwen", "namespace": "ai"},
                "scaler": {"listen": f"127.0.0.1:{colocated_port}", "engine": signal_section},
            }
        )
        token = tmp_path / "token"
        token.write_text("s3cret-token-0123456789abcdef")
        scaler = scaler_contract.build_config(
            {
                "service": {"name": "qwen", "namespace": "ai"},
                "grpcListen": "127.0.0.1:0",
                "reportListen": "127.0.0.1:0",
                "tokenFile": str(token),
                "engine": signal_section,
            }
        )
        app = await stack.enter_async_context(gateway(config))
        agg = await stack.enter_async_context(aggregate.AggregateScaler(config=scaler))
        assert agg.engine is not None
        await asyncio.gather(settled(engine_reader(app)), settled(agg.engine.reader))
        one = await served(f"127.0.0.1:{colocated_port}")
        other = await served(f"127.0.0.1:{agg.grpc_port}")
        # KV 1.1 / 0.8 = 1.375 and queue 2 / 1 = 2 replicas wanted: the queue wins, in KV units
        assert one == pytest.approx(other)
        assert one == pytest.approx((0.8, 1.6))
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{agg.report_port}/healthz") as response,
        ):
            health = await response.json()
        assert health["engine"]["replicasWanted"] == {"gateway": 0.0, "engineQueue": 2.0, "kvCache": 1.375}
        # a gateway reporting to the aggregate scaler shows what it answered on its /noctaya/queue
        reporting = gateway_contract.build_config(
            {
                "listen": f"127.0.0.1:{reserve_port()}",
                "backendUrl": replicas[0].url,
                "service": {"name": "qwen", "namespace": "ai"},
                "report": {"url": f"http://127.0.0.1:{agg.report_port}", "tokenFile": str(token)},
            }
        )
        await stack.enter_async_context(gateway(reporting))
        host, port = reporting.listen_address
        queue: dict[str, Any] = {}
        async with aiohttp.ClientSession() as session:
            for _ in range(200):
                async with session.get(f"http://{host}:{port}/noctaya/queue") as response:
                    queue = await response.json()
                if "engine" in queue:
                    break
                await asyncio.sleep(0.01)
        assert queue["engine"]["replicasWanted"]["engineQueue"] == 2.0


def test_the_section_refuses_what_cannot_work() -> None:
    base = {"host": "qwen-engines.ai.svc", "queueMetrics": ["q"], "queueTarget": 1}
    engines.EngineSignalSection.model_validate(base)
    for broken, words in (
        ({"endpointsFile": "/x"}, "exactly one of host"),
        ({"queueTarget": None}, "at least one"),
        ({"queueMetrics": []}, "queueTarget needs"),
        ({"kvCacheTarget": 1.5}, "less than or equal"),
        ({"timeout": "10s", "interval": "1s"}, "four intervals"),
        ({"queueMetrics": ["bad name"]}, "pattern"),
    ):
        with pytest.raises(ValueError, match=words):
            engines.EngineSignalSection.model_validate({**base, **broken})
    assert json.loads(json.dumps(engines.EngineSignalSection.model_validate(base).document()))


async def test_the_headless_service_name_is_resolved_each_round() -> None:
    """A name's every address is a replica (an IP literal resolves to itself); a name that does not
    exist — a headless Service with no Ready Pod — means no replica and no read, not a failure."""
    async with fake_engine.running(fake_engine.FakeEngine(kv_cache_usage=0.5)) as replica:
        port = int(replica.url.rpartition(":")[2])
        found = engines.EngineSignalSection(
            host="127.0.0.1", port=port, kv_cache_metrics=VLLM_KV, kv_cache_target=0.8
        )
        missing = found.model_copy(update={"host": "no-ready-replica.invalid"})
        for one_section, replicas, kv in ((found, 1, 0.5), (missing, 0, 0.0)):
            reader = enginemetrics.EngineReader(section=one_section)
            async with reader:
                result = await reader.read_once()
            reader.close()
            assert (result.replicas, result.kv_cache, result.problem, result.failures) == (
                replicas,
                kv,
                None,
                (),
            )


def test_no_ready_replica_is_no_fallback() -> None:
    """Scaled to zero there is nothing to read: the gateways' count is served and the fallback gauge
    (what an alert would read) stays 0; a round that found replicas but could not use them sets it."""
    registry = prometheus_client.CollectorRegistry()
    kv = section(pathlib.Path("/unused"))
    reader = enginemetrics.EngineReader(section=kv, metrics=enginemetrics.EngineMetrics(registry=registry))
    combined = signal.CombinedSignal(
        demand=demand_mod.DemandSignal(), target=10, section=kv, reader=reader, clock=Clock()
    )
    reader.latest = enginemetrics.Round(at=0.0, replicas=0)
    assert registry.get_sample_value("noctaya_engine_fallback") == 0
    assert combined.document()["state"] == "noReplicas"
    reader.latest = enginemetrics.Round(at=0.0, replicas=1, problem="DNS lookup of x: failure")
    assert registry.get_sample_value("noctaya_engine_fallback") == 1
    reader.close()


async def test_a_grpc_port_taken_leaves_no_engine_reader_running(tmp_path: pathlib.Path) -> None:
    """The aggregate scaler that cannot bind its gRPC port raises, and the engine reader it had
    started is stopped again (none left reading the replicas with nobody serving KEDA)."""
    token = tmp_path / "token"
    token.write_text("s3cret-token-0123456789abcdef")
    file = write_endpoints(tmp_path / "endpoints", [])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        config = scaler_contract.build_config(
            {
                "service": {"name": "qwen", "namespace": "ai"},
                "grpcListen": f"127.0.0.1:{taken.getsockname()[1]}",
                "reportListen": "127.0.0.1:0",
                "tokenFile": str(token),
                "engine": section(file).document(),
            }
        )
        scaler = aggregate.AggregateScaler(config=config)
        with pytest.raises(OSError, match="cannot listen for gRPC"):
            async with scaler:
                pass
    assert [t.get_name() for t in asyncio.all_tasks() if t.get_name() == "noctaya-engine-reader"] == []
