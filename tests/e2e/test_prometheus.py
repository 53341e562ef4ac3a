"""A real Prometheus scrapes ``noctaya dev --gateways 2``: every metric the alerts and the dashboard use
is there.

Aspects: Prometheus (Debian's) scrapes both gateways, the aggregate scaler's ``/metrics`` and a backend
replica (the fake engine, which speaks vLLM's metric names, and which the engine signal reads too);
every target is up; every metric name an alert rule or a dashboard panel uses is among the series it
stored; every alert expression evaluates without error against that data.

Prometheus cannot listen on port 0 and report the port, so it listens on a port the test reserves
(``reserve_port``): held from before Prometheus starts until the test ends, taken by nobody else.
"""

from __future__ import annotations

import asyncio
import json
import pathlib
import re
import shutil
import subprocess
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
import yaml

from tests.e2e.conftest import StartDev

pytestmark = pytest.mark.e2e
ROOT = pathlib.Path(__file__).resolve().parents[2]
OBSERVABILITY = ROOT / "dist" / "examples" / "observability" / "monitoring.yaml"
DASHBOARD = ROOT / "examples" / "observability" / "dashboard.json"
METRIC = re.compile(r"\b(?:noctaya_[a-z0-9_]+|vllm:[a-z0-9_:]+)")
TARGET_LABELS = {"namespace": "default", "serving_noctaya_io_llmservice": "dev"}


def rule_expressions() -> dict[str, str]:
    rule = next(d for d in yaml.safe_load_all(OBSERVABILITY.read_text()) if d["kind"] == "PrometheusRule")
    return {r["alert"]: r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]}


def dashboard_expressions() -> list[str]:
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("expr"), str):
                found.append(node["expr"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads(DASHBOARD.read_text()))
    return found


class Prometheus:
    def __init__(self, proc: subprocess.Popen[bytes], url: str, log: pathlib.Path) -> None:
        self.proc, self.url, self.log = proc, url, log

    async def get(self, session: aiohttp.ClientSession, path: str, **params: str) -> Any:
        async with session.get(f"{self.url}{path}", params=params) as response:
            body = await response.json()
            assert response.status == 200 and body["status"] == "success", body
            return body["data"]


async def _start(binary: str, config: pathlib.Path, workdir: pathlib.Path, *, port: int) -> Prometheus:
    """Prometheus on ``port``, a port reserved for the test (Go's listeners set ``SO_REUSEADDR``, so
    Prometheus listens on the reservation and nobody else can take the port meanwhile)."""
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(  # noqa: ASYNC220
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--web.enable-lifecycle",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession() as session:
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                async with session.get(f"{url}/-/ready") as response:
                    if response.status == 200:
                        return Prometheus(proc, url, log)
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        raise AssertionError(f"Prometheus did not become ready within 60s:\n{log.read_text()[-3000:]}")
    raise AssertionError(f"Prometheus exited ({proc.returncode}):\n{log.read_text()[-3000:]}")


@pytest.fixture
async def prometheus_binary() -> AsyncIterator[str]:
    path = shutil.which("prometheus")
    assert path, "prometheus is missing: run `bash scripts/prometheus.sh` (Debian package prometheus)"
    yield path


@pytest.mark.timeout(180)
async def test_prometheus_scrapes_every_metric_the_alerts_and_dashboard_use(
    start_dev: StartDev,
    prometheus_binary: str,
    tmp_path: pathlib.Path,
    reserve_port: Callable[[], int],
) -> None:
    # the engine signal on, so the aggregate scaler reads the replica and exports noctaya_engine_*
    dev = await start_dev("--min", "1", "--engine-queue-target", "50", gateways=2)
    state = await dev.wait(
        lambda s: any(r["phase"] == "ready" for r in s["replicas"]) and s["scalerReportPort"],
        within=60,
        what="a ready backend replica and the aggregate scaler",
    )
    backend = next(r for r in state["replicas"] if r["phase"] == "ready")
    jobs = {
        "gateway": [f"127.0.0.1:{g['port']}" for g in state["gateways"]],
        "scaler": [f"127.0.0.1:{state['scalerReportPort']}"],
        "backend": [f"127.0.0.1:{backend['port']}"],
    }
    config = tmp_path / "prometheus.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
                "scrape_configs": [
                    {"job_name": job, "static_configs": [{"targets": targets, "labels": TARGET_LABELS}]}
                    for job, targets in jobs.items()
                ],
            }
        )
    )
    prometheus = await _start(prometheus_binary, config, tmp_path, port=reserve_port())
    try:
        async with aiohttp.ClientSession() as session:
            # one request through the gateways, so the request counters and histograms have samples
            async with session.post(
                f"{dev.url}/chat/completions",
                json={"model": "dev", "messages": [{"role": "user", "content": "hi"}]},
            ) as response:
                assert response.status == 200, await response.text()
            wanted = {
                m for e in [*rule_expressions().values(), *dashboard_expressions()] for m in METRIC.findall(e)
            }
            assert len(wanted) >= 10
            deadline = time.monotonic() + 60
            while True:
                targets = (await prometheus.get(session, "/api/v1/targets"))["activeTargets"]
                names = set(await prometheus.get(session, "/api/v1/label/__name__/values"))
                up = [t for t in targets if t["health"] == "up"]
                if len(up) == sum(map(len, jobs.values())) and wanted <= names:
                    break
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"targets: {[(t['scrapeUrl'], t['health'], t.get('lastError')) for t in targets]}; "
                        f"metrics used but never scraped: {sorted(wanted - names)}"
                    )
                await asyncio.sleep(0.5)
            for alert, expr in rule_expressions().items():
                result = await prometheus.get(session, "/api/v1/query", query=expr)
                assert result["resultType"] == "vector", (alert, result)
    finally:
        prometheus.proc.terminate()
        try:
            prometheus.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            prometheus.proc.kill()
            prometheus.proc.wait()
