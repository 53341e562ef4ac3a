"""``noctaya gateway --config FILE [flags]``: run one gateway process.

Every config field is also a flag (``maxQueue`` → ``--max-queue``, ``service.name`` →
``--service-name``); flags override the file. While it runs, the gateway polls the file and applies
a change of its live fields (``warmUntil``; ``noctaya.gateway.liveconfig``), the flags still laid over
it. A bad value ends the process at start with exit code 2
and one line per bad field, no traceback.

Start order: the listening sockets are opened first (``noctaya.serving.listeners``), so a taken port
ends the process with exit code 1 and the reason before anything else has started (no probe of the
backend, no demand report or withdrawal, no co-located scaler); then the app and its cleanup
contexts start, then the sockets are served.

Shutdown order (SIGTERM or SIGINT):

1. the drain flag flips: ``/healthz`` answers 503 so the Service stops routing here, and new ``/v1``
   requests get 503 ``draining``;
2. requests already queued or in flight (including open streams) run to completion, for at most
   ``drainTimeout``; requests still queued at the deadline are answered ``draining``, and streams
   still running end with a final SSE error event (``draining``) in the last 0.5 s of it;
3. the listener closes and remaining handlers are cancelled (``runner.cleanup``);
4. cleanup contexts unwind in reverse order: sidecars first (the co-located scaler, or the demand
   reporter, which withdraws this gateway's report), then the readiness probe, the heartbeat ticker,
   the backend-header watchdog and the config file poll, then the lease and queue timers (and so any
   warm hold), then the backend client session;
5. exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import signal
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pydantic
import uvloop
import yaml
from aiohttp import web

from noctaya.contract import demand as demand_mod
from noctaya.contract import documents, fields, flags
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import app as app_
from noctaya.gateway import keys, liveconfig
from noctaya.serving import connections, listeners, redaction

GC_THRESHOLDS = (20_000, 10, 10)
"""The cyclic collector's thresholds while serving (Python's are 700, 10, 10). A request's objects
are freed by their reference counts when it ends; a young collection scans the objects of every
request in flight, so at the default it ran every few requests and each scan of a few hundred
requests in flight took about a millisecond (seven for the middle generation), stalls in the tail
of the latency. Collections now come about thirty times less often, each costing what it did (with
512 clients the gateway serves some 8 % more requests per CPU-second); cyclic garbage waits for at
most 20,000 more objects to be made before it is collected."""

logger = logging.getLogger("noctaya.gateway")

BACKLOG = 4096
"""Connections the kernel holds for the listening sockets until they are accepted (and while the
gateway starts: the sockets listen before the app is built)."""

#: the end of ``drainTimeout`` kept for ending streams with their final event
STREAM_CUT_SECONDS = 0.5
#: what the server waits for handlers after the drain (they have had ``drainTimeout`` already)
SHUTDOWN_SECONDS = 0.25

_SECTIONS: dict[str, type[pydantic.BaseModel]] = {
    "service": fields.ServiceRef,
    "scaler": gateway_contract.ScalerSection,
    "report": gateway_contract.ReportSection,
}


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
    for name, field in gateway_contract.GatewayConfig.model_fields.items():
        if name in _SECTIONS:
            continue
        parser.add_argument(
            flags.flag([name]),
            dest=f"field:{field.alias}",
            metavar="VALUE",
            help=flags.describe(field),
        )
    for section, model in _SECTIONS.items():
        for name, field in model.model_fields.items():
            if name == "engine":  # a structured section: the config file only
                continue
            if name == "tls":
                for tls_name, tls_field in fields.TlsFiles.model_fields.items():
                    parser.add_argument(
                        flags.flag([section, "tls", tls_name]),
                        metavar="VALUE",
                        dest=f"field:{section}.tls.{tls_field.alias}",
                        help=f"{section}: {flags.describe(tls_field)}",
                    )
                continue
            parser.add_argument(
                flags.flag([section, name]),
                metavar="VALUE",
                dest=f"field:{section}.{field.alias}",
                help=f"{section}: {flags.describe(field)}",
            )
    parser.add_argument(
        "--no-scaler", action="store_true", help="run no co-located scaler (scaler: null; default: run one)"
    )
    return parser


def config_from_args(args: argparse.Namespace) -> gateway_contract.GatewayConfig:
    """File first, then every flag given; raises :class:`~noctaya.contract.documents.ConfigError`."""
    return config_from_document(documents.read_document(args.config) if args.config else {}, args=args)


def config_source(args: argparse.Namespace) -> liveconfig.ConfigSource | None:
    """The config file (``--config``) to watch for changes of live fields, the flags laid over it."""
    if not args.config:
        return None
    return liveconfig.ConfigSource(
        path=Path(args.config), build=lambda document: config_from_document(document, args=args)
    )


def config_from_document(
    document: dict[str, Any], *, args: argparse.Namespace
) -> gateway_contract.GatewayConfig:
    """``document`` (the file's) with every flag given laid over it, validated."""
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
        if path == ["coldRoutes"]:  # structured: given as JSON (or YAML) on the command line
            try:
                value = yaml.safe_load(value)
            except yaml.YAMLError as exc:
                raise documents.ConfigError(f"--cold-routes: not JSON or YAML ({exc})") from None
        target[path[-1]] = value
    if args.no_scaler:
        document["scaler"] = None
    return gateway_contract.build_config(document)


async def serve(
    config: gateway_contract.GatewayConfig,
    *,
    source: liveconfig.ConfigSource | None = None,
    sidecars: Sequence[demand_mod.Sidecar] = (),
    started: asyncio.Event | None = None,
) -> int:
    """Run until SIGTERM/SIGINT, then drain and stop in the order the module docstring gives. The
    listening sockets are opened first: a taken port ends the process before anything has started."""
    try:
        sockets = await listeners.listen(
            config.listen_address.bind_host, config.listen_address.port, backlog=BACKLOG
        )
    except OSError as exc:
        raise OSError(exc.errno, f"cannot listen on {config.listen}: {exc.strerror or exc}") from None
    try:
        return await _serve(config, sockets, source=source, sidecars=sidecars, started=started)
    finally:
        listeners.close(sockets)  # served ones are closed already (closing twice does nothing)


async def _serve(
    config: gateway_contract.GatewayConfig,
    sockets: list[socket.socket],
    *,
    source: liveconfig.ConfigSource | None,
    sidecars: Sequence[demand_mod.Sidecar],
    started: asyncio.Event | None,
) -> int:
    app = app_.make_app(config, source=source, sidecars=sidecars)
    runner = app_.make_runner(
        app,
        handle_signals=False,
        handler_cancellation=True,
        access_log=None,
        shutdown_timeout=SHUTDOWN_SECONDS,
    )
    await runner.setup()
    # Everything built so far lives as long as the process: keep it out of the cyclic collector's
    # scans, so full collections stay short and do not show up as latency spikes.
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    try:
        for sock in sockets:
            await web.SockSite(runner, sock, backlog=BACKLOG).start()
        bound = ", ".join(f"http://{a[0]}:{a[1]}" for a in runner.addresses if isinstance(a, tuple))
        logger.info(
            "gateway listening on %s, backend %s (%s mode)", bound, config.backend_url, config.cold_start_mode
        )
        if started is not None:
            started.set()
        await stop.wait()
        logger.info("draining (up to %gs)", config.drain_timeout)
        drained = await app[keys.DRAIN].wait_idle(within=max(0.0, config.drain_timeout - STREAM_CUT_SECONDS))
        if not drained:  # streams still running get a final error event, not a silent cut
            cut = await app[app_.UPSTREAM].cut_streams(within=STREAM_CUT_SECONDS)
            logger.info("drain timed out; %d stream(s) ended with a final error event", cut)
        logger.info("drain %s; stopping", "complete" if drained else "timed out")
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await runner.cleanup()
    return 0


def _sidecars(config: gateway_contract.GatewayConfig) -> list[demand_mod.Sidecar]:
    """The co-located ExternalScaler or the demand reporter, when configured (``noctaya.scaler``)."""
    if config.scaler is None and config.report is None:
        return []
    from noctaya.scaler import hosting  # imported only when used: gRPC stays out of a plain gateway

    return hosting.gateway_sidecars(config)


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redaction.install()
    connections.raise_descriptor_limit()  # the connection bound is derived from it (app.connection_limits)
    try:
        config = config_from_args(args)
        sidecars = _sidecars(config)  # co-located scaler or demand reporter
    except gateway_contract.ConfigError as exc:
        print(f"noctaya gateway: invalid configuration:\n{exc}", file=sys.stderr)
        return 2
    try:
        return uvloop.run(serve(config, source=config_source(args), sidecars=sidecars))
    except OSError as exc:  # e.g. the listen port is taken
        print(f"noctaya gateway: {exc}", file=sys.stderr)
        return 1
