"""The terminal view of ``noctaya dev``.

Aspects: not a terminal -> plain timestamped lines, a status line only when it changed (and at most
once per interval); a terminal -> the status line is rewritten in place and events scroll above it;
failures are shown with counts and their last reason; README.md explains the very line the view writes;
in a real pseudo-terminal the line is cut to the terminal's width, so it never wraps or leaves fragments.
"""

from __future__ import annotations

import fcntl
import io
import os
import pathlib
import select
import struct
import termios
from typing import Any

from noctaya.dev import view


def test_plain_lines_when_not_a_terminal() -> None:
    out = io.StringIO()
    v = view.View(out=out, min_interval=0.0)
    assert not v.live
    v.event("keda: scale 0 -> 1 (push)")
    snap = view.Snapshot(replicas_desired=1, demand=2, queued=2, gateways=1, gateways_up=1, target=10)
    v.status(snap)
    v.status(snap)  # unchanged: not repeated
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].endswith(" keda: scale 0 -> 1 (push)")
    assert (
        "status: replicas 0/1 ready | gateway demand 2 (queued 2, in flight 0)"
        " | keda inactive, metric 0 (target 10 per replica)" in lines[1]
    )
    assert "failed" not in lines[1]  # nothing failed: nothing said
    assert "\x1b" not in out.getvalue()


def test_live_status_is_rewritten_in_place() -> None:
    out = io.StringIO()
    v = view.View(out=out, live=True)
    v.status(view.Snapshot(replicas_desired=2, replicas_ready=1, replicas_starting=1, active=True))
    v.event("replica-2: ready after 1.0s")
    v.close()
    text = out.getvalue()
    assert text.count("\r\x1b[2K") == 2
    assert "replicas 1/2 ready (1 starting)" in text
    assert text.endswith(
        "keda active, metric 0 (target 0 per replica) | scale-ups from 0: 0 | gateways 0/0 up\n"
    )


def test_failures_are_shown_with_counts_and_the_last_reason() -> None:
    snap = view.Snapshot(
        failed_requests=3,
        last_request_failure="queue_full",
        failed_activations=1,
        last_activation_failure="activation_timeout: not ready within 5s",
    )
    assert snap.line().endswith(
        "| failed: 3 requests (last: queue_full), "
        "1 activation (last: activation_timeout: not ready within 5s)"
    )
    one_request = view.Snapshot(
        failed_requests=1,
        last_request_failure="queue_full",
        failed_activations=2,
        last_activation_failure="activation_timeout: not ready within 5s",
    )
    assert one_request.line().endswith(
        "| failed: 1 request (last: queue_full), "
        "2 activations (last: activation_timeout: not ready within 5s)"
    )


def test_the_readme_explains_the_line_the_view_writes() -> None:
    """The example in README.md's "Reading the status line" is what the view renders for that state,
    and the table below it explains every field of the line."""
    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Reading the status line", 1)[1].split("\n## ", 1)[0]
    example = section.split("```\n", 2)[1].strip()
    snap = view.Snapshot(
        replicas_desired=1,
        replicas_ready=1,
        demand=3,
        queued=1,
        in_flight=2,
        metric=3,
        target=10,
        active=True,
        activations=2,
        gateways_up=1,
        gateways=1,
        next_warm_window="office active (1)",
        failed_requests=2,
        last_request_failure="queue_full",
        failed_activations=1,
        last_activation_failure="activation_timeout: not ready within 5m0s",
    )
    assert snap.line() == example
    explained = [row.split("|")[1] for row in section.splitlines() if row.startswith("| `")]
    for field in example.split(" | "):
        lead = " ".join(field.split()[:1])  # replicas, gateway, keda, scale-ups, gateways, ...
        assert any(f"`{lead}" in row for row in explained), field


def test_the_live_line_fits_an_80_column_terminal_and_leaves_no_fragment() -> None:
    """In a real pseudo-terminal of 80 columns, every redraw of a 200-character status line is cut to
    79 columns (ending in ``…``), so ``\\r`` and a line clear erase all of it: no row is ever written
    past the width (which would wrap and leave the wrapped part behind)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    received = bytearray()
    try:
        with os.fdopen(slave, "w", encoding="utf-8", closefd=False) as terminal:
            v = view.View(out=terminal)
            assert v.live and v.columns() == 80
            long: dict[str, Any] = dict(
                failed_requests=12, last_request_failure="queue_full " * 6, gateways=3, gateways_up=3
            )
            for demand in range(5):
                v.status(view.Snapshot(replicas_desired=2, replicas_ready=1, demand=demand, **long))
                v.event(f"replica-{demand}: ready after 1.0s")
            v.close()
        while True:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                break
            received += os.read(master, 65536)
    finally:
        os.close(master)
        os.close(slave)
    text = received.decode("utf-8").replace("\r\n", "\n")  # the terminal's output processing adds \r
    statuses = [part.split("\n")[-1] for part in text.split("\r\x1b[2K") if part]
    assert len(view.Snapshot(**long).line()) > 150
    rows = [row for part in text.split("\r\x1b[2K") for row in part.split("\n")]
    assert rows and max(len(row) for row in rows) <= 79
    assert any(s.startswith("replicas 1/2 ready | gateway demand 4") and s.endswith("…") for s in statuses)
