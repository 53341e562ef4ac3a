"""The terminal view of ``noctaya dev``.

Aspects: not a terminal -> plain timestamped lines, a status line only when it changed (and at most
once per interval); a terminal -> the status line is rewritten in place and events scroll above it.
"""

from __future__ import annotations

import io

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
        "1 activations (last: activation_timeout: not ready within 5s)"
    )
