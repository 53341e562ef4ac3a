"""Measured cold starts: the activation durations this gateway observed, and the Retry-After they give.

A client told to retry (429 ``queue_full`` while cold, 503 ``model_starting`` in reject mode) is best
told when the backend is likely to be up: the median of the last ``samples`` activation durations
(lease opened to backend Ready) minus the time the current activation has already run, held within
``[floor, cap]``. Until the gateway has seen an activation of its own it answers the configured
``fallback`` (``retryAfter``). The history is a fixed-size ring; its median is recomputed when an
activation is observed, so a refusal costs a subtraction and two comparisons.
"""

from __future__ import annotations

import collections
import statistics


class ActivationHistory:
    """The last ``samples`` activation durations and the Retry-After they suggest."""

    def __init__(self, *, samples: int, floor: float, cap: float, fallback: float) -> None:
        if samples < 1 or not 0 < floor <= cap:
            raise ValueError("need samples >= 1 and 0 < floor <= cap")
        self.floor = floor
        self.cap = cap
        self.fallback = fallback
        self._durations: collections.deque[float] = collections.deque(maxlen=samples)
        self._typical: float | None = None  # the median, recomputed on each observation only

    @property
    def durations(self) -> tuple[float, ...]:
        """Observed activation durations, oldest first."""
        return tuple(self._durations)

    def observe(self, seconds: float) -> None:
        self._durations.append(max(0.0, seconds))
        self._typical = statistics.median(self._durations)

    def typical(self) -> float | None:
        """The median observed activation duration; None before the first."""
        return self._typical

    def retry_after(self, *, elapsed: float | None) -> float:
        """Seconds a refused client should wait; ``elapsed``: how long the current activation has run
        (None when no activation is under way)."""
        typical = self.typical()
        if typical is None:
            return self.fallback
        remaining = typical - (elapsed or 0.0)
        return min(self.cap, max(self.floor, remaining))
