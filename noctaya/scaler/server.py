"""The ExternalScaler gRPC server: servicer, health service, keepalive, bounds, TLS.

``ScalerServer`` is an async context manager that binds, serves and stops one grpc.aio server.
Shutdown order: health turns NOT_SERVING, open streams end with OK (KEDA reconnects without
growing its backoff), then the server stops with a short grace.
"""

from __future__ import annotations

import logging
import types

import grpc
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from noctaya.contract import fields
from noctaya.scaler import credentials as credentials_mod
from noctaya.scaler import servicer as servicer_mod

logger = logging.getLogger(__name__)

SERVICE_NAME = servicer_mod.SERVICE_NAME
MAX_MESSAGE_BYTES = 64 * 1024  # a ScaledObjectRef with its metadata is a few hundred bytes

SERVER_OPTIONS: list[tuple[str, int]] = [
    ("grpc.so_reuseport", 0),  # a second scaler must not share the port
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", 20_000),  # ping idle connections that hold a stream
    ("grpc.keepalive_timeout_ms", 10_000),  # and drop them when the peer is gone
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.http2.min_ping_interval_without_data_ms", 5_000),  # tolerate clients that ping
    ("grpc.max_connection_idle_ms", 30 * 60_000),
]


class ScalerServer:
    """Serves one servicer on one address until the context exits."""

    def __init__(
        self,
        *,
        servicer: servicer_mod.ExternalScalerServicer,
        listen: str,
        tls: credentials_mod.CertificateFiles | None = None,  # None: plaintext
        grace: float = 1.0,
    ) -> None:
        self.servicer = servicer
        self.listen = listen
        self.tls = tls
        self.grace = grace
        self.port = 0
        self._server: grpc.aio.Server | None = None
        self._health = health_aio.HealthServicer()

    async def __aenter__(self) -> ScalerServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        await self.stop()

    async def start(self) -> None:
        server = grpc.aio.server(options=SERVER_OPTIONS)
        self.servicer.add_to_server(server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        address = fields.ListenAddress.parse(self.listen).grpc_target
        try:
            if self.tls is None:
                port = server.add_insecure_port(address)
            else:
                port = server.add_secure_port(address, self.tls.server_credentials())
        except RuntimeError as exc:  # gRPC raises this, not OSError, when it cannot bind
            raise OSError(f"cannot listen for gRPC on {self.listen}: {exc}") from None
        if port == 0:
            raise OSError(f"cannot listen for gRPC on {self.listen}")
        self.port = port
        self.servicer.attach()
        await server.start()
        self._server = server
        for name in ("", SERVICE_NAME):
            await self._health.set(name, health_pb2.HealthCheckResponse.SERVING)
        logger.info(
            "ExternalScaler listening on %s (%s)",
            address,
            "plaintext" if self.tls is None else ("mutual TLS" if self.tls.mutual else "TLS"),
        )

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        await self._health.enter_graceful_shutdown()
        self.servicer.close()
        await server.stop(self.grace)
