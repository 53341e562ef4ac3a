"""``noctaya gateway --config FILE [flags]``: run one gateway process.

Every config field is also a flag (``maxQueue`` → ``--max-queue``, ``service.name`` →
``--service-name``); flags override the file. A bad value ends the process at start with exit code 2
and one line per bad field, no traceback.

Shutdown order (SIGTERM or SIGINT):

1. the drain flag flips: ``/healthz`` answers 503 so the Service stops routing here, and new ``/v1``
   requests get 503 ``draining``;
2. requests already queued or in flight (including open streams) run to completion, for at most
   ``drainTimeout``; requests still queued at the deadline are answered ``draining``;
3. the listener closes and remaining handlers are cancelled (``runner.cleanup``);
4. cleanup contexts unwind in reverse order: extra contexts first (the scaler / demand reporter, which
   withdraws this gateway's report), then the readiness probe, the heartbeat ticker and the lease and
   queue timers, then the backend client session;
5. exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import sys
from collections.abc import Sequence
from typing import Any

import pydantic
import uvloop
from aiohttp import web
from pydantic import alias_generators

from noctaya.gateway import app as app_
from noctaya.gateway import config as config_
from noctaya.gateway import keys

logger = logging.getLogger("noctaya.gateway")

_SECTIONS: dict[str, type[pydantic.BaseModel]] = {
    "service": config_.ServiceRef,
    "scaler": config_.ScalerSection,
    "report": config_.ReportSection,
}


#: what each config field means (file key -> help); its default and unit are added from the model
HELP: dict[str, str] = {
    "listen": "where clients connect, HOST:PORT or :PORT",
    "backendUrl": "base URL of the model backend Service (http or https)",
    "readinessPath": "backend path that answers 200 once the model is loaded",
    "maxQueue": "cold-queue slots: requests held while the backend starts (full: 429)",
    "maxInFlight": "requests forwarded to the backend at once (full: 429)",
    "coldStartMode": "keepalive (hold streams with SSE comments) or reject (503 + Retry-After)",
    "heartbeatInterval": "SSE keepalive comment interval while a stream waits, a duration",
    "activationTimeout": "give up on a cold start after this long, a duration",
    "retryAfter": "Retry-After of 429/503 answers, a duration",
    "retryGrace": "demand stays reported this long after the backend is Ready, a duration",
    "drainTimeout": "longest wait for in-flight requests on SIGTERM, a duration",
    "maxBodyBytes": "largest request body, in bytes (larger: 413)",
    "apiKeyFile": "require 'Authorization: Bearer <key>' with a key listed in FILE (reread per request)",
    "probeInterval": "readiness probe period while requests wait for a cold backend, a duration",
    "warmProbeInterval": "readiness probe period while the backend is Ready, a duration",
    "idleProbeInterval": "readiness probe period while cold with nobody waiting, a duration",
    "probeTimeout": "timeout of one readiness probe, a duration",
    "connectTimeout": "timeout of one connection attempt to the backend, a duration",
    "connectRetries": "connection attempts retried before a 502",
    "bodyTimeout": "longest pause while reading a request body, a duration",
    "service.name": "LLMService (and ScaledObject) name the scaler answers for",
    "service.namespace": "namespace of that LLMService",
    "scaler.listen": "co-located ExternalScaler gRPC address, HOST:PORT or :PORT",
    "scaler.target": "per-replica demand target KEDA scales by",
    "scaler.metricName": "metric name KEDA asks for",
    "scaler.tls.certFile": "co-located scaler TLS certificate (PEM file)",
    "scaler.tls.keyFile": "private key of that certificate (PEM file)",
    "scaler.tls.caFile": "CA that client certificates must chain to: mutual TLS (PEM file)",
    "report.url": "aggregate scaler report URL: publish demand there instead of a co-located scaler",
    "report.tokenFile": "file holding the aggregate scaler token",
    "report.interval": "demand report interval, a duration",
}


def _help(key: str, field: Any) -> str:
    """The field's meaning with its default (durations in Go form, e.g. ``10s``)."""
    text = HELP[key]
    if field.is_required():
        where = "required when the section is used" if "." in key else "required"
        return f"{text} (no default: {where})"
    default = field.default
    if default is None:
        return f"{text} (default: unset)"
    if isinstance(default, float) and "duration" in text:
        return f"{text} (default: {config_.format_duration(default)})"
    return f"{text} (default: {default})"


