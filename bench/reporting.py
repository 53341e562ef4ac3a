"""Figures for benchmark output: percentiles and one aligned table per benchmark."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def ratio(value: float, baseline: float) -> str:
    """``value`` relative to ``baseline`` as ``1.23x``; ``-`` when it cannot be computed."""
    if baseline == 0 or math.isnan(value) or math.isnan(baseline):
        return "-"
    return f"{value / baseline:.2f}x"


def positive_ratio(value: float, baseline: float) -> str:
    """:func:`ratio` of two quantities that only compare when both are above 0 (added latency: on a
    busy machine a proxied run can come out faster than the direct one); ``-`` otherwise."""
    if not (value > 0 and baseline > 0):
        return "-"
    return ratio(value, baseline)


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Render rows under a header, columns aligned, floats with three significant decimals."""

    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 1000 else f"{value:,.0f}"
        return str(value)

    cells = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)]
    lines = [f"== {title}", "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(lines)
