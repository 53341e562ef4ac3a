"""``noctaya scaler --config FILE`` as a process.

Aspects: a bad config, a missing token file and missing TLS files exit 2 with a message naming the
field; a gRPC port already taken exits 2 saying so, without a traceback; a good config serves
reports and gRPC until SIGTERM, then exits 0.
"""

from __future__ import annotations

import json
import pathlib
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Mapping

import pytest

from noctaya.process import scaler as command


def write(path: pathlib.Path, document: Mapping[str, object]) -> str:
    path.write_text(json.dumps(document))
    return str(path)


def test_bad_inputs_exit_2_naming_the_field(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        command.main(["--config", write(tmp_path / "a.json", {"service": {"name": "q"}, "target": 0})]) == 2
    )
    err = capsys.readouterr().err
    assert "service.namespace" in err and "target" in err
    good = {"service": {"name": "qwen", "namespace": "ai"}, "tokenFile": str(tmp_path / "missing")}
    assert command.main(["--config", write(tmp_path / "b.json", good)]) == 2
    assert "tokenFile" in capsys.readouterr().err
    (tmp_path / "token").write_text("0123456789abcdef0123")
    tls = {
        **good,
        "tokenFile": str(tmp_path / "token"),
        "grpcListen": "127.0.0.1:0",
        "reportListen": "127.0.0.1:0",
        "tls": {"certFile": str(tmp_path / "no.crt"), "keyFile": str(tmp_path / "no.key")},
    }
    assert command.main(["--config", write(tmp_path / "c.json", tls)]) == 2
    assert "tls" in capsys.readouterr().err
    assert command.main(["--config", str(tmp_path / "nope.yaml")]) == 2
    deep = tmp_path / "deep.json"
    deep.write_text('{"service": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert command.main(["--config", str(deep)]) == 2
    assert "nested deeper" in capsys.readouterr().err


def test_grpc_port_taken_exits_2_without_traceback(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "token").write_text("0123456789abcdef0123")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = {
            "service": {"name": "qwen", "namespace": "ai"},
            "tokenFile": str(tmp_path / "token"),
            "grpcListen": f"127.0.0.1:{port}",
            "reportListen": "127.0.0.1:0",
        }
        assert command.main(["--config", write(tmp_path / "s.json", config)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen for gRPC on 127.0.0.1:{port}" in err and "Traceback" not in err


@pytest.mark.timeout(30)
def test_serves_until_sigterm(tmp_path: pathlib.Path) -> None:
    (tmp_path / "token").write_text("0123456789abcdef0123")
    config = write(
        tmp_path / "s.json",
        {
            "service": {"name": "qwen", "namespace": "ai"},
            "tokenFile": str(tmp_path / "token"),
            "grpcListen": "127.0.0.1:0",
            "reportListen": "127.0.0.1:0",
        },
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "noctaya", "scaler", "--config", config],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert proc.stdout is not None
        output: list[str] = []
        for raw in proc.stdout:  # the process binds port 0 and logs the port it got
            output.append(raw.decode())
            if found := re.search(r"reports on :(\d+), ExternalScaler on :(\d+)", output[-1]):
                port = int(found[1])
                break
        else:
            raise AssertionError(f"no listening line; exit {proc.wait()}:\n{''.join(output)}")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
            assert json.load(reply) == {"status": "ok", "members": 0, "demand": 0}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
