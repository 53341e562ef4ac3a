"""Harness for the end-to-end tests: ``noctaya dev`` as a real process, watched through its state file.

``start_dev(...)`` runs ``python -m noctaya dev`` with short timings, waits until its gateways answer,
and returns a :class:`Dev` handle (OpenAI clients, the live state, signals). Every process it started
is stopped at teardown and checked to be gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import openai
import pytest

PY = sys.executable


def engine_cmd(
    *, ready_delay: str = "1s", tokens: int = 8, token_delay: str = "20ms", failure: str = "none"
) -> str:
    extra = "" if failure == "none" else f"--failure {failure}"
    return (
        f"{PY} -m noctaya.dev.fake_engine --port {{port}} --ready-delay {ready_delay} "
        f"--tokens {tokens} --token-delay {token_delay} {extra}"
    ).strip()


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie is not alive
        status = pathlib.Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
        return status != "Z"
    return True


async def left_behind(pids: set[int], *, within: float = 10.0) -> list[int]:
    """The pids still alive after waiting up to ``within`` s for all of them to be gone."""
    deadline = time.monotonic() + within
    while (left := sorted(pid for pid in pids if alive(pid))) and time.monotonic() < deadline:  # noqa: ASYNC110 - other processes
        await asyncio.sleep(0.05)
    return left


class Dev:
    def __init__(
        self,
        *,
        proc: subprocess.Popen[bytes],
        port: int,
        run_dir: pathlib.Path,
        state_file: pathlib.Path,
        log: pathlib.Path,
    ) -> None:
        self.proc = proc
        self.port = port
        self.run_dir = run_dir
        self.state_file = state_file
        self.log = log
        self.url = f"http://127.0.0.1:{port}/v1"
        self.pids: set[int] = {proc.pid}
        self.killed = False

    alive = staticmethod(alive)
    left_behind = staticmethod(left_behind)

    def client(self, **kwargs: Any) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(
            base_url=self.url, api_key="dev", max_retries=0, timeout=kwargs.pop("timeout", 30.0), **kwargs
        )

    def state(self) -> dict[str, Any]:
        for _ in range(50):
            try:
                state: dict[str, Any] = json.loads(self.state_file.read_text())
            except (OSError, ValueError):
                time.sleep(0.01)
                continue
            self.pids.update(p["pid"] for p in state["replicas"] + state["gateways"] if p.get("pid"))
            if state.get("scalerPid"):
                self.pids.add(state["scalerPid"])
            return state
        raise AssertionError(f"no state file; output:\n{self.output()}")

    def output(self) -> str:
        try:
            return self.log.read_text()
        except OSError:
            return ""

    async def wait(
        self, predicate: Callable[[dict[str, Any]], bool], *, within: float, what: str = "condition"
    ) -> dict[str, Any]:
        deadline = time.monotonic() + within
        while True:
            assert self.proc.poll() is None, f"noctaya dev exited:\n{self.output()}"
            state = self.state()
            if predicate(state):
                return state
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out waiting for {what}; state: {json.dumps(state['status'])}\n"
                    f"{self.output()[-3000:]}"
                )
            await asyncio.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL the runner (its exit code then is -9, which teardown accepts)."""
        with contextlib.suppress(Exception):
            self.state()
        self.killed = True
        self.proc.kill()
        self.proc.wait()

    async def stop(self, signum: int = signal.SIGTERM, *, within: float = 30.0) -> int:
        if self.proc.poll() is None:
            with contextlib.suppress(Exception):
                self.state()  # remember every pid before it goes
            self.proc.send_signal(signum)
        deadline = time.monotonic() + within
        while self.proc.poll() is None and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.05)
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"noctaya dev did not stop within {within}s:\n{self.output()}")
        return int(self.proc.returncode)


StartDev = Callable[..., Awaitable[Dev]]


@pytest.fixture
async def start_dev(tmp_path: pathlib.Path, reserve_port: Callable[[], int]) -> AsyncIterator[StartDev]:
    started: list[Dev] = []

    async def start(
        *args: str,
        backend: str | None = None,
        engine: dict[str, Any] | None = None,
        gateways: int = 1,
        cooldown: str = "1s",
        polling: str = "200ms",
        run_dir: bool = True,
    ) -> Dev:
        """``engine``: keyword arguments of :func:`engine_cmd` for the built-in fake engine."""
        port = reserve_port()  # held until teardown: the runner's front binds it, nobody else can
        directory = tmp_path / f"run{len(started)}"
        state_file = tmp_path / f"state{len(started)}.json"
        log = tmp_path / f"dev{len(started)}.log"
        argv = [
            PY,
            "-m",
            "noctaya",
            "dev",
            "--listen",
            f"127.0.0.1:{port}",
            "--plain",
            "--state-file",
            str(state_file),
            *(["--run-dir", str(directory)] if run_dir else []),
            "--backend-cmd",
            backend or engine_cmd(**(engine or {})),
            "--gateways",
            str(gateways),
            "--cooldown",
            cooldown,
            "--polling-interval",
            polling,
            "--replica-drain-timeout",
            "10s",
            *args,
        ]
        with log.open("wb") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT)  # noqa: ASYNC220
        dev = Dev(proc=proc, port=port, run_dir=directory, state_file=state_file, log=log)
        started.append(dev)
        deadline = time.monotonic() + 30
        while not state_file.exists():
            assert proc.poll() is None, f"noctaya dev exited:\n{dev.output()}"
            assert time.monotonic() < deadline, dev.output()
            await asyncio.sleep(0.05)
        await dev.wait(
            lambda s: s["status"]["gateways_up"] == gateways and s["keda"]["streamConnected"],
            within=20,
            what="gateways up and the local KEDA stream connected",
        )
        return dev

    yield start
    for dev in started:
        code = await dev.stop()
        assert code == 0 or dev.killed, dev.output()
        left = await left_behind(dev.pids)
        assert not left, f"processes left behind: {left}\n{dev.output()}"
