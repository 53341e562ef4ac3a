"""``noctaya dev --scaler-tls``: the ExternalScaler behind mutual TLS, end to end.

Aspects: the local KEDA (a client with a certificate from the CA) scales a cold request to
completion through the mTLS scaler; a plaintext client and a TLS client without a certificate are
refused.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from noctaya.scaler import credentials
from noctaya.scaler._pb import externalscaler_pb2 as pb
from noctaya.scaler._pb import externalscaler_pb2_grpc as pb_grpc

pytestmark = pytest.mark.e2e
REF = pb.ScaledObjectRef(name="dev", namespace="default")


@pytest.mark.timeout(40)
async def test_mutual_tls_scaler_serves_keda_and_refuses_plaintext(start_dev: Any) -> None:
    dev = await start_dev("--scaler-tls", "--retry-grace", "300ms")
    reply = await dev.client().chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.choices[0].message.content
    assert dev.state()["keda"]["pushes"] >= 1
    port = dev.state()["grpcPort"]
    pki = dev.run_dir / "pki"
    without_cert = credentials.channel_credentials(ca_file=str(pki / "noctaya-dev-ca.crt"))
    options = [("grpc.ssl_target_name_override", "localhost")]
    for channel in (
        grpc.aio.insecure_channel(f"127.0.0.1:{port}"),
        grpc.aio.secure_channel(f"127.0.0.1:{port}", without_cert, options=options),
    ):
        async with channel:
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await pb_grpc.ExternalScalerStub(channel).IsActive(REF, timeout=3)
            assert info.value.code() == grpc.StatusCode.UNAVAILABLE
