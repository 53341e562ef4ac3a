"""The live fields of a running gateway's config file (``warmUntil``), applied without a restart.

Aspects: the config file is mounted the way the kubelet mounts a ConfigMap (``config.yaml`` a symlink
through ``..data`` to a timestamped directory) and rewritten the way it does (a new directory, an
atomic swap of ``..data``); a later ``warmUntil`` reaches the running gateway's hold (``/noctaya/
queue``) and counts ``applied``; an earlier one moves the config's hold to it and a removed one ends
it, without cutting short a hold ``POST /noctaya/warm`` asked for; an invalid file (a bad field, or
larger than the bounded reader takes) is logged once naming the problem, counted ``invalid`` and
ignored; a change of a field that is not live is logged once, counted ``unchanged_live`` and not
applied; the poll period is in the metrics; the command line's flags are laid over a reloaded file;
a ``noctaya gateway`` process takes a swapped file's ``warmUntil`` and still exits 0 on SIGTERM; a
FIFO swapped in at the config path is refused without a blocking open, a valid file after it is
applied, and SIGTERM still exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
import yaml

from noctaya.contract import documents
from noctaya.contract import gateway as gateway_contract
from noctaya.dev import fake_engine
from noctaya.gateway import liveconfig, testing
from noctaya.process import gateway as command

WITHIN = 30.0  # generous: a loaded 2-core machine


class ConfigMapVolume:
    """A directory laid out as the kubelet lays out a mounted ConfigMap, updated as it does."""

    def __init__(self, root: pathlib.Path) -> None:
        self.root = root
        self.version = 0
        self.path = root / "config.yaml"

    def write(
        self, document: dict[str, Any] | None = None, *, raw: bytes | None = None, fifo: bool = False
    ) -> None:
        """Swap in a new version of the file: ``document`` as YAML, ``raw`` bytes, or (``fifo``) a
        named pipe that nobody writes to."""
        self.version += 1
        data = self.root / f"..2026_12_01_18_00_00.{self.version}"
        data.mkdir()
        if fifo:
            os.mkfifo(data / "config.yaml")
        else:
            body = raw if raw is not None else yaml.safe_dump(document).encode()
            (data / "config.yaml").write_bytes(body)
        staged = self.root / "..data_tmp"
        staged.symlink_to(data.name)
        previous = os.readlink(self.root / "..data") if (self.root / "..data").is_symlink() else None
        os.replace(staged, self.root / "..data")  # the atomic swap
        if not self.path.is_symlink():
            self.path.symlink_to("..data/config.yaml")
        if previous is not None:
            old = self.root / previous
            (old / "config.yaml").unlink()
            old.rmdir()


def at(seconds_ahead: int) -> str:
    """A whole-second RFC 3339 time ``seconds_ahead`` from now (what ``/noctaya/queue`` shows)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(math.ceil(time.time()) + seconds_ahead))


async def queue(http: aiohttp.ClientSession, url: str) -> dict[str, Any]:
    async with http.get(url + "/noctaya/queue") as response:
        document: dict[str, Any] = await response.json()
        return document


async def metric(http: aiohttp.ClientSession, url: str, sample: str) -> float:
    async with http.get(url + "/metrics") as response:
        text = await response.text()
    found = re.search(rf"^{re.escape(sample)} (\S+)$", text, re.MULTILINE)
    assert found is not None, sample
    return float(found.group(1))


def reloads(outcome: str) -> str:
    return f'noctaya_gateway_config_reloads_total{{outcome="{outcome}"}}'


async def eventually(check: Callable[[], Awaitable[bool]], *, message: str) -> None:
    """Poll ``check`` (through the gateway's public endpoints) until it holds, at most ``WITHIN``."""
    try:
        async with asyncio.timeout(WITHIN):
            while not await check():  # noqa: ASYNC110  (seen through HTTP: no event to wait on)
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out after {WITHIN}s waiting for {message}") from None


