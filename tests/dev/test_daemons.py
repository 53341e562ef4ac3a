"""Processes started by one command and stopped by a later one (``processes.Daemon``), for real.

Aspects: a daemon started by a command that then exits keeps running; a later command, knowing only
the pid file, stops its whole group (the leader and what it spawned), SIGKILL after the grace when
the leader ignores SIGTERM, and removes the pid file; a second stop, a missing pid file or one that
does not hold a pid reads as not running and signals nobody.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import time

import pytest

from noctaya.dev import processes

# The leader spawns a grandchild, writes its pid, and sleeps (ignoring SIGTERM when told to).
LEADER = """
import os, signal, subprocess, sys, time
if sys.argv[1] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
grandchild = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
with open(sys.argv[2] + ".tmp", "w") as out:
    out.write(str(grandchild.pid))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
print("leader up", flush=True)
time.sleep(600)
"""

# `up`: a command of its own that starts the daemon and exits, so the daemon is no child of the test.
STARTER = """
import pathlib, sys
from noctaya.dev import processes
pidfile, log = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
daemon = processes.Daemon(name="leader", pidfile=pidfile, log_path=log)
print(daemon.start(argv=[sys.executable, "-c", sys.argv[3], sys.argv[4], sys.argv[5]]))
"""


def gone(pid: int) -> bool:
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def wait_for(path: pathlib.Path) -> None:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def started(tmp_path: pathlib.Path, mode: str) -> tuple[processes.Daemon, int, int]:
    pidfile, log, grandchild_file = tmp_path / "d.pid", tmp_path / "d.log", tmp_path / "grandchild"
    out = subprocess.run(
        [sys.executable, "-c", STARTER, str(pidfile), str(log), LEADER, mode, str(grandchild_file)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    wait_for(grandchild_file)
    daemon = processes.Daemon(name="leader", pidfile=pidfile, log_path=log)  # as `down` knows it
    return daemon, int(out.stdout), int(grandchild_file.read_text())


@pytest.mark.parametrize("mode", ["polite", "stubborn"])
def test_a_later_command_stops_the_whole_group_by_its_pid_file(tmp_path: pathlib.Path, mode: str) -> None:
    daemon, leader, grandchild = started(tmp_path, mode)
    assert (daemon.pid, daemon.running) == (leader, True)
    assert os.getpgid(grandchild) == leader  # its own session: the group is the leader's
    assert daemon.stop(grace=0.5) is True
    deadline = time.monotonic() + 30
    while not (gone(leader) and gone(grandchild)):
        assert time.monotonic() < deadline, "the group outlived the stop"
        time.sleep(0.05)
    assert not daemon.pidfile.exists() and not daemon.running
    assert "leader up" in daemon.log_tail()
    assert daemon.stop(grace=0.5) is False


@pytest.mark.parametrize("content", [None, "", "garbage\n", "-1\n", "0\n", "99999999999\n", "\xff"])
def test_no_pid_reads_as_not_running_and_signals_nobody(tmp_path: pathlib.Path, content: str | None) -> None:
    pidfile = tmp_path / "d.pid"
    if content is not None:
        pidfile.write_bytes(content.encode("latin-1"))
    daemon = processes.Daemon(name="d", pidfile=pidfile, log_path=tmp_path / "d.log")
    assert daemon.pid is None and not daemon.running
    assert daemon.stop(grace=0.1) is False
    assert not pidfile.exists()
    assert daemon.log_tail() == ""


def test_an_empty_command_is_refused(tmp_path: pathlib.Path) -> None:
    daemon = processes.Daemon(name="d", pidfile=tmp_path / "d.pid", log_path=tmp_path / "d.log")
    with pytest.raises(ValueError, match="empty command"):
        daemon.start(argv=[])
