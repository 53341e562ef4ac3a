"""The local control plane's KEDA side (``noctaya.dev.cluster``) where no cluster is needed.

Aspects: KEDA's certificates verify against their CA, name the operator's and the metrics API
server's Services, serve and authenticate clients, keep their keys private and are made once; the
metrics service address is a loopback address kept per state directory, drawn again when the kept
one is not one; a given host address must be one an endpoint may have; the APIService trusts
KEDA's CA; the CLI names what it needs. The rest runs in the cluster tier (``tests/cluster``).
"""

from __future__ import annotations

import base64
import ipaddress
import pathlib
import subprocess

import pytest

from noctaya.dev import cluster


def openssl(*args: str) -> str:
    return subprocess.run(["openssl", *args], capture_output=True, text=True, timeout=30, check=True).stdout


def test_keda_certificates_verify_name_both_services_and_are_made_once(tmp_path: pathlib.Path) -> None:
    certs = tmp_path / "certs"
    cluster.make_keda_certificates(certs)
    for purpose in ("sslserver", "sslclient"):
        out = openssl("verify", "-purpose", purpose, "-CAfile", str(certs / "ca.crt"), str(certs / "tls.crt"))
        assert out.strip().endswith("OK")
    text = openssl("x509", "-in", str(certs / "tls.crt"), "-noout", "-text")
    for name in (
        "keda-operator.keda.svc",
        "keda-operator-metrics-apiserver.keda.svc",
        "IP Address:127.0.0.1",
    ):
        assert name in text
    assert "CN=keda-operator" in text.replace(" = ", "=")
    for key in ("ca.key", "tls.key"):
        assert (certs / key).stat().st_mode & 0o777 == 0o600
    first = (certs / "tls.crt").read_bytes()
    cluster.make_keda_certificates(certs)
    assert (certs / "tls.crt").read_bytes() == first


@pytest.mark.parametrize("kept", [None, "", "garbage", "10.0.0.1:9666", "127.0.0.9:80", "127.0.0.9:9666:1"])
def test_the_metrics_service_address_is_loopback_and_kept(tmp_path: pathlib.Path, kept: str | None) -> None:
    path = tmp_path / "keda" / "metrics-service"
    if kept is not None:
        path.parent.mkdir()
        path.write_text(kept)
    address = cluster.metrics_service_address(path)
    host, port = address.split(":")
    assert ipaddress.IPv4Address(host).is_loopback and port == "9666"
    assert cluster.metrics_service_address(path) == address
    assert path.read_text().strip() == address


def test_a_kept_valid_metrics_service_address_is_reused(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "metrics-service"
    path.write_text("127.3.4.5:9666\n")
    assert cluster.metrics_service_address(path) == "127.3.4.5:9666"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("127.0.0.1", "not an address an endpoint may have"),
        ("0.0.0.0", "not an address"),
        ("x", "not an IPv4"),
    ],
)
def test_a_given_host_address_must_be_one_an_endpoint_may_have(given: str, message: str) -> None:
    with pytest.raises(cluster.ClusterError, match=message):
        cluster.host_ip(given)
    assert cluster.host_ip("10.1.2.3") == "10.1.2.3"


def test_the_apiservice_trusts_kedas_ca_and_the_endpoint_is_the_host() -> None:
    documents = cluster.adapter_manifest(ip="10.1.2.3", port=24567, ca_bundle=b"PEM")
    kinds = {document["kind"]: document for document in documents}
    assert base64.b64decode(kinds["APIService"]["spec"]["caBundle"]) == b"PEM"
    assert kinds["Service"]["spec"]["ports"][0]["targetPort"] == 24567
    assert kinds["EndpointSlice"]["endpoints"][0]["addresses"] == ["10.1.2.3"]
    assert kinds["Endpoints"]["subsets"][0]["ports"][0]["port"] == 24567
    assert cluster.manifest(documents).count("\n---\n") == 3


def test_the_cli_names_what_it_needs(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cluster.main(["up"])
    assert exit_info.value.code == 2
    assert "--bin" in capsys.readouterr().err


def test_down_with_nothing_started_is_quiet_and_succeeds(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cluster.main(["--bin", str(tmp_path / "bin"), "--state", str(tmp_path), "down"]) == 0
    assert capsys.readouterr().err == ""
