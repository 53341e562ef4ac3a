"""The local control plane's Pods on this host (``noctaya.dev.pods``) where no cluster is needed.

Aspects: a rendered gateway configuration moves to loopback addresses with every port and every other
field kept, and one it cannot run is refused naming the field; the scaler host is read from the
ScaledObject and a value that could smuggle a line into the hosts file is refused; the hosts file is
edited in place (a bind mount sees the same file), a mapping is added once and taken back out without
touching other lines; a service's addresses are loopback and stable; the backend command gets its
placeholders and needs ``{port}``; the command refuses bad options, and runs only on a cluster that
is up, before starting anything. The rest runs in the cluster tier (``tests/cluster/test_try.py``).
"""

from __future__ import annotations

import argparse
import ipaddress
import pathlib
import sys
from typing import Any

import pytest

from noctaya.dev import cluster, pods

RENDERED: dict[str, Any] = {
    "listen": ":8080",
    "backendUrl": "http://qwen-cpu-backend.llm.svc:8000",
    "servedModel": "qwen-cpu",
    "maxQueue": 100,
    "scaler": {"listen": ":9090", "target": 10, "engine": {"host": "qwen-cpu-engines.llm.svc", "port": 8000}},
}


def test_the_rendered_config_moves_to_loopback_addresses_only() -> None:
    config = pods.gateway_config(RENDERED, address="127.1.2.3", engine_address="127.4.5.6")
    assert config["listen"] == "127.1.2.3:8080"
    assert config["scaler"]["listen"] == "127.1.2.3:9090"
    assert config["backendUrl"] == "http://127.4.5.6:8000"
    assert config["scaler"]["engine"] == {"host": "127.4.5.6", "port": 8000}
    assert config["maxQueue"] == 100 and config["servedModel"] == "qwen-cpu"
    assert config["scaler"]["target"] == 10
    assert RENDERED["listen"] == ":8080" and RENDERED["scaler"]["listen"] == ":9090"  # not edited


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"listen": "anywhere"}, "listen"),
        ({"backendUrl": "qwen:8000"}, "backendUrl"),
        ({"backendUrl": "http://qwen:99999"}, "backendUrl"),
        ({"scaler": None}, "scaler"),
        ({"scaler": {"listen": None}}, "scaler.listen"),
    ],
)
def test_a_config_it_cannot_run_is_refused_naming_the_field(change: dict[str, Any], field: str) -> None:
    with pytest.raises(pods.PodError, match=rf"^{field}:"):
        pods.gateway_config({**RENDERED, **change}, address="127.1.2.3", engine_address="127.4.5.6")


def test_the_scaler_host_is_read_from_the_scaled_object() -> None:
    scaled = {"spec": {"triggers": [{"metadata": {"scalerAddress": "qwen-scaler.llm.svc:9090"}}]}}
    assert pods.scaler_host(scaled) == "qwen-scaler.llm.svc"


@pytest.mark.parametrize(
    "scaled",
    [
        {},
        {"spec": {"triggers": [{"metadata": {}}]}},
        {"spec": {"triggers": [{"metadata": {"scalerAddress": "evil\n127.0.0.1 kubernetes:9090"}}]}},
        {"spec": {"triggers": [{"metadata": {"scalerAddress": "a b:9090"}}]}},
        {"spec": {"triggers": [{"metadata": {"scalerAddress": "qwen-scaler.llm.svc\n:9090"}}]}},
    ],
)
def test_a_scaler_address_that_names_no_host_is_refused(scaled: dict[str, Any]) -> None:
    with pytest.raises(pods.PodError):
        pods.scaler_host(scaled)


def test_the_hosts_file_is_edited_in_place_once_and_restored(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("127.0.0.1 localhost\n127.9.9.9 other-scaler.ns.svc\n")
    inode = path.stat().st_ino
    hosts = pods.HostsFile(path)
    hosts.map(host="qwen-scaler.llm.svc", address="127.1.2.3")
    hosts.map(host="qwen-scaler.llm.svc", address="127.1.2.3")
    lines = path.read_text().splitlines()
    assert lines[-1] == f"127.1.2.3 qwen-scaler.llm.svc  {pods.HOSTS_MARK}"
    assert len(lines) == 3
    hosts.unmap(["qwen-scaler.llm.svc"])
    assert path.read_text() == "127.0.0.1 localhost\n127.9.9.9 other-scaler.ns.svc\n"
    assert path.stat().st_ino == inode


def test_a_mapping_that_is_no_host_or_no_address_is_refused(tmp_path: pathlib.Path) -> None:
    hosts = pods.HostsFile(tmp_path / "hosts")
    with pytest.raises(pods.PodError):
        hosts.map(host="a\nb", address="127.1.2.3")
    with pytest.raises(pods.PodError):
        hosts.map(host="qwen-scaler.llm.svc\n", address="127.1.2.3")
    with pytest.raises(ValueError):
        hosts.map(host="qwen-scaler.llm.svc", address="127.1.2.3 other")


def test_a_services_addresses_are_loopback_and_stable() -> None:
    first = pods.loopback("https://127.0.0.1:6443 llm/qwen gateway")
    assert first == pods.loopback("https://127.0.0.1:6443 llm/qwen gateway")
    assert first != pods.loopback("https://127.0.0.1:6443 llm/qwen backend")
    for address in (first, pods.loopback()):
        parsed = ipaddress.IPv4Address(address)
        assert parsed.is_loopback and address.split(".")[-1] not in ("0", "1", "255")


def test_the_backend_command_gets_its_placeholders() -> None:
    argv = pods.backend_argv("llama-server -m 'my model.gguf' --host {host} --port {port} --alias {model}",
                             host="127.0.0.1", port=4321, model="qwen")  # fmt: skip
    assert argv == [
        "llama-server",
        "-m",
        "my model.gguf",
        "--host",
        "127.0.0.1",
        "--port",
        "4321",
        "--alias",
        "qwen",
    ]
    with pytest.raises(ValueError, match="placeholder"):
        pods.backend_argv("llama-server", host="127.0.0.1", port=1, model="m")
    default = pods.backend_argv(pods.DEFAULT_BACKEND, host="127.0.0.1", port=4321, model="qwen")
    assert default[:3] == [sys.executable, "-m", "noctaya.dev.fake_engine"] and "qwen" in default


def test_a_message_escapes_control_characters(capsys: pytest.CaptureFixture[str]) -> None:
    pods.say("kubectl: \x1b[2Jgone\rover\nnext line\tcolumn")
    assert capsys.readouterr().err == "cluster: kubectl: \\x1b[2Jgone\\x0dover\nnext line\tcolumn\n"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    pods.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--backend-cmd", "llama-server"], 2, "--backend-cmd: the backend command must contain"),
        (["--namespace", "Bad Name"], 2, "--namespace: 'Bad Name' is not a namespace name"),
        ([], 1, "no KEDA hosts file"),
    ],
)
def test_bad_options_are_refused_before_anything_starts(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    done = pods.main(
        kubectl="kubectl",
        kubeconfig=tmp_path / "kubeconfig",
        hosts=tmp_path / "hosts",
        state=tmp_path,
        args=_args(*argv),
    )
    assert done == code
    assert message in capsys.readouterr().err
    assert not (tmp_path / "try").exists()


def test_the_cluster_command_runs_try_and_needs_a_cluster_up(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cluster.main(["--bin", str(tmp_path / "bin"), "--state", str(tmp_path), "try"]) == 1
    err = capsys.readouterr().err
    assert f"no KEDA hosts file at {tmp_path / 'keda' / 'hosts'}" in err and "scripts/cluster.sh up" in err