Start = Callable[..., Awaitable[testing.RunningGateway]]
Rewrite = Callable[..., None]
"""``rewrite(**fields)``: the kubelet's update of the mounted file to the base config and ``fields``."""


@pytest.fixture
def volume(tmp_path: pathlib.Path) -> ConfigMapVolume:
    return ConfigMapVolume(tmp_path)


@pytest.fixture
def start(gateways: testing.GatewayStarter, rewrite: Rewrite, volume: ConfigMapVolume) -> Start:
    """Write the volume's first config (the engine as backend, a 50 ms poll) and start a gateway
    read from it, watching it."""

    async def run(**fields: Any) -> testing.RunningGateway:
        rewrite(**fields)
        return await gateways.start_from(source=liveconfig.ConfigSource(path=volume.path))

    return run


@pytest.fixture
def rewrite(engine: fake_engine.RunningEngine, volume: ConfigMapVolume) -> Rewrite:
    return lambda **fields: volume.write(base(engine) | fields)


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """The records of ``noctaya.gateway.liveconfig``, from INFO."""
    caplog.set_level(logging.INFO, logger=liveconfig.logger.name)
    return caplog


async def counted(http: aiohttp.ClientSession, url: str, outcome: str, count: int) -> bool:
    return await metric(http, url, reloads(outcome)) == count


def base(engine: fake_engine.RunningEngine) -> dict[str, Any]:
    return {
        "backendUrl": engine.url,
        "listen": "127.0.0.1:0",
        **testing.FAST_TIMINGS,
        "configReloadInterval": "50ms",
        "maxWarmDuration": "1h",
        "warmAccess": "open",  # no keys: the warm endpoint's default would refuse every hold
    }


async def test_a_changed_warm_until_reaches_the_running_gateway_and_never_cuts_a_posted_hold(
    rewrite: Rewrite, start: Start, http: aiohttp.ClientSession
) -> None:
    gateway = await start()
    assert (await queue(http, gateway.url))["warmUntil"] is None
    assert await metric(http, gateway.url, "noctaya_gateway_config_reload_interval_seconds") == 0.05

    later = at(600)
    rewrite(warmUntil=later)

    async def applied(count: int, until: str | None) -> bool:
        state = await queue(http, gateway.url)
        return await metric(http, gateway.url, reloads("applied")) == count and state["warmUntil"] == until

    await eventually(lambda: applied(1, later), message="the later warmUntil applied")
    state = await queue(http, gateway.url)
    assert state["demand"] == 1  # held up with no request
    assert await metric(http, gateway.url, "noctaya_gateway_warm_requests_total") == 1
    assert await metric(http, gateway.url, "noctaya_gateway_warm_hold") == 1

    earlier = at(300)  # moved earlier: the config's hold follows
    rewrite(warmUntil=earlier)
    await eventually(lambda: applied(2, earlier), message="the earlier warmUntil applied")

    async with http.post(gateway.url + "/noctaya/warm", json={"duration": "20m"}) as response:
        assert response.status == 202
        posted = (await response.json())["warmUntil"]
    assert (await queue(http, gateway.url))["warmUntil"] == posted

    latest = at(1800)
    rewrite(warmUntil=latest)
    await eventually(lambda: applied(3, latest), message="a warmUntil past the POSTed hold")

    rewrite()  # the annotation removed: the POSTed hold stays
    await eventually(lambda: applied(4, posted), message="the config's hold ended, the POSTed one held")
    state = await queue(http, gateway.url)
    assert state["demand"] == 1
    assert await metric(http, gateway.url, reloads("invalid")) == 0
    assert await metric(http, gateway.url, reloads("unchanged_live")) == 0


