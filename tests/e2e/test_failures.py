"""``noctaya dev`` makes failures visible, as real processes.

Aspects: a second ``noctaya dev`` on a port already taken fails at once with the reason on the
terminal, exit 1, no endpoint announced, no replacement loop and no process left behind (the first
one keeps serving); an activation that times out and the request it failed are counted in the state
and the status line with their last reason; a ``--schedule`` window open now brings a replica up
with no request at all.
"""

from __future__ import annotations

import datetime
import os
import pathlib
import subprocess
import sys

import openai
import pytest

from tests.e2e.conftest import StartDev, engine_cmd

pytestmark = pytest.mark.e2e


def processes_mentioning(text: str) -> list[int]:
    found = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry.name))
    return found


async def test_a_taken_port_fails_at_once_with_the_reason_and_leaves_nothing(
    start_dev: StartDev, tmp_path: pathlib.Path
) -> None:
    first = await start_dev()
    run_dir = tmp_path / "second-run"
    second = subprocess.run(  # noqa: ASYNC221  (a bounded wait for a process that must end by itself)
        [
            sys.executable,
            "-m",
            "noctaya",
            "dev",
            "--listen",
            f"127.0.0.1:{first.port}",
            "--plain",
            "--run-dir",
            str(run_dir),
            "--backend-cmd",
            engine_cmd(),
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    out, err = second.stdout.decode(), second.stderr.decode()
    assert second.returncode == 1, out + err
    assert f"cannot listen on 127.0.0.1:{first.port}" in err and "address already in use" in err.lower()
    assert "OpenAI-compatible endpoint" not in out and "replacing it" not in out
    assert not processes_mentioning(str(run_dir))
    models = await first.client().models.list()  # the first one is untouched
    assert models.data


async def test_failed_activations_and_requests_are_counted_with_their_last_reason(
    start_dev: StartDev,
) -> None:
    dev = await start_dev("--activation-timeout", "1s", engine={"ready_delay": "1h"}, cooldown="30s")
    with pytest.raises(openai.APIStatusError) as failed:
        await dev.client().chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert failed.value.status_code == 504
    state = await dev.wait(
        lambda s: s["status"]["failed_activations"] >= 1 and s["status"]["failed_requests"] >= 1,
        within=15,
        what="the failures counted",
    )
    assert state["status"]["last_request_failure"] == "activation_timeout"
    assert state["status"]["last_activation_failure"].startswith("activation_timeout")
    await dev.wait(  # the plain status line is printed at most once a second
        lambda _: "failed: 1 request (last: activation_timeout), 1 activation" in dev.output(),
        within=5,
        what="the failures on the status line",
    )


async def test_a_schedule_open_now_brings_a_replica_up_with_no_request(start_dev: StartDev) -> None:
    """``--schedule`` with a window that opened an hour ago and closes in two: the local KEDA's cron
    trigger scales 0 -> 1 at its first poll, no request sent; the status line says so."""
    now = datetime.datetime.now(datetime.UTC)
    opened, closes = (now - datetime.timedelta(hours=1)).hour, (now + datetime.timedelta(hours=2)).hour
    dev = await start_dev(
        "--schedule", f"name=open-now; start=0 {opened} * * *; end=0 {closes} * * *", cooldown="1s"
    )
    state = await dev.wait(
        lambda s: s["status"]["replicas_ready"] == 1, within=20, what="a replica up by schedule"
    )
    assert state["keda"]["scheduled"] == 1 and state["keda"]["pushes"] == 0  # no demand pushed it
    assert state["status"]["next_warm_window"] == "open-now active (1)"
    assert state["status"]["demand"] == 0
    await dev.wait(
        lambda _: "schedule: open-now active (1)" in dev.output(), within=5, what="the status line"
    )
