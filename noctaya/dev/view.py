"""What ``noctaya dev`` shows: events as lines, and the live state.

On a terminal the state is one line rewritten in place below the scrolling events, cut to the
terminal's width (read at every redraw, so a resized window is followed) and ended with ``…`` when
cut: a line that wrapped could not be erased by ``\r`` and a line clear, and would leave fragments.
When stdout is not a terminal (a pipe, a log file, CI) every change of state is printed whole as a
plain line instead, at most once per ``min_interval``, so the output reads well in a log.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from typing import Any, TextIO


@dataclasses.dataclass
class Snapshot:
    """One status line's worth of state; README.md explains every field of :meth:`line`."""

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
    failed_requests: int = 0
    last_request_failure: str | None = None
    failed_activations: int = 0
    last_activation_failure: str | None = None
    next_warm_window: str | None = None
    #: the engine signal beside the gateways' count (None: not read)
    engine: str | None = None

    def line(self) -> str:
        replicas = f"replicas {self.replicas_ready}/{self.replicas_desired} ready"
        extra = [
            f"{n} {what}"
            for n, what in ((self.replicas_starting, "starting"), (self.replicas_draining, "draining"))
            if n
        ]
        if extra:
            replicas += f" ({', '.join(extra)})"
        parts = [
            replicas,
            f"gateway demand {self.demand} (queued {self.queued}, in flight {self.in_flight})",
            f"keda {'active' if self.active else 'inactive'}, "
            f"metric {self.metric:g} (target {self.target:g} per replica)",
            f"scale-ups from 0: {self.activations}",
            f"gateways {self.gateways_up}/{self.gateways} up",
        ]
        if self.engine:
            parts.append(self.engine)
        if self.next_warm_window:
            parts.append(f"schedule: {self.next_warm_window}")
        failures = []
        if self.failed_requests:
            failures.append(f"{counted(self.failed_requests, 'request')} (last: {self.last_request_failure})")
        if self.failed_activations:
            failures.append(
                f"{counted(self.failed_activations, 'activation')} (last: {self.last_activation_failure})"
            )
        if failures:
            parts.append("failed: " + ", ".join(failures))
        if self.readiness:
            parts.append(self.readiness)
        return " | ".join(parts)


def engine_summary(document: dict[str, Any] | None) -> str | None:
    """The engine signal of a status page (``/noctaya/queue``, the aggregate scaler's ``/healthz``) as
    one status-line part: each source's replicas wanted, the engines' sums and what was read."""
    if not document:
        return None
    try:
        wanted = document.get("replicasWanted") or {}
        sources = ", ".join(f"{name} {float(value):g}" for name, value in wanted.items())
        round_ = document.get("round") or {}
        read = f"{int(round_.get('read', 0))}/{int(round_.get('replicas', 0))} read"
        sums = f"queue {float(round_.get('queue', 0)):g}, kv {float(round_.get('kvCache', 0)):g}"
        failures = round_.get("failures") or []
        why = f", {failures[0].get('reason')}" if failures else ""
        problem = f", {round_['problem']}" if round_.get("problem") else ""
        return f"engine {document.get('state')}{why}{problem}: wants {sources} ({sums}; {read})"
    except (AttributeError, TypeError, ValueError):
        return "engine: unreadable status"


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1: "1 request", "3 requests"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class View:
    def __init__(
        self, *, out: TextIO | None = None, live: bool | None = None, min_interval: float = 1.0
    ) -> None:
        self.out = out or sys.stdout
        self.live = self.out.isatty() if live is None else live
        self.min_interval = min_interval
        self._status = ""
        self._shown = ""
        self._printed = ""
        self._printed_at = 0.0

    def columns(self) -> int | None:
        """The terminal's width now; None when the output is no terminal."""
        try:
            return os.get_terminal_size(self.out.fileno()).columns or None
        except (OSError, ValueError, AttributeError):  # not a terminal, or a stream without a descriptor
            return None

    def fitted(self, line: str) -> str:
        """``line`` cut to one column less than the terminal (the cursor stays on the line)."""
        columns = self.columns()
        if columns is None:
            return line
        width = max(columns - 1, 2)
        return line if len(line) <= width else line[: width - 1] + "…"

    def event(self, message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        if self.live:
            self.out.write(f"\r\x1b[2K{stamp} {message}\n{self.fitted(self._status)}")
        else:
            self.out.write(f"{stamp} {message}\n")
        self.out.flush()

    def status(self, snapshot: Snapshot) -> None:
        line = snapshot.line()
        if self.live:
            shown = self.fitted(line)
            if shown == self._shown:
                return
            self._status, self._shown = line, shown
            self.out.write(f"\r\x1b[2K{shown}")
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
