"""What the scaler package runs inside a gateway process: ``Sidecar``s of the contract.

``gateway_sidecars(config)`` returns what ``noctaya gateway`` passes to ``make_app(config,
sidecars=...)``:
- with ``scaler`` set (one gateway replica), the co-located ExternalScaler serving the gateway's
  demand, its metrics in the gateway's registry;
- with ``report`` set (several replicas), the reporter publishing the gateway's demand to the
  aggregate scaler, withdrawing on shutdown.
The gateway starts them after its own parts and stops them before (after its drain), so demand stays
reported while in-flight requests finish; then the scaler ends its streams (status OK) and the
reporter withdraws.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import aiohttp
import prometheus_client

from noctaya.contract import demand as demand_mod
from noctaya.contract import documents, engines
from noctaya.contract import gateway as gateway_contract
from noctaya.scaler import credentials, enginemetrics, metrics, reporter, server, servicer, signal
from noctaya.serving import peers


def colocated_scaler(config: gateway_contract.GatewayConfig) -> demand_mod.Sidecar:
    section, service = config.scaler, config.service
    if section is None or service is None:
        raise documents.ConfigError("scaler: not configured (with service)")
    tls = section.tls
    files = (
        None
        if tls is None
        else credentials.CertificateFiles(cert_file=tls.cert_file, key_file=tls.key_file, ca_file=tls.ca_file)
    )
    if files is not None:
        try:
            files.initial()  # fail at start, naming the field, rather than at the first handshake
        except credentials.CredentialsError as exc:
            raise documents.ConfigError(f"scaler.tls: {exc}") from None

    @contextlib.asynccontextmanager
    async def sidecar(
        *,
        demand: demand_mod.DemandSource,
        registry: prometheus_client.CollectorRegistry,
        engine: engines.Board,
    ) -> AsyncIterator[None]:
        async with engine_signal(
            section=section.engine, demand=demand, target=section.target, registry=registry
        ) as combined:
            if combined is not None:
                engine.source = combined.document
            svc = servicer.ExternalScalerServicer(
                source=demand,
                service=service,
                metric_name=section.metric_name,
                target=section.target if combined is None else combined.served_target,
                max_streams=section.max_streams,
                max_streams_per_peer=section.max_streams_per_peer,
                metrics=metrics.ScalerMetrics(registry=registry),
                peers=peers.Peers(ipv6_prefix=config.peer_ipv6_prefix),
                metric=None if combined is None else combined.value,
            )
            async with server.ScalerServer(servicer=svc, listen=section.listen, tls=files):
                yield

    return sidecar


def demand_reporter(config: gateway_contract.GatewayConfig) -> demand_mod.Sidecar:
    section, service = config.report, config.service
    if section is None or service is None:
        raise documents.ConfigError("report: not configured (with service)")

    @contextlib.asynccontextmanager
    async def sidecar(
        *,
        demand: demand_mod.DemandSource,
        registry: prometheus_client.CollectorRegistry,
        engine: engines.Board,
    ) -> AsyncIterator[None]:
        rep = reporter.Reporter(
            source=demand,
            url=section.url,
            token_file=section.token_file,
            service=service,
            interval=section.interval,
            metrics=metrics.ReporterMetrics(registry=registry),
        )
        engine.source = lambda: rep.engine  # what the aggregate scaler answered, when it reads them
        async with aiohttp.ClientSession() as session:
            task = asyncio.create_task(rep.run(session=session), name="noctaya-demand-reporter")
            try:
                yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                await rep.withdraw(session=session)

    return sidecar


@contextlib.asynccontextmanager
async def engine_signal(
    *,
    section: engines.EngineSignalSection | None,
    demand: demand_mod.DemandSource,
    target: float,
    registry: prometheus_client.CollectorRegistry,
) -> AsyncIterator[signal.CombinedSignal | None]:
    """The engine reader running, and the signal combining it with ``demand`` (None: no section).
    The co-located and the aggregate scaler both serve KEDA through this one function."""
    if section is None:
        yield None
        return
    reader = enginemetrics.EngineReader(
        section=section, metrics=enginemetrics.EngineMetrics(registry=registry)
    )
    task = asyncio.create_task(reader.run(), name="noctaya-engine-reader")
    try:
        yield signal.CombinedSignal(demand=demand, target=target, section=section, reader=reader)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def gateway_sidecars(config: gateway_contract.GatewayConfig) -> list[demand_mod.Sidecar]:
    """The sidecars of this gateway's scaling mode (none when neither is configured)."""
    sidecars: list[demand_mod.Sidecar] = []
    if config.scaler is not None:
        sidecars.append(colocated_scaler(config))
    if config.report is not None:
        sidecars.append(demand_reporter(config))
    return sidecars
