"""Child processes of ``noctaya dev``: started in their own process group, never left behind.

Every child (gateway, aggregate scaler, backend replica) runs in a new process group so a stop
reaches whatever it spawned, gets SIGTERM first and SIGKILL after a bounded grace, and on Linux is
started under ``setpriv --pdeathsig`` so it is told to stop even if ``noctaya dev`` itself is killed
with SIGKILL. Output goes to one log file per child, so failures can be shown with their last lines.
The ports the runner gives its own children are held (:class:`PortReservation`) for as long as it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pathlib
import shutil
import signal
import socket
import sys

LOG_TAIL_BYTES = 2048


def free_port() -> int:
    """A loopback TCP port that was free a moment ago (the child binds it right after).

    Another process may take it in between; for a child that binds with ``SO_REUSEADDR`` (every
    ``noctaya`` command does), :class:`PortReservation` holds the port instead.
    """
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PortReservation:
    """A loopback TCP port held until :meth:`close`: no other process can take it meanwhile.

    A socket with ``SO_REUSEADDR`` is bound to ``127.0.0.1:0`` and never listens. While it is open,
    the kernel gives the port to nobody else, yet a child that binds it with ``SO_REUSEADDR`` (aiohttp,
    uvloop and gRPC servers set it: the gateway, the aggregate scaler) listens on it and gets every
    connection, again after a restart; with no child listening, connections are refused at once.
    """

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._socket.bind(("127.0.0.1", 0))
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
        try:
            with self.log_path.open("rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - LOG_TAIL_BYTES))
                return log.read().decode("utf-8", "replace")
        except OSError:
            return ""
