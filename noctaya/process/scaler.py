"""``noctaya scaler --config FILE``: the aggregate scaler process.

Exit codes: 0 after a graceful stop (SIGTERM / SIGINT), 2 for an unusable configuration, token file
or certificate (the message names the field).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys

from noctaya.contract import scaler as scaler_contract
from noctaya.scaler import aggregate, credentials, tokens
from noctaya.serving import redaction


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="noctaya scaler",
        description="Sum the demand reports of several gateways and serve one KEDA ExternalScaler.",
    )
    parser.add_argument("--config", required=True, metavar="FILE", help="ScalerConfig YAML or JSON")
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level (default: %(default)s)",
    )
    return parser


async def _serve(config: scaler_contract.ScalerConfig) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    async with aggregate.AggregateScaler(config=config):
        await stop.wait()


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    redaction.install()
    try:
        config = scaler_contract.load_config(args.config)
    except scaler_contract.ConfigError as exc:
        print(f"noctaya scaler: {args.config}: {exc}", file=sys.stderr)
        return 2
    try:
        tokens.TokenFile(path=config.token_file).token()
    except tokens.TokenError as exc:
        print(f"noctaya scaler: tokenFile: {exc}", file=sys.stderr)
        return 2
    try:
        import uvloop

        uvloop.run(_serve(config))
    except credentials.CredentialsError as exc:
        print(f"noctaya scaler: tls: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"noctaya scaler: cannot listen: {exc}", file=sys.stderr)
        return 2
    return 0