def _flag(path: Sequence[str]) -> str:
    return "--" + "-".join(alias_generators.to_snake(p).replace("_", "-") for p in path)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noctaya gateway",
        description="Run the OpenAI-compatible gateway in front of one model backend.",
    )
    parser.add_argument(
        "--config", metavar="FILE", help="YAML or JSON config file; flags override it (default: none)"
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (default: %(default)s)",
    )
    for name, field in config_.GatewayConfig.model_fields.items():
        if name in _SECTIONS:
            continue
        parser.add_argument(
            _flag([name]),
            dest=f"field:{field.alias}",
            metavar="VALUE",
            help=_help(str(field.alias), field),
        )
    for section, model in _SECTIONS.items():
        for name, field in model.model_fields.items():
            if name == "tls":
                for tls_name, tls_field in config_.TlsFiles.model_fields.items():
                    parser.add_argument(
                        _flag([section, "tls", tls_name]),
                        metavar="VALUE",
                        dest=f"field:{section}.tls.{tls_field.alias}",
                        help=_help(f"{section}.tls.{tls_field.alias}", tls_field),
                    )
                continue
            parser.add_argument(
                _flag([section, name]),
                metavar="VALUE",
                dest=f"field:{section}.{field.alias}",
                help=_help(f"{section}.{field.alias}", field),
            )
    parser.add_argument(
        "--no-scaler", action="store_true", help="run no co-located scaler (scaler: null; default: run one)"
    )
    return parser


def config_from_args(args: argparse.Namespace) -> config_.GatewayConfig:
    """File first, then every flag given; raises :class:`~noctaya.gateway.config.ConfigError`."""
    document: dict[str, Any] = config_.read_document(args.config) if args.config else {}
    for dest, value in vars(args).items():
        if not dest.startswith("field:") or value is None:
            continue
        path = dest.removeprefix("field:").split(".")
        target = document
        for part in path[:-1]:
            nested = target.get(part)
            if not isinstance(nested, dict):
                nested = target[part] = {}
            target = nested
        target[path[-1]] = value
    if args.no_scaler:
        document["scaler"] = None
    return config_.build_config(document)


async def serve(
    config: config_.GatewayConfig,
    *,
    extra_contexts: Sequence[app_.CleanupContext] = (),
    started: asyncio.Event | None = None,
) -> int:
    """Run until SIGTERM/SIGINT, then drain and stop in the order the module docstring gives."""
    app = app_.make_app(config, extra_contexts=extra_contexts)
    runner = web.AppRunner(
        app, handle_signals=False, handler_cancellation=True, access_log=None, shutdown_timeout=1.0
    )
    await runner.setup()
    # Everything built so far lives as long as the process: keep it out of the cyclic collector's
    # scans, so full collections stay short and do not show up as latency spikes.
    gc.freeze()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        host, port = config.listen_address
        site = web.TCPSite(runner, host, port, backlog=4096, reuse_address=True)
        await site.start()
        bound = ", ".join(f"http://{a[0]}:{a[1]}" for a in runner.addresses if isinstance(a, tuple))
        logger.info(
            "gateway listening on %s, backend %s (%s mode)", bound, config.backend_url, config.cold_start_mode
        )
        if started is not None:
            started.set()
        await stop.wait()
        logger.info("draining (up to %gs)", config.drain_timeout)
        drained = await app[keys.DRAIN].wait_idle()
        logger.info("drain %s; stopping", "complete" if drained else "timed out")
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await runner.cleanup()
    return 0


def _scaler_contexts(config: config_.GatewayConfig) -> list[app_.CleanupContext]:
    """The co-located ExternalScaler or the demand reporter, when configured (``noctaya.scaler``)."""
    if config.scaler is None and config.report is None:
        return []
    from noctaya.scaler import hosting  # imported only when used: grpc stays out of a plain gateway

    return list(hosting.gateway_contexts(config))


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = config_from_args(args)
        extra_contexts = _scaler_contexts(config)  # co-located scaler or demand reporter
    except config_.ConfigError as exc:
        print(f"noctaya gateway: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    try:
        return uvloop.run(serve(config, extra_contexts=extra_contexts))
    except OSError as exc:  # e.g. the listen port is taken
        print(f"noctaya gateway: {exc}", file=sys.stderr)
        return 1
