"""``noctaya operator``: flags, usage errors, and the health/metrics endpoints.

Aspects: ``--help`` lists the flags; a bad flag value exits 2 naming it; the health app answers
``/healthz`` (200 while healthy, 503 otherwise, with the leader flag) and ``/metrics`` in the Prometheus
text format.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from noctaya.operator import command, metrics, probing, settings


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        command.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for flag in (
        "--namespace",
        "--gateway-image",
        "--default-gateway-replicas",
        "--lease-name",
        "--lease-duration",
        "--log-format",
        "--health-listen",
    ):
        assert flag in out


def test_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        command.main(["--default-gateway-replicas", "0"])
    assert exc.value.code == 2
    assert "--default-gateway-replicas" in capsys.readouterr().err


@pytest.fixture
async def health_server() -> AsyncIterator[tuple[str, dict[str, Any], metrics.Metrics]]:
    state: dict[str, Any] = {"healthy": True, "leader": False}
    registry = metrics.Metrics()
    runner = web.AppRunner(probing.make_app(state=lambda: dict(state), registry=registry))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", state, registry
    finally:
        await runner.cleanup()


async def test_health_and_metrics(health_server: tuple[str, dict[str, Any], metrics.Metrics]) -> None:
    url, state, registry = health_server
    registry.observe_activation(scheduled=1.0, started=5.0, ready=42.0)
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{url}/healthz") as rsp:
            assert rsp.status == 200 and (await rsp.json())["leader"] is False
        state["healthy"] = False
        async with session.get(f"{url}/healthz") as rsp:
            assert rsp.status == 503
        async with session.get(f"{url}/metrics") as rsp:
            text = await rsp.text()
    assert rsp.headers["Content-Type"].startswith("text/plain")
    assert 'noctaya_activation_phase_seconds_count{phase="ready"} 1.0' in text
    assert "noctaya_workqueue_depth" in text and "noctaya_leader" in text


@pytest.mark.parametrize(("level", "kopf_level"), [("INFO", logging.WARNING), ("DEBUG", logging.DEBUG)])
def test_kopf_chatter_stays_below_the_operators_info_lines(level: str, kopf_level: int) -> None:
    root = logging.getLogger()
    saved = root.handlers[:], root.level, logging.getLogger("kopf").level
    try:
        command.configure_logging(settings.OperatorSettings(gateway_image="x", log_level=level))
        assert logging.getLogger("kopf.objects").getEffectiveLevel() == kopf_level
        assert logging.getLogger("noctaya.operator.reconciliation").isEnabledFor(logging.INFO)
    finally:
        root.handlers[:], _, _ = saved
        root.setLevel(saved[1])
        logging.getLogger("kopf").setLevel(saved[2])
