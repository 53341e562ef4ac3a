"""``noctaya operator``: parse settings, connect, run one replica until SIGTERM/SIGINT.

Exit codes: 0 after a graceful stop (the Lease is released so a standby takes over at once), 2 for a
usage error (the message names the flag), 1 when the API server cannot be reached at startup.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import sys
from collections.abc import Sequence
from typing import Final

from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio import config as k8s_config

from noctaya.operator import settings as settings_

KOPF_LOGGER: Final = "kopf"


class _JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(config: settings_.OperatorSettings) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if config.log_format == "json":
        handler.setFormatter(_JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(config.log_level)
    # kopf says "Handler ... succeeded" per watch event at INFO: below the operator's own outcome lines
    # (one per changed reconcile outcome) unless the operator itself logs at DEBUG
    kopf_level = logging.DEBUG if root.getEffectiveLevel() <= logging.DEBUG else logging.WARNING
    logging.getLogger(KOPF_LOGGER).setLevel(kopf_level)


async def make_api(config: settings_.OperatorSettings) -> k8s_client.ApiClient:
    """A ``kubernetes_asyncio`` client: explicit server, else in-cluster, else kubeconfig."""
    configuration = k8s_client.Configuration()
    if config.server:
        configuration.host = config.server.rstrip("/")
    else:
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
        except k8s_config.ConfigException:
            await k8s_config.load_kube_config(
                config_file=config.kubeconfig, client_configuration=configuration
            )
    return k8s_client.ApiClient(configuration)


async def serve(config: settings_.OperatorSettings) -> int:
    import kopf

    from noctaya.constructs import synthesis
    from noctaya.operator import running

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()

    def install_signals() -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)

    install_signals()
    login = kopf.ConnectionInfo(server=config.server) if config.server else None
    async with await make_api(config) as api:
        operator = running.Operator(
            config=config,
            api=api,
            render=synthesis.render_llmservice,
            login=login,
            install_signals=install_signals,
        )
        await operator.run(stop=stop)
    return 0


def main(argv: Sequence[str]) -> int:
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    config = settings_.load(argv)
    if config.kubeconfig:
        os.environ["KUBECONFIG"] = config.kubeconfig  # kopf's own login reads it too
    configure_logging(config)
    try:
        import uvloop

        return uvloop.run(serve(config))
    except k8s_config.ConfigException as e:
        print(f"noctaya operator: no Kubernetes configuration: {e}", file=sys.stderr)
        return 1
