"""``noctaya gateway`` as a process, and its configuration.

Aspects: the config file (YAML, camelCase keys, Go durations) parses into the documented defaults and
bounds; every field is also a flag and flags override the file; bad values, unknown keys, a missing or
non-mapping file, and exclusive scaler/report sections fail at start with exit code 2 and one line per
bad field, never a traceback; process level: SIGTERM with streams open turns ``/healthz`` 503 at once,
lets the streams finish, and exits 0; SIGTERM with a WebSocket open closes it with 1001 (going away)
and exits 0 without waiting out the drain timeout.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import re
import signal
import socket
import subprocess
import sys

import aiohttp
import pytest
from aiohttp import web

from noctaya.contract import gateway as gateway_contract
from noctaya.process import gateway as command

PYTHON = sys.executable


def test_defaults_match_the_documented_contract() -> None:
    parsed = gateway_contract.build_config({"backendUrl": "http://qwen.ai.svc:8000/"})
    assert parsed.backend_url == "http://qwen.ai.svc:8000"
    assert (parsed.listen_address.bind_host, parsed.listen_address.port) == ("0.0.0.0", 8080)
    assert (parsed.max_queue, parsed.max_in_flight, parsed.max_body_bytes) == (100, 1000, 16 * 1024 * 1024)
    assert parsed.cold_start_mode == "keepalive" and parsed.readiness_path == "/health"
    assert (parsed.heartbeat_interval, parsed.activation_timeout, parsed.retry_after) == (10, 300, 10)
    assert (parsed.retry_grace, parsed.drain_timeout) == (10, 120)
    assert parsed.probe_interval <= 0.1
    assert parsed.api_key_file is None and parsed.scaler is None and parsed.report is None


def test_full_file_with_sections(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(
        "listen: ':9000'\nbackendUrl: http://b:8000\nmaxQueue: 5\ncoldStartMode: reject\n"
        "heartbeatInterval: 1m30s\nactivationTimeout: 1h\nretryAfter: 500ms\n"
        "service: {name: qwen, namespace: ai}\n"
        "scaler: {listen: ':9090', target: 3, metricName: queueDepth,"
        " tls: {certFile: /c, keyFile: /k, caFile: /ca}}\n"
    )
    parsed = gateway_contract.load_config(path)
    assert parsed.heartbeat_interval == 90 and parsed.activation_timeout == 3600 and parsed.retry_after == 0.5
    assert parsed.service is not None and parsed.service.name == "qwen"
    assert parsed.scaler is not None and parsed.scaler.target == 3
    assert parsed.scaler.tls is not None and parsed.scaler.tls.ca_file == "/ca"
    assert parsed.model_dump(by_alias=True)["heartbeatInterval"] == "1m30s"
    report = gateway_contract.build_config(
        {
            "backendUrl": "http://b",
            "service": {"name": "qwen", "namespace": "ai"},
            "report": {"url": "http://qwen-scaler.ai.svc:9091", "tokenFile": "/t"},
        }
    )
    assert report.report is not None and report.report.interval == 2.0


@pytest.mark.parametrize(
    ("document", "field"),
    [
        ({}, "backendUrl"),
        ({"backendUrl": "ftp://x"}, "backendUrl"),
        ({"backendUrl": "http://b", "maxQueue": 0}, "maxQueue"),
        ({"backendUrl": "http://b", "maxInFlight": -1}, "maxInFlight"),
        ({"backendUrl": "http://b", "coldStartMode": "hold"}, "coldStartMode"),
        ({"backendUrl": "http://b", "heartbeatInterval": "10"}, "heartbeatInterval"),
        ({"backendUrl": "http://b", "heartbeatInterval": "0s"}, "heartbeatInterval"),
        ({"backendUrl": "http://b", "activationTimeout": "5 minutes"}, "activationTimeout"),
        ({"backendUrl": "http://b", "probeInterval": "1s"}, "probeInterval"),
        ({"backendUrl": "http://b", "listen": "8080"}, "listen"),
        ({"backendUrl": "http://b", "readinessPath": "health"}, "readinessPath"),
        ({"backendUrl": "http://b", "maxBodyBytes": "lots"}, "maxBodyBytes"),
        ({"backendUrl": "http://b", "surprise": 1}, "surprise"),
        ({"backendUrl": "http://b", "service": {"name": "Bad_Name", "namespace": "ai"}}, "service.name"),
        ({"backendUrl": "http://b", "scaler": {"target": 0}}, "scaler.target"),
        (
            {"backendUrl": "http://b", "scaler": {}, "report": {"url": "http://s", "tokenFile": "/t"}},
            "report",
        ),
    ],
)
def test_bad_values_name_the_field(document: dict[str, object], field: str) -> None:
    with pytest.raises(gateway_contract.ConfigError) as caught:
        gateway_contract.build_config(document)
    assert (
        str(caught.value).startswith(field) or f"\n{field}" in str(caught.value) or field in str(caught.value)
    )


def test_flags_override_the_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"backendUrl": "http://a", "maxQueue": 5, "service": {"name": "x", "namespace": "y"}})
    )
    args = command.build_parser().parse_args(
        [
            "--config",
            str(path),
            "--max-queue",
            "7",
            "--backend-url",
            "http://b:1",
            "--service-name",
            "z",
            "--heartbeat-interval",
            "250ms",
            "--scaler-target",
            "4",
        ]
    )
    parsed = command.config_from_args(args)
    assert parsed.max_queue == 7 and parsed.backend_url == "http://b:1" and parsed.heartbeat_interval == 0.25
    assert parsed.service is not None and (parsed.service.name, parsed.service.namespace) == ("z", "y")
    assert parsed.scaler is not None and parsed.scaler.target == 4


@pytest.mark.parametrize(
    ("content", "argv", "expected"),
    [
        ("backendUrl: http://b\nmaxQueue: zero\n", [], "maxQueue"),
        ("- just\n- a list\n", [], "expected a mapping"),
        ("backendUrl: [unclosed\n", [], "not valid YAML"),
        (None, [], "cannot read"),
        ("backendUrl: http://b\n", ["--cold-start-mode", "maybe"], "coldStartMode"),
        ("backendUrl: http://b\nwarmUntil: '0001-01-01T00:00:00+01:00'\n", [], "warmUntil: "),
        ("backendUrl: http://b\n", ["--warm-until", "9999-12-31T23:59:59-01:00"], "warmUntil: "),
        ("backendUrl: http://b\nx: " + "[" * 100_000 + "]" * 100_000 + "\n", [], "nested deeper"),
        ("".join(f"{'  ' * i}k{i}:\n" for i in range(200)) + "  " * 200 + "v: 1\n", [], "nested deeper"),
    ],
)
def test_bad_config_exits_2_with_a_message_and_no_traceback(
    tmp_path: pathlib.Path,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    argv: list[str],
    expected: str,
) -> None:
    """The command's entry point in-process (``python -m noctaya gateway`` runs the same ``main``; the
    process-level start and stop are covered by the SIGTERM test below)."""
    path = tmp_path / "gateway.yaml"
    if content is not None:
        path.write_text(content)
    assert command.main(["--config", str(path), *argv]) == 2
    out, err = capsys.readouterr()
    assert expected in err
    assert "Traceback" not in err + out


async def _read_until(stream: asyncio.StreamReader, pattern: str, *, within: float = 15.0) -> re.Match[str]:
    async with asyncio.timeout(within):
        while True:
            line = (await stream.readline()).decode()
            if not line:
                raise AssertionError(f"process ended before printing {pattern!r}")
            match = re.search(pattern, line)
            if match:
                return match


@pytest.mark.e2e
@pytest.mark.timeout(60)
async def test_sigterm_with_streams_open_drains_and_exits_0() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    engine = await asyncio.create_subprocess_exec(
        PYTHON,
        "-m",
        "noctaya.dev.fake_engine",
        "--port",
        "0",
        "--tokens",
        "20",
        "--token-delay",
        "50ms",
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    gateway = None
    try:
        assert engine.stdout is not None
        backend = (await _read_until(engine.stdout, r"listening on (http://\S+)")).group(1)
        gateway = await asyncio.create_subprocess_exec(
            PYTHON,
            "-m",
            "noctaya",
            "gateway",
            "--backend-url",
            backend,
            "--listen",
            "127.0.0.1:0",
            "--drain-timeout",
            "10s",
            "--probe-interval",
            "20ms",
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
        )
        assert gateway.stdout is not None
        url = (await _read_until(gateway.stdout, r"gateway listening on (http://\S+),")).group(1)
        async with aiohttp.ClientSession() as session:
            async with asyncio.timeout(10):
                while True:
                    async with session.get(url + "/noctaya/queue") as response:
                        if (await response.json())["backendReady"]:
                            break
                    await asyncio.sleep(0.05)
            body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "x"}]}
            streams = [await session.post(url + "/v1/chat/completions", json=body) for _ in range(3)]
            for stream in streams:
                assert (await stream.content.readline()).startswith(b"data: ")
            gateway.send_signal(signal.SIGTERM)
            await _read_until(gateway.stdout, r"draining")
            async with aiohttp.ClientSession() as fresh, fresh.get(url + "/healthz") as response:
                assert response.status == 503
            for stream in streams:
                async with stream:
                    rest = await stream.content.read()
                assert rest.endswith(b"data: [DONE]\n\n") and rest.count(b'"tok "') == 20
        assert await asyncio.wait_for(gateway.wait(), 15) == 0
        gateway = None
    finally:
        for process in (gateway, engine):
            if process is not None and process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 15)


@pytest.mark.e2e
@pytest.mark.timeout(60)
async def test_sigterm_closes_an_open_websocket_and_exits_0() -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    engine = await asyncio.create_subprocess_exec(
        PYTHON, "-m", "noctaya.dev.fake_engine", "--port", "0",
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
    )  # fmt: skip
    gateway = None
    try:
        assert engine.stdout is not None
        backend = (await _read_until(engine.stdout, r"listening on (http://\S+)")).group(1)
        gateway = await asyncio.create_subprocess_exec(
            PYTHON, "-m", "noctaya", "gateway", "--backend-url", backend, "--listen", "127.0.0.1:0",
            "--drain-timeout", "60s", "--probe-interval", "20ms",
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
        assert gateway.stdout is not None
        url = (await _read_until(gateway.stdout, r"gateway listening on (http://\S+),")).group(1)
        # held while the backend is cold, then upgraded
        async with aiohttp.ClientSession() as session, session.ws_connect(url + "/v1/realtime") as ws:
            await ws.send_str("before the drain")
            assert await ws.receive_str(timeout=10) == "before the drain"
            async with session.get(url + "/noctaya/queue") as response:
                assert (await response.json())["inFlight"] == 1  # an open socket is in flight
            gateway.send_signal(signal.SIGTERM)
            message = await ws.receive(timeout=10)
            assert message.type is aiohttp.WSMsgType.CLOSE
            assert message.data == aiohttp.WSCloseCode.GOING_AWAY
        # the drain timeout is 60 s: exiting well within the test's time means the socket did not hold it
        assert await asyncio.wait_for(gateway.wait(), 15) == 0
        gateway = None
    finally:
        for process in (gateway, engine):
            if process is not None and process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 15)


GATEWAY_MODULES = """
import asyncio, contextlib, sys
import uvloop
from noctaya.process import gateway as command

