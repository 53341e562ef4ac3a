"""The aggregate scaler process: report intake on ``:9091`` and the ExternalScaler on ``:9090``.

Several gateway replicas each report their demand; ``Membership`` sums the newest report of every
member; the same ExternalScaler the gateway co-locates serves that sum to KEDA. Memory only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import types

import prometheus_client
from aiohttp import web

from noctaya.contract import fields
from noctaya.contract import scaler as scaler_contract
from noctaya.scaler import (
    credentials,
    enginemetrics,
    intake,
    membership,
    metrics,
    server,
    servicer,
    signal,
    tokens,
)
from noctaya.serving import connections, peers

logger = logging.getLogger(__name__)


class AggregateScaler:
    """Runs both listeners while the context is open; ports are known after entry."""

    def __init__(self, *, config: scaler_contract.ScalerConfig) -> None:
        self.config = config
        self.registry = prometheus_client.CollectorRegistry()
        self.metrics = metrics.ScalerMetrics(registry=self.registry)
        self.membership = membership.Membership(
            max_members=config.max_members, max_member_demand=config.max_member_demand, ttl=config.member_ttl
        )
        service = config.service
        self.tokens = tokens.TokenFile(path=config.token_file)
        self.intake = intake.Intake(
            membership=self.membership,
            tokens=self.tokens,
            service=service,
            max_concurrent=config.max_concurrent_reports,
            max_body_bytes=config.max_report_bytes,
            metrics=self.metrics,
            registry=self.registry,
        )
        # the engines are read here, once for the service, beside the members' summed reports
        self.engine: signal.CombinedSignal | None = None
        if config.engine is not None:
            reader = enginemetrics.EngineReader(
                section=config.engine, metrics=enginemetrics.EngineMetrics(registry=self.registry)
            )
            self.engine = signal.CombinedSignal(
                demand=self.membership, target=config.target, section=config.engine, reader=reader
            )
            self.intake.engine_document = self.engine.document
        self._engine_task: asyncio.Task[None] | None = None
        tls = config.tls
        the_peers = peers.Peers(
            ipv6_prefix=config.peer_ipv6_prefix, trusted_proxies=peers.parse_networks(config.trusted_proxies)
        )
        self.grpc = server.ScalerServer(
            servicer=servicer.ExternalScalerServicer(
                source=self.membership,
                service=service,
                metric_name=config.metric_name,
                target=config.target if self.engine is None else self.engine.served_target,
                max_streams=config.max_streams,
                max_streams_per_peer=config.max_streams_per_peer,
                metrics=self.metrics,
                peers=the_peers,
                metric=None if self.engine is None else self.engine.value,
            ),
            listen=config.grpc_listen,
            tls=None
            if tls is None
            else credentials.CertificateFiles(
                cert_file=tls.cert_file, key_file=tls.key_file, ca_file=tls.ca_file
            ),
        )
        self.connections = connections.ConnectionTable(
            limits=connections.Limits(
                max_connections=config.max_connections,
                max_connections_per_peer=config.max_connections_per_peer,
                header_timeout=config.header_timeout,
                keepalive_timeout=config.keep_alive_timeout,
                peers=the_peers,
            )
        )
        metrics.ConnectionMetrics(registry=self.registry, table=self.connections)
        self._runner: web.AppRunner | None = None
        self.report_port = 0

    @property
    def grpc_port(self) -> int:
        return self.grpc.port

    async def __aenter__(self) -> AggregateScaler:
        """Start the engine reader, the gRPC server and the report server; whatever of these fails
        (a port taken), what started before it is stopped again (``__aexit__``) before the raise."""
        try:
            if self.engine is not None:
                self._engine_task = asyncio.create_task(
                    self.engine.reader.run(), name="noctaya-engine-reader"
                )
            await self.grpc.start()
            runner = connections.Runner(
                intake.make_app(self.intake),
                table=self.connections,
                error_body=intake.error_body,
                handle_signals=False,
                access_log=None,
            )
            await runner.setup()
            self._runner = runner
            listen = fields.ListenAddress.parse(self.config.report_listen)
            site = web.TCPSite(runner, listen.bind_host, listen.port, reuse_port=False)
            await site.start()
            bound = [a for a in runner.addresses if isinstance(a, tuple)]
            self.report_port = bound[0][1] if bound else listen.port
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        logger.info(
            "aggregate scaler: reports on :%d, ExternalScaler on :%d", self.report_port, self.grpc_port
        )
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: types.TracebackType | None
    ) -> None:
        await self.grpc.stop()
        task, self._engine_task = self._engine_task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()
