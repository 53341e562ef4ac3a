"""What ``noctaya dev`` shows: events as lines, and the live state.

On a terminal the state is one line rewritten in place below the scrolling events; when stdout is
not a terminal (a pipe, a log file, CI) every change of state is printed as a plain line instead,
at most once per ``min_interval``, so the output reads well in a log.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from typing import TextIO


@dataclasses.dataclass
class Snapshot:
    replicas_desired: int = 0
    replicas_ready: int = 0
    replicas_starting: int = 0
    replicas_draining: int = 0
    demand: int = 0
    queued: int = 0
    in_flight: int = 0
    metric: float = 0.0
    target: float = 0.0
    active: bool = False
    activations: int = 0
    gateways_up: int = 0
    gateways: int = 0
    #: what a failing readiness probe got, replica's or gateway's ("readiness /health answered 404")
    readiness: str = ""

    def line(self) -> str:
        replicas = f"replicas {self.replicas_ready}/{self.replicas_desired} ready"
        extra = [
            f"{n} {what}"
            for n, what in ((self.replicas_starting, "starting"), (self.replicas_draining, "draining"))
            if n
        ]
        if extra:
            replicas += f" ({', '.join(extra)})"
        return (
            f"{replicas} | demand {self.demand} (queued {self.queued}, in flight {self.in_flight})"
            f" | metric {self.metric:g}/{self.target:g} | {'active' if self.active else 'idle'}"
            f" | activations {self.activations} | gateways {self.gateways_up}/{self.gateways}"
            + (f" | {self.readiness}" if self.readiness else "")
        )


class View:
    def __init__(
        self, *, out: TextIO | None = None, live: bool | None = None, min_interval: float = 1.0
    ) -> None:
        self.out = out or sys.stdout
        self.live = self.out.isatty() if live is None else live
        self.min_interval = min_interval
        self._status = ""
        self._printed = ""
        self._printed_at = 0.0

    def event(self, message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        if self.live:
            self.out.write(f"\r\x1b[2K{stamp} {message}\n{self._status}")
        else:
            self.out.write(f"{stamp} {message}\n")
        self.out.flush()

    def status(self, snapshot: Snapshot) -> None:
        line = snapshot.line()
        if self.live:
            if line == self._status:
                return
            self._status = line
            self.out.write(f"\r\x1b[2K{line}")
            self.out.flush()
            return
        self._status = line
        now = time.monotonic()
        if line != self._printed and now - self._printed_at >= self.min_interval:
            self.out.write(f"{time.strftime('%H:%M:%S')} status: {line}\n")
            self.out.flush()
            self._printed, self._printed_at = line, now

    def close(self) -> None:
        if self.live:
            self.out.write("\n")
            self.out.flush()
