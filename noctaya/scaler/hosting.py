"""What the scaler package runs inside a gateway process, as aiohttp cleanup contexts.

``gateway_contexts(config)`` returns the contexts ``noctaya gateway`` passes to
``make_app(config, extra_contexts=...)``:
- with ``scaler`` set (one gateway replica), the co-located ExternalScaler on ``:9090`` serving
  ``app[DEMAND]``, its metrics in the gateway's registry;
- with ``report`` set (several replicas), the reporter publishing ``app[DEMAND]`` to the aggregate
  scaler, withdrawing on shutdown.
They start after the gateway's own contexts and stop before them. ``noctaya gateway`` closes the
app only after its drain, so demand stays reported while in-flight requests finish; then the
scaler ends its streams (status OK) and the reporter withdraws, before the gateway's own parts stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

import aiohttp
from aiohttp import web

from noctaya.gateway import config as gateway_config
from noctaya.gateway import keys
from noctaya.scaler import credentials, metrics, reporter, server, servicer

CleanupContext = Callable[[web.Application], AsyncIterator[None]]
MAX_STREAMS = 16  # KEDA opens one per ScaledObject trigger; a few more for reconnect overlap


def _service(config: gateway_config.GatewayConfig, section: str) -> servicer.ServiceRef:
    if config.service is None:
        raise gateway_config.ConfigError(
            f"service: required when {section} is set (it names the ScaledObject)"
        )
    return servicer.ServiceRef(name=config.service.name, namespace=config.service.namespace)


def colocated_scaler(config: gateway_config.GatewayConfig) -> CleanupContext:
    section = config.scaler
    if section is None:
        raise gateway_config.ConfigError("scaler: not configured")
    service = _service(config, "scaler")
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
            raise gateway_config.ConfigError(f"scaler.tls: {exc}") from None

    async def context(app: web.Application) -> AsyncIterator[None]:
        svc = servicer.ExternalScalerServicer(
            source=app[keys.DEMAND],
            service=service,
            metric_name=section.metric_name,
            target=section.target,
            max_streams=MAX_STREAMS,
            metrics=metrics.ScalerMetrics(registry=app[keys.METRICS].registry),
        )
        async with server.ScalerServer(servicer=svc, listen=section.listen, tls=files):
            yield

    return context


def demand_reporter(config: gateway_config.GatewayConfig) -> CleanupContext:
    section = config.report
    if section is None:
        raise gateway_config.ConfigError("report: not configured")
    service = _service(config, "report")

    async def context(app: web.Application) -> AsyncIterator[None]:
        rep = reporter.Reporter(
            source=app[keys.DEMAND],
            url=section.url,
            token_file=section.token_file,
            service=service,
            interval=section.interval,
            metrics=metrics.ReporterMetrics(registry=app[keys.METRICS].registry),
        )
        async with aiohttp.ClientSession() as session:
            task = asyncio.create_task(rep.run(session=session), name="noctaya-demand-reporter")
            try:
                yield
            finally:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
                await rep.withdraw(session=session)

    return context


def gateway_contexts(config: gateway_config.GatewayConfig) -> list[CleanupContext]:
    """The cleanup contexts for this gateway's scaling mode (none when neither is configured)."""
    contexts: list[CleanupContext] = []
    if config.scaler is not None:
        contexts.append(colocated_scaler(config))
    if config.report is not None:
        contexts.append(demand_reporter(config))
    return contexts
