"""The gateway-side reporter against a real aggregate scaler in-process.

Aspects: the first report registers the member at once; an idle -> active transition is reported
within milliseconds (not at the next heartbeat) and so is the way back; level changes in between
are coalesced (at most one report per ``min_gap``) and heartbeats repeat the level; every report
has a fresh increasing sequence; a down scaler is retried with a bounded backoff and the member
reappears when it comes back (heartbeats rebuild a restarted scaler); a long outage (thousands of
failures in a row) keeps the reporter retrying at the capped backoff, and the failures in a row,
the outcomes and the retry bound are in its metrics; a bad token is retried, not fatal; withdraw
removes the member; member ids are unique and well-formed.
"""

from __future__ import annotations

import asyncio
import contextlib
import pathlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import prometheus_client
import pytest

from noctaya.contract import demand, fields
from noctaya.contract import scaler as scaler_contract
from noctaya.scaler import aggregate, intake, metrics, reporter

TOKEN = "s3cret-token-0123456789abcdef"
SERVICE = fields.ServiceRef(name="qwen", namespace="ai")


@pytest.fixture
def token_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "token"
    path.write_text(TOKEN)
    return path


def scaler_config(token_file: pathlib.Path, port: int) -> scaler_contract.ScalerConfig:
    return scaler_contract.build_config(
        {
            "service": {"name": "qwen", "namespace": "ai"},
            "grpcListen": "127.0.0.1:0",
            "reportListen": f"127.0.0.1:{port}",
            "tokenFile": str(token_file),
        }
    )


def reporter_to(
    port: int, token_file: pathlib.Path, source: demand.DemandSignal, **options: Any
) -> reporter.Reporter:
    """A reporter for qwen/ai that sends to an aggregate scaler on ``port``."""
    return reporter.Reporter(
        source=source, url=f"http://127.0.0.1:{port}", token_file=str(token_file), service=SERVICE, **options
    )


async def until(predicate: Callable[[], bool], within: float = 3.0) -> None:
    async with asyncio.timeout(within):
        while not predicate():  # noqa: ASYNC110 - polling a plain predicate is the point
            await asyncio.sleep(0.005)


@contextlib.asynccontextmanager
async def running(rep: reporter.Reporter) -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        task = asyncio.create_task(rep.run(session=session))
        try:
            yield session
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@pytest.mark.looptime  # "at once" and the coalescing gap are loop time: exact under any load
async def test_transitions_at_once_level_changes_coalesced_then_withdraw(
    token_file: pathlib.Path,
) -> None:
    signal = demand.DemandSignal()
    async with aggregate.AggregateScaler(config=scaler_config(token_file, 0)) as scaler:
        port = scaler.report_port  # bound by the scaler itself, read back
        rep = reporter_to(port, token_file, signal, interval=30.0, min_gap=0.3)
        async with running(rep) as session:
            await until(lambda: len(scaler.membership) == 1)
            signal.set(3)
            await until(lambda: scaler.membership.demand() == 3, within=0.2)  # not waiting 30 s
            sent = rep.sent
            started = asyncio.get_running_loop().time()
            for value in range(4, 60):  # a burst of level changes while active: coalesced
                signal.set(value)
                await asyncio.sleep(0.01)
            await until(lambda: scaler.membership.demand() == 59, within=1.0)
            elapsed = asyncio.get_running_loop().time() - started
            assert rep.sent - sent <= elapsed / 0.3 + 2
            signal.set(0)
            await until(lambda: scaler.membership.demand() == 0, within=0.5)
            sequences = [m.sequence for m in scaler.membership.members()]
            assert sequences == [rep.sequence] and rep.sequence >= 3
            assert await rep.withdraw(session=session)
            assert len(scaler.membership) == 0


@pytest.mark.looptime  # intervals and retry backoffs are loop time
async def test_heartbeat_interval_and_rebuild_after_scaler_restart(
    token_file: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()  # held while the scaler is down, so the restart binds the same port
    signal = demand.DemandSignal(initial=2)
    rep = reporter_to(port, token_file, signal, interval=0.2)
    async with running(rep):
        await until(lambda: rep.failures >= 2)  # scaler not there yet: retried, bounded backoff
        async with aggregate.AggregateScaler(config=scaler_config(token_file, port)) as scaler:
            await until(lambda: scaler.membership.demand() == 2)
            signal.set(4)
            signal.set(7)  # level changes while active reach the scaler within min_gap
            await until(lambda: scaler.membership.demand() == 7, within=1.0)
        await until(lambda: rep.failures >= 1)
        async with aggregate.AggregateScaler(config=scaler_config(token_file, port)) as scaler:
            await until(lambda: scaler.membership.demand() == 7)  # memory-only scaler rebuilt
            await until(lambda: rep.failures == 0)  # reset once the reporter reads the answer


async def test_a_long_outage_keeps_retrying_at_the_cap(
    token_file: pathlib.Path, reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()  # refused until the scaler binds it
    registry = prometheus_client.CollectorRegistry()
    rep = reporter_to(
        port,
        token_file,
        demand.DemandSignal(initial=1),
        interval=0.05,
        metrics=metrics.ReporterMetrics(registry=registry),
    )
    rep.failures = 5000  # as after hours of a scaler that cannot be reached
    async with running(rep):
        await until(lambda: rep.failures >= 5003)
        assert registry.get_sample_value("noctaya_scaler_reporter_failures") == rep.failures
        async with aggregate.AggregateScaler(config=scaler_config(token_file, port)) as scaler:
            await until(lambda: scaler.membership.demand() == 1)
            await until(lambda: rep.failures == 0)  # reset once the reporter reads the answer
    assert registry.get_sample_value("noctaya_scaler_reporter_failures") == 0
    failed = registry.get_sample_value("noctaya_gateway_demand_reports_total", {"result": "failed"})
    assert failed is not None and failed >= 3
    assert registry.get_sample_value("noctaya_scaler_reporter_backoff_max_seconds") == 0.05


async def test_bad_token_is_retried_until_rotation(token_file: pathlib.Path, tmp_path: pathlib.Path) -> None:
    gateway_token = tmp_path / "gateway-token"
    gateway_token.write_text("not-the-right-token-0123456789")
    signal = demand.DemandSignal(initial=1)
    async with aggregate.AggregateScaler(config=scaler_config(token_file, 0)) as scaler:
        rep = reporter_to(scaler.report_port, gateway_token, signal, interval=0.2)
        async with running(rep):
            await until(lambda: rep.failures >= 2)
            assert len(scaler.membership) == 0
            gateway_token.write_text(TOKEN)
            await until(lambda: scaler.membership.demand() == 1)


def test_member_ids_are_unique_and_valid() -> None:
    ids = {reporter.new_member_id() for _ in range(100)}
    assert len(ids) == 100
    assert all(intake.MEMBER_PATTERN.match(i) for i in ids)