async def test_a_removed_or_past_warm_until_ends_the_hold(
    rewrite: Rewrite, start: Start, http: aiohttp.ClientSession
) -> None:
    until = at(600)
    gateway = await start(warmUntil=until, retryGrace="0s")
    state = await queue(http, gateway.url)
    assert state["warmUntil"] == until and state["demand"] == 1
    rewrite(warmUntil="2020-01-01T00:00:00Z", retryGrace="0s")

    async def ended() -> bool:
        state = await queue(http, gateway.url)
        return state["warmUntil"] is None and state["demand"] == 0

    await eventually(ended, message="the hold ended by a past warmUntil")
    assert await metric(http, gateway.url, reloads("applied")) == 1


async def test_an_invalid_file_is_logged_once_and_the_running_config_stays(
    rewrite: Rewrite,
    volume: ConfigMapVolume,
    start: Start,
    http: aiohttp.ClientSession,
    logs: pytest.LogCaptureFixture,
) -> None:
    until = at(600)
    gateway = await start(warmUntil=until)
    rewrite(warmUntil=at(900), maxQueue=0)

    await eventually(lambda: counted(http, gateway.url, "invalid", 1), message="the invalid file counted")
    assert (await queue(http, gateway.url))["warmUntil"] == until  # nothing of it applied
    volume.write(raw=b"warmUntil: x\n" + b"#" * documents.MAX_CONFIG_BYTES)  # past the bounded reader
    await eventually(lambda: counted(http, gateway.url, "invalid", 2), message="the oversized file counted")
    fixed = at(1200)
    rewrite(warmUntil=fixed)  # a valid file again is applied
    await eventually(lambda: counted(http, gateway.url, "applied", 1), message="the fixed file applied")
    state = await queue(http, gateway.url)
    assert state["warmUntil"] == fixed and state["maxQueue"] == 100
    warnings = [
        r.getMessage()
        for r in logs.records
        if r.name == liveconfig.logger.name and r.levelno >= logging.WARNING
    ]
    assert len(warnings) == 2, warnings  # once per change, however many polls saw it
    assert "the running config stays" in warnings[0] and "maxQueue: " in warnings[0]
    assert f"larger than {documents.MAX_CONFIG_BYTES} bytes" in warnings[1]


async def test_a_change_of_a_field_that_is_not_live_waits_for_the_rollout(
    rewrite: Rewrite,
    start: Start,
    http: aiohttp.ClientSession,
    logs: pytest.LogCaptureFixture,
) -> None:
    gateway = await start()
    rewrite(maxQueue=7)

    await eventually(
        lambda: counted(http, gateway.url, "unchanged_live", 1), message="the non-live change counted"
    )
    assert (await queue(http, gateway.url))["maxQueue"] == 100  # not applied: it comes with the rollout
    until = at(600)
    rewrite(maxQueue=7, warmUntil=until)  # still pending, and a live change
    await eventually(
        lambda: counted(http, gateway.url, "applied", 1), message="the live change beside it applied"
    )
    state = await queue(http, gateway.url)
    assert state["warmUntil"] == until and state["maxQueue"] == 100
    waiting = [r.getMessage() for r in logs.records if "not live" in r.getMessage()]
    assert waiting == [
        "config file changed in maxQueue: not live, applied when the gateways roll out (restart)"
    ]


