"""Child processes of ``noctaya dev``: started in their own process group, never left behind.

Every child (gateway, aggregate scaler, backend replica) runs in a new process group so a stop
reaches whatever it spawned, gets SIGTERM first and SIGKILL after a bounded grace, and on Linux is
started under ``setpriv --pdeathsig`` so it is told to stop even if ``noctaya dev`` itself is killed
with SIGKILL. Output goes to one log file per child, so failures can be shown with their last lines.
The ports the runner gives its children are held (:class:`PortReservation`): its own for as long as it
runs, a backend replica's until that replica has ended.
A :class:`Daemon` is the other kind: started by one command and stopped by a later one (the local
control plane's KEDA, ``noctaya.dev.cluster``), so it has no parent-death signal and its pid is kept in
a file; it is stopped the same way, its whole group, SIGTERM then SIGKILL.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import time

LOG_TAIL_BYTES = 2048


class PortReservation:
    """A loopback TCP port held until :meth:`close`: no other process can take it meanwhile.

    A socket with ``SO_REUSEADDR`` is bound to ``127.0.0.1:0`` and never listens. While it is open,
    the kernel gives the port to nobody else, yet a child that binds it with ``SO_REUSEADDR`` (aiohttp,
    uvloop and gRPC servers set it: the gateway, the aggregate scaler) listens on it and gets every
    connection, again after a restart; with no child listening, connections are refused at once.
    """

    def __init__(self, *, host: str = "127.0.0.1") -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind((host, 0))
        except BaseException:
            self._socket.close()
            raise
        self.port: int = int(self._socket.getsockname()[1])

    def close(self) -> None:
        self._socket.close()


def _parent_death_wrapper() -> list[str]:
    if sys.platform.startswith("linux"):
        setpriv = shutil.which("setpriv")
        if setpriv is not None:
            return [setpriv, "--pdeathsig", "TERM", "--"]
    return []


class Child:
    """One child process with its log file."""

    def __init__(
        self, *, name: str, argv: list[str], log_path: pathlib.Path, env: dict[str, str] | None = None
    ) -> None:
        if not argv:
            raise ValueError("empty command")
        self.name = name
        self.argv = argv
        self.log_path = log_path
        self.env = env
        self.process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    @property
    def returncode(self) -> int | None:
        return None if self.process is None else self.process.returncode

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.returncode is None

    async def start(self) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                *_parent_death_wrapper(),
                *self.argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(self.env or {})},
            )

    def signal(self, signum: int) -> None:
        if self.running:
            assert self.process is not None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signum)

    async def wait(self, *, within: float) -> bool:
        """True when the process has exited within ``within`` seconds."""
        if self.process is None:
            return True
        try:
            await asyncio.wait_for(self.process.wait(), within)
        except TimeoutError:
            return False
        return True

    async def stop(self, *, grace: float) -> int | None:
        """SIGTERM to the group, SIGKILL after ``grace``; returns the exit code."""
        if self.process is None:
            return None
        self.signal(signal.SIGTERM)
        if not await self.wait(within=grace):
            self.signal(signal.SIGKILL)
            await self.wait(within=5.0)
        # the leader is gone; make sure nothing it spawned outlives it
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        return self.process.returncode

    def log_tail(self) -> str:
        return log_tail(self.log_path)


def log_tail(path: pathlib.Path) -> str:
    """The last ``LOG_TAIL_BYTES`` of a log file ("" when there is none)."""
    try:
        with path.open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - LOG_TAIL_BYTES))
            return log.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _zombie(pid: int) -> bool:
    """Exited, not yet reaped (signal 0 still reaches it): state ``Z`` in ``/proc/<pid>/stat``."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    fields = stat.rsplit(")", 1)[-1].split()
    return bool(fields) and fields[0] == "Z"


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


class Daemon:
    """A process that outlives the command starting it: a session of its own, its pid in ``pidfile``.

    :meth:`start` records the pid; a later command's :meth:`stop` reads it back and stops the group.
    A pid file that does not hold a decimal pid, or names a process that is gone, reads as not running.
    """

    POLL = 0.1

    def __init__(self, *, name: str, pidfile: pathlib.Path, log_path: pathlib.Path) -> None:
        self.name = name
        self.pidfile = pidfile
        self.log_path = log_path
        self._popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        try:
            text = self.pidfile.read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not text.isdigit() or not 0 < int(text) < 2**22:
            return None
        return int(text)

    @property
    def running(self) -> bool:
        if self._popen is not None:  # ours: poll reaps it (a zombie would still answer signal 0)
            return self._popen.poll() is None
        pid = self.pid
        if pid is None:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return not _zombie(pid)

    def start(self, *, argv: list[str], env: dict[str, str] | None = None) -> int:
        """Start ``argv`` in a new session, output to the log (truncated); returns the pid."""
        if not argv:
            raise ValueError("empty command")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self.pidfile.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self._popen = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env={**os.environ, **(env or {})},
            )
        self.pidfile.write_text(f"{self._popen.pid}\n", encoding="ascii")
        return self._popen.pid

    def _gone_within(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while self.running:
            if time.monotonic() >= deadline:
                return False
            time.sleep(self.POLL)
        return True

    def stop(self, *, grace: float) -> bool:
        """SIGTERM to the group, SIGKILL after ``grace`` s; the pid file removed. False if none ran."""
        was_running = self.running
        pid = self.pid
        if was_running and pid is not None:
            _signal_group(pid, signal.SIGTERM)
            if not self._gone_within(grace):
                _signal_group(pid, signal.SIGKILL)
                self._gone_within(5.0)
            _signal_group(pid, signal.SIGKILL)  # whatever the leader spawned does not outlive it
        self.pidfile.unlink(missing_ok=True)
        return was_running

    def log_tail(self) -> str:
        return log_tail(self.log_path)
