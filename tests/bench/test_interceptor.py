"""``bench.interceptor.paused``: the control plane's processes stopped for a block, then going on.

Aspects: every process it finds is stopped (state ``T``) inside the block and running after it, an
exception in the block included; a process that is gone before it is stopped is passed over.
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import time

import pytest

from bench import interceptor

ROOT = pathlib.Path(__file__).resolve().parents[2]


def state_of(pid: int) -> str:
    stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    return stat.rpartition(")")[2].split()[0]


def running(pid: int) -> bool:
    """The process runs again (SIGCONT wakes it at once; allowed a moment on a loaded machine)."""
    deadline = time.monotonic() + 5
    while state_of(pid) in "Tt" and time.monotonic() < deadline:
        time.sleep(0.005)
    return state_of(pid) not in "Tt"


def test_the_control_plane_is_stopped_inside_the_block_and_goes_on_after(
    monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    children = [
        subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.01)"])
        for _ in range(2)
    ]
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    try:
        found = [(child.pid, f"plane-{n}") for n, child in enumerate(children)] + [(gone.pid, "gone")]
        monkeypatch.setattr(interceptor, "control_plane_processes", lambda state: found)
        with interceptor.paused(tmp_path) as names:
            assert names == ["plane-0", "plane-1"]
            assert [state_of(child.pid) for child in children] == ["T", "T"]
        assert all(running(child.pid) for child in children)
        with pytest.raises(RuntimeError), interceptor.paused(tmp_path):
            assert state_of(children[0].pid) == "T"
            raise RuntimeError("a phase failed")
        assert running(children[0].pid)
    finally:
        for child in children:
            child.kill()
            child.wait()


def test_a_run_ended_by_sigterm_lets_the_control_plane_go_on(tmp_path: pathlib.Path) -> None:
    plane = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(0.01)"])
    script = (
        "import sys, time\n"
        "from bench import gateway, interceptor\n"
        f"interceptor.control_plane_processes = lambda state: [({plane.pid}, 'plane')]\n"
        "gateway.exit_on_sigterm()\n"
        f"with interceptor.paused({str(tmp_path)!r}):\n"
        "    print('paused', flush=True)\n"
        "    time.sleep(60)\n"
    )
    run = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, cwd=ROOT)
    try:
        assert run.stdout is not None and run.stdout.readline() == b"paused\n"
        assert state_of(plane.pid) == "T"
        run.terminate()
        assert run.wait(timeout=30) == 128 + 15
        assert running(plane.pid)
    finally:
        run.kill()
        plane.kill()
        plane.wait()