def test_the_command_lays_its_flags_over_a_reloaded_file(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("backendUrl: http://b:8000\nmaxQueue: 5\n")
    args = command.build_parser().parse_args(["--config", str(path), "--warm-until", "2026-12-01T20:00:00Z"])
    source = command.config_source(args)
    assert source is not None and source.path == path
    reread = source.build({"backendUrl": "http://b:8000", "warmUntil": "2030-01-01T00:00:00Z"})
    assert reread.warm_until == "2026-12-01T20:00:00Z"  # the flag still wins over the file
    assert command.config_source(command.build_parser().parse_args([])) is None
    with pytest.raises(gateway_contract.ConfigError, match=r"configReloadInterval: "):
        gateway_contract.build_config({"backendUrl": "http://b", "configReloadInterval": "10ms"})
    with pytest.raises(gateway_contract.ConfigError, match=r"configReloadInterval: "):
        gateway_contract.build_config({"backendUrl": "http://b", "configReloadInterval": "10m"})
    assert gateway_contract.build_config({"backendUrl": "http://b"}).config_reload_interval == 5.0


async def applied_once(http: aiohttp.ClientSession, url: str, until: str) -> bool:
    """The gateway holds warm until ``until``, from the one change it applied."""
    state = await queue(http, url)
    return state["warmUntil"] == until and await metric(http, url, reloads("applied")) == 1


@contextlib.asynccontextmanager
async def gateway_process(volume: ConfigMapVolume) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """``noctaya gateway --config`` on ``volume``, once listening: the process and its URL."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "noctaya",
        "gateway",
        "--config",
        str(volume.path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        assert process.stdout is not None
        async with asyncio.timeout(WITHIN):
            while not (
                found := re.search(rb"gateway listening on (http://\S+),", await process.stdout.readline())
            ):
                assert not process.stdout.at_eof(), "the gateway ended before listening"
        yield process, found.group(1).decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


@pytest.mark.e2e
@pytest.mark.timeout(90)
async def test_a_gateway_process_takes_a_changed_warm_until_and_still_stops_cleanly(
    rewrite: Rewrite, volume: ConfigMapVolume, http: aiohttp.ClientSession
) -> None:
    """``noctaya gateway --config`` on a kubelet-style mount: the swapped file's warmUntil reaches
    the process's hold, and SIGTERM still ends it with exit 0 (the poll stops with the other loops)."""
    rewrite()
    async with gateway_process(volume) as (process, url):
        until = at(600)
        rewrite(warmUntil=until)
        await eventually(
            lambda: applied_once(http, url, until),
            message="the process applying the swapped file's warmUntil",
        )
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), WITHIN) == 0


@pytest.mark.e2e
@pytest.mark.timeout(90)
async def test_a_fifo_at_the_config_path_blocks_neither_the_poll_nor_the_shutdown(
    rewrite: Rewrite, volume: ConfigMapVolume, http: aiohttp.ClientSession
) -> None:
    """A named pipe swapped in at the config path (nobody writing to it) is refused as not a regular
    file, never opened for a blocking read: the poll goes on and applies the valid file swapped in
    after it, and SIGTERM still ends the process with exit 0 (no reader thread stuck in an open)."""
    rewrite()
    async with gateway_process(volume) as (process, url):
        volume.write(fifo=True)
        await eventually(
            lambda: counted(http, url, "invalid", 1), message="the FIFO counted as an invalid file"
        )
        until = at(600)
        rewrite(warmUntil=until)
        await eventually(
            lambda: applied_once(http, url, until), message="the valid file after the FIFO applied"
        )
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), WITHIN) == 0
        assert process.stdout is not None
        output = (await process.stdout.read()).decode()
    assert "not a regular file" in output and "Traceback" not in output


async def test_a_warm_until_beyond_the_ends_of_time_is_an_invalid_file(
    rewrite: Rewrite, start: Start, http: aiohttp.ClientSession, logs: pytest.LogCaptureFixture
) -> None:
    until = at(600)
    gateway = await start(warmUntil=until)
    rewrite(warmUntil="9999-12-31T23:59:59-01:00")
    await eventually(lambda: counted(http, gateway.url, "invalid", 1), message="the extreme time counted")
    rewrite(warmUntil="0001-01-01T00:00:00+01:00")
    await eventually(lambda: counted(http, gateway.url, "invalid", 2), message="the other end counted")
    assert (await queue(http, gateway.url))["warmUntil"] == until
    messages = [r.getMessage() for r in logs.records if r.name == liveconfig.logger.name]
    assert sum("warmUntil: " in m and "years 1 to 9999" in m for m in messages) == 2, messages
    assert not any(r.exc_info for r in logs.records)
