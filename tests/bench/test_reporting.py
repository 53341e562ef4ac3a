"""Ratios of differences (added latency) are printed only when both sides are above 0."""

from __future__ import annotations

import math

from bench import reporting


def test_a_ratio_of_two_positive_differences_is_printed() -> None:
    assert reporting.positive_ratio(0.5, 0.25) == "2.00x"


def test_a_difference_at_or_below_zero_or_unknown_gives_no_ratio() -> None:
    assert reporting.positive_ratio(-65.5, -20.0) == "-"
    assert reporting.positive_ratio(1.0, -20.0) == "-"
    assert reporting.positive_ratio(1.0, 0.0) == "-"
    assert reporting.positive_ratio(math.nan, 1.0) == "-"
