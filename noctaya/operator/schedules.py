"""The schedule window of an LLMService that ``status.nextWarmWindow`` shows, and when to look again.

KEDA's cron triggers keep the backend warm; this module only reports them. Of the service's
``spec.scaling.schedules`` it picks the window open now (the one that stays open longest), else the
one that opens next, by KEDA's own rule (``noctaya.api.cron.window``), and tells the reconciler how
long until that changes (the open window closes, or the next one opens), so the status moves on time.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import Any, Final

from noctaya.api import llmservice

MIN_RECHECK: Final = 1.0
MAX_RECHECK: Final = 3600.0
"""The status is recomputed at the next window boundary, but at least once an hour."""


def _stamp(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def next_warm_window(
    schedules: Sequence[llmservice.Schedule], *, now: datetime.datetime
) -> tuple[dict[str, Any] | None, float | None]:
    """``status.nextWarmWindow`` (or None without schedules) and seconds until it changes."""
    best: tuple[tuple[int, float], dict[str, Any], datetime.datetime] | None = None
    for schedule in schedules:
        window = schedule.window(now)
        if window.end is None:  # never opens again within the search horizon
            continue
        if window.active:
            rank = (0, -window.end.timestamp())  # open now: the one open longest wins
            boundary = window.end
            status = {
                "name": schedule.name,
                "active": True,
                "end": _stamp(window.end),
                "minReplicas": schedule.min_replicas,
                "window": f"now/{_stamp(window.end)}",
            }
        else:
            assert window.start is not None
            rank = (1, window.start.timestamp())
            boundary = window.start
            status = {
                "name": schedule.name,
                "active": False,
                "start": _stamp(window.start),
                "end": _stamp(window.end),
                "minReplicas": schedule.min_replicas,
                "window": f"{_stamp(window.start)}/{_stamp(window.end)}",
            }
        if best is None or rank < best[0]:
            best = (rank, status, boundary)
    if best is None:
        return None, None
    seconds = (best[2] - now).total_seconds()
    return best[1], min(MAX_RECHECK, max(MIN_RECHECK, seconds))