async def main() -> None:
    config = command.config_from_args(command.build_parser().parse_args(sys.argv[1:]))
    started = asyncio.Event()
    serving = asyncio.create_task(command.serve(config, started=started))
    await started.wait()
    print(" ".join(sorted({name.partition(".")[0] for name in sys.modules})))
    serving.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await serving

uvloop.run(main())
"""


def test_a_running_gateway_loads_no_scaler_operator_or_synthesis_code(tmp_path: pathlib.Path) -> None:
    """Every held request shares the process with what it imported: a gateway with its config file
    (no co-located scaler) loads neither gRPC, kopf, cdk8s nor jsii."""
    path = tmp_path / "config.yaml"
    path.write_text("backendUrl: http://127.0.0.1:9\nlisten: 127.0.0.1:0\n")
    result = subprocess.run(
        [PYTHON, "-c", GATEWAY_MODULES, "--config", str(path), "--log-level", "WARNING"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = set(result.stdout.split())
    assert {"aiohttp", "noctaya", "uvloop"} <= loaded  # the report is of the running gateway
    assert not loaded & {"grpc", "kopf", "cdk8s", "cdk8s_plus_28", "jsii", "constructs", "kubernetes"}


@pytest.mark.e2e
@pytest.mark.timeout(120)
async def test_a_taken_port_ends_the_process_before_anything_starts(tmp_path: pathlib.Path) -> None:
    """Bound first: a gateway whose port is taken exits 1 naming the port and the reason, and starts
    nothing on its way out: its backend is never probed, and its demand reporter neither reports nor
    withdraws (a withdrawal would speak for a member that never served)."""
    seen: list[str] = []

    async def record(request: web.Request) -> web.Response:
        seen.append(f"{request.method} {request.path}")
        return web.json_response({})

    peer = web.Application()  # the backend and the aggregate scaler in one: every request is seen
    peer.router.add_route("*", "/{tail:.*}", record)
    runner = web.AppRunner(peer)
    await runner.setup()
    taken = socket.create_server(("127.0.0.1", 0))  # listening: the gateway's port is in use
    try:
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        peer_url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        port = taken.getsockname()[1]
        (tmp_path / "token").write_text("a-report-token-of-some-length\n")
        config = tmp_path / "config.yaml"
        config.write_text(
            f"listen: 127.0.0.1:{port}\nbackendUrl: {peer_url}\nprobeInterval: 20ms\n"
            "service: {name: qwen, namespace: ai}\n"
            f"report: {{url: {peer_url}, tokenFile: {tmp_path / 'token'}, interval: 1s}}\n"
        )
        gateway = await asyncio.create_subprocess_exec(
            PYTHON,
            "-m",
            "noctaya",
            "gateway",
            "--config",
            str(config),
            "--log-level",
            "DEBUG",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            out, err = await asyncio.wait_for(gateway.communicate(), 90)
        finally:
            if gateway.returncode is None:  # it hangs: the test fails, nothing is left running
                gateway.kill()
                await gateway.wait()
        text = out.decode() + err.decode()
        assert gateway.returncode == 1, text
        assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in text
        assert "Traceback" not in text
        assert seen == []  # no probe, no model list, no report, no withdrawal
    finally:
        taken.close()
        await runner.cleanup()
