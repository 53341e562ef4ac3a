"""ExternalScaler TLS and mutual TLS from files, with rotation picked up without a restart.

Aspects: server TLS serves a client that trusts the CA; mutual TLS refuses a plaintext client and a
TLS client without a certificate, and serves one with a certificate from the CA; a rotated
certificate (new CA) serves the next connection without a restart; an unreadable rotation keeps the
previous certificate; bad files at startup fail with the file named.
"""

from __future__ import annotations

import pathlib
import shutil
from collections.abc import AsyncIterator

import grpc
import pytest

from noctaya.contract import demand, fields
from noctaya.dev import certificates
from noctaya.scaler import credentials, server, servicer
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

REF = pb.ScaledObjectRef(name="qwen", namespace="ai")
TARGET = "localhost"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> certificates.Bundle:
    return certificates.make_bundle(directory=tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def other_bundle(tmp_path_factory: pytest.TempPathFactory) -> certificates.Bundle:
    return certificates.make_bundle(directory=tmp_path_factory.mktemp("pki2"), ca_name="other-ca")


@pytest.fixture
def live(tmp_path: pathlib.Path, bundle: certificates.Bundle) -> pathlib.Path:
    """A mounted-Secret-like directory holding the files the server reads."""
    for src, name in (
        (bundle.server_cert, "tls.crt"),
        (bundle.server_key, "tls.key"),
        (bundle.ca_cert, "ca.crt"),
    ):
        shutil.copy(src, tmp_path / name)
    return tmp_path


async def start(live: pathlib.Path, *, mutual: bool) -> server.ScalerServer:
    files = credentials.CertificateFiles(
        cert_file=str(live / "tls.crt"),
        key_file=str(live / "tls.key"),
        ca_file=str(live / "ca.crt") if mutual else None,
    )
    svc = servicer.ExternalScalerServicer(
        source=demand.DemandSignal(initial=1),
        service=fields.ServiceRef(name="qwen", namespace="ai"),
        metric_name="queueDepth",
        target=10,
        max_streams=4,
        max_streams_per_peer=4,
    )
    srv = server.ScalerServer(servicer=svc, listen="127.0.0.1:0", tls=files, grace=0.1)
    await srv.start()
    return srv


@pytest.fixture
async def mtls_server(live: pathlib.Path) -> AsyncIterator[server.ScalerServer]:
    srv = await start(live, mutual=True)
    yield srv
    await srv.stop()


async def call(port: int, creds: grpc.ChannelCredentials | None) -> bool:
    address = f"{TARGET}:{port}"
    options = [("grpc.ssl_target_name_override", TARGET)]
    channel = (
        grpc.aio.insecure_channel(address)
        if creds is None
        else grpc.aio.secure_channel(address, creds, options=options)
    )
    async with channel:
        return bool((await pb_grpc.ExternalScalerStub(channel).IsActive(REF, timeout=3)).result)


def client(bundle: certificates.Bundle, *, with_cert: bool = True) -> grpc.ChannelCredentials:
    return credentials.channel_credentials(
        ca_file=str(bundle.ca_cert),
        cert_file=str(bundle.client_cert) if with_cert else None,
        key_file=str(bundle.client_key) if with_cert else None,
    )


async def test_server_tls(live: pathlib.Path, bundle: certificates.Bundle) -> None:
    srv = await start(live, mutual=False)
    try:
        assert await call(srv.port, client(bundle, with_cert=False)) is True
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(srv.port, None)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await srv.stop()


async def test_mutual_tls_refuses_plaintext_and_certificateless_clients(
    mtls_server: server.ScalerServer, bundle: certificates.Bundle
) -> None:
    assert await call(mtls_server.port, client(bundle)) is True
    for creds in (None, client(bundle, with_cert=False)):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await call(mtls_server.port, creds)
        assert info.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_rotated_certificates_serve_the_next_connection(
    mtls_server: server.ScalerServer,
    live: pathlib.Path,
    bundle: certificates.Bundle,
    other_bundle: certificates.Bundle,
) -> None:
    assert await call(mtls_server.port, client(bundle)) is True
    # a Secret update: all three files replaced by ones from another CA
    for src, name in (
        (other_bundle.server_cert, "tls.crt"),
        (other_bundle.server_key, "tls.key"),
        (other_bundle.ca_cert, "ca.crt"),
    ):
        tmp = live / f".{name}.new"
        shutil.copy(src, tmp)
        tmp.replace(live / name)
    assert await call(mtls_server.port, client(other_bundle)) is True
    with pytest.raises(grpc.aio.AioRpcError):
        await call(mtls_server.port, client(bundle))
    assert mtls_server.tls is not None and mtls_server.tls.reloads == 1


async def test_unreadable_rotation_keeps_the_previous_certificate(
    mtls_server: server.ScalerServer, live: pathlib.Path, bundle: certificates.Bundle
) -> None:
    (live / "tls.crt").write_text("half written")
    assert await call(mtls_server.port, client(bundle)) is True


def test_bad_files_at_startup_name_the_file(tmp_path: pathlib.Path, bundle: certificates.Bundle) -> None:
    missing = credentials.CertificateFiles(
        cert_file=str(tmp_path / "nope.crt"), key_file=str(bundle.server_key), ca_file=None
    )
    with pytest.raises(credentials.CredentialsError, match=r"nope\.crt"):
        missing.initial()
    (tmp_path / "junk.key").write_text("junk")
    junk = credentials.CertificateFiles(
        cert_file=str(bundle.server_cert), key_file=str(tmp_path / "junk.key"), ca_file=None
    )
    with pytest.raises(credentials.CredentialsError, match=r"keyFile .*junk.key.* no PEM"):
        junk.initial()
