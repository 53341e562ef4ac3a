"""``noctaya dev`` options: defaults that work, and bad options refused with the option named.

Aspects: defaults (fake engine backend, 0..3 replicas, one gateway, co-located scaler); gateway
options pass through to the gateway config; --min above --max, a backend command without {port},
a listen address without a fixed port, a bad gateway or engine option (named by its flag) or
readiness path, a bad member TTL and a service name Kubernetes would refuse all exit 2 naming the
option; a part that does not start (the gateway's port is taken, no openssl for --scaler-tls)
exits 1 with the reason and no traceback.
"""

from __future__ import annotations

import os
import pathlib
import socket
import subprocess
import sys

import pytest

from noctaya.contract import gateway as gateway_contract
from noctaya.dev import command, runner


def settings(*argv: str) -> runner.Settings:
    return command.settings_from_args(command.build_parser().parse_args(list(argv)))


def test_defaults() -> None:
    s = settings()
    assert "noctaya.dev.fake_engine --port {port}" in s.backend_cmd
    assert (s.scaling.min_replicas, s.scaling.max_replicas, s.target, s.gateways) == (0, 3, 10, 1)
    assert (s.listen_host, s.listen_port) == ("127.0.0.1", 8080)
    assert s.scaling.scale_down_window == s.scaling.cooldown == 30.0
    assert s.gateway == gateway_contract.GatewaySettings(drain_timeout=10.0)
    assert s.api_key_file is None
    assert s.crash_loop_exits == 3 and settings("--crash-loop-exits", "0").crash_loop_exits == 0


def test_gateway_options_pass_through() -> None:
    s = settings(
        "--max-queue",
        "5",
        "--cold-start-mode",
        "reject",
        "--activation-timeout",
        "2s",
        "--api-key-file",
        "/tmp/key",
        "--cooldown",
        "500ms",
        "--polling-interval",
        "1s",
    )
    assert s.gateway == gateway_contract.GatewaySettings(
        drain_timeout=10.0, max_queue=5, cold_start_mode="reject", activation_timeout=2.0
    )
    assert s.api_key_file == "/tmp/key"
    assert (s.scaling.cooldown, s.scaling.polling_interval) == (0.5, 1.0)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--min", "3", "--max", "2"], "--min"),
        (["--backend-cmd", "server --port 8000"], "--backend-cmd"),
        (["--listen", "127.0.0.1:0"], "--listen"),
        (["--listen", "nowhere"], "--listen"),
        (["--cold-start-mode", "sometimes"], "--cold-start-mode"),
        (["--activation-timeout", "soon"], "--activation-timeout"),
        (["--readiness-path", "health"], "--readiness-path"),
        (["--member-ttl", "soon"], "--member-ttl: "),
        (["--member-ttl", "0s"], "--member-ttl: "),
        (["--service-name", "Not_A_Name"], "--service-name: "),
        (["--namespace", "Not A Namespace"], "--namespace: "),
        (["--schedule", "start=0 8 * *; duration=1h"], "need 5: minute hour"),
        (["--schedule", "start=0 8 * * *; duration=1h; timezone=Mars/Olympus"], "not an IANA time zone"),
        (["--schedule", "start=0 8 * * *; end=0 9 * * *; duration=1h"], "exactly one of end or duration"),
        (["--schedule", "start=0 8 * * *; duration=1h; minReplicas=4"], "above --max 3"),
        (["--schedule", "start=0 8 * * *; duration=1h; minReplicas=lots"], "not a whole number"),
        (["--schedule", "start 0 8 * * *"], "is not key=value"),
        (["--schedule", "{nope"], "not JSON"),
        # an engine option is named by the flag typed, not by the engine section's field
        (["--engine-queue-target", "2", "--engine-metrics-path", "metrics"], ": --engine-metrics-path: "),
        (["--engine-queue-target", "2", "--engine-queue-metric", "a b"], ": --engine-queue-metric: "),
        (["--engine-queue-target", "2", "--engine-interval", "1h"], ": --engine-interval: "),
        (
            ["--metric", "kvCacheUtil", "--engine-kv-metric", "ok", "--engine-kv-metric", "-"],
            "--engine-kv-metric #2: ",
        ),
    ],
)
def test_bad_options_exit_2_naming_the_option(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert command.main(argv) == 2
    assert named in capsys.readouterr().err


def test_schedules_become_the_local_keda_cron_triggers() -> None:
    s = settings(
        "--schedule",
        "start=0 8 * * MON-FRI; duration=10h; timezone=Europe/Berlin; minReplicas=2",
        "--schedule",
        '{"name": "night", "start": "0 22 * * *", "end": "0 6 * * *"}',
    )
    office, night = s.scaling.schedules
    assert (office.name, office.start.text, office.end.text) == (
        "schedule-0",
        "0 8 * * MON-FRI",
        "0 18 * * MON-FRI",
    )
    assert (office.desired_replicas, str(office.zone)) == (2, "Europe/Berlin")
    assert (night.name, night.end.text, night.desired_replicas, str(night.zone)) == (
        "night",
        "0 6 * * *",
        1,
        "UTC",
    )


@pytest.mark.parametrize(
    "argv", [["--gateways", "0"], ["--max", "0"], ["--cooldown", "later"], ["--crash-loop-exits", "-1"]]
)
def test_argument_types_are_checked(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        command.main(argv)
    assert info.value.code == 2
    assert argv[0] in capsys.readouterr().err


@pytest.mark.timeout(60)
def test_a_part_that_does_not_start_exits_1_and_says_why(tmp_path: pathlib.Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "noctaya",
                "dev",
                "--listen",
                f"127.0.0.1:{port}",
                "--plain",
                "--run-dir",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
            timeout=50,
            check=False,
        )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "gateway-0 exited" in out.stderr
    assert "address already in use" in out.stderr.lower() or "errno 98" in out.stderr.lower()


@pytest.mark.timeout(60)
def test_scaler_tls_without_openssl_exits_1_without_traceback(tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "noctaya",
            "dev",
            "--scaler-tls",
            "--listen",
            "127.0.0.1:1",
            "--plain",
            "--run-dir",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
        env={**os.environ, "PATH": str(empty)},
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "openssl command is needed" in out.stderr and "Traceback" not in out.stderr
