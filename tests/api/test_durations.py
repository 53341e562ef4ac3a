"""Kubernetes (Go) durations.

Aspects:
- parsing of every unit, fractions, signs, compound forms and ``0``; values in whole nanoseconds;
- printing is exactly Go's ``Duration.String()`` (``90s`` -> ``1m30s``, ``1h`` -> ``1h0m0s``,
  sub-second units, fractional seconds);
- refusals with a message: empty, unitless, unknown unit, spaces, out of range, non-strings;
- the value is frozen, hashable, ordered;
- in a model: strings parse, numbers are refused, dumps are canonical strings;
- property: print -> parse is the identity for any int64 nanoseconds; parse accepts exactly the CRD
  pattern's language (within range) and never raises anything but ``DurationError``.
"""

from __future__ import annotations

import dataclasses
import re

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from noctaya.api import durations
from noctaya.api.durations import Duration


@pytest.mark.parametrize(
    ("text", "nanoseconds", "canonical"),
    [
        ("10s", 10 * 10**9, "10s"),
        ("90s", 90 * 10**9, "1m30s"),
        ("2m", 120 * 10**9, "2m0s"),
        ("1h30m", 5400 * 10**9, "1h30m0s"),
        ("1h", 3600 * 10**9, "1h0m0s"),
        ("500ms", 500 * 10**6, "500ms"),
        ("1.5h", 5400 * 10**9, "1h30m0s"),
        ("1500us", 1_500_000, "1.5ms"),
        ("1500µs", 1_500_000, "1.5ms"),
        ("1500μs", 1_500_000, "1.5ms"),
        ("100ns", 100, "100ns"),
        ("1.5s", 1_500_000_000, "1.5s"),
        ("2h45m30.5s", 9930_500_000_000, "2h45m30.5s"),
        ("0", 0, "0s"),
        ("-0", 0, "0s"),
        ("+5s", 5 * 10**9, "5s"),
        ("-5s", -5 * 10**9, "-5s"),
        ("-1.5ms", -1_500_000, "-1.5ms"),
        ("1.s", 10**9, "1s"),
        (".5s", 5 * 10**8, "500ms"),
        ("0.000000001s", 1, "1ns"),
        ("1m1s1ms1us1ns", 61_001_001_001, "1m1.001001001s"),
        ("3h3h", 6 * 3600 * 10**9, "6h0m0s"),
    ],
)
def test_parse_and_print_like_go(text: str, nanoseconds: int, canonical: str) -> None:
    value = Duration.parse(text)
    assert value.nanoseconds == nanoseconds
    assert str(value) == canonical
    assert Duration.parse(canonical) == value
    assert value.total_seconds == nanoseconds / 1e9


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "invalid duration"),
        ("10", "invalid duration '10'"),
        ("10 s", "invalid duration"),
        ("10sec", "invalid duration"),
        ("1d", "invalid duration"),
        ("s", "invalid duration"),
        (".s", "invalid duration"),
        ("--1s", "invalid duration"),
        ("1s\n", "invalid duration"),
        ("9999999999999h", "out of range"),
        ("1" * 65 + "s", "longer than 64"),
    ],
)
def test_refusals_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(durations.DurationError, match=re.escape(fragment)):
        Duration.parse(text)


def test_only_strings_are_durations() -> None:
    with pytest.raises(durations.DurationError, match="got int"):
        Duration.parse(10)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Duration(1.5)  # type: ignore[arg-type]


def test_value_semantics() -> None:
    a, b = Duration.parse("90s"), Duration.parse("1m30s")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert Duration.parse("1s") < Duration.parse("1m") <= Duration.parse("60s")
    assert not Duration(0) and Duration(1)
    assert repr(a) == "Duration('1m30s')"
    assert Duration.of(hours=1, minutes=2, seconds=3.5, milliseconds=1) == Duration.parse("1h2m3.501s")
    assert Duration.parse("2s").is_whole_seconds and not Duration.parse("2.5s").is_whole_seconds
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.nanoseconds = 5  # type: ignore[misc]


class _Holder(pydantic.BaseModel):
    timeout: Duration


def test_in_a_model() -> None:
    assert _Holder.model_validate({"timeout": "90s"}).timeout == Duration.parse("90s")
    assert _Holder(timeout=Duration.parse("1h")).model_dump() == {"timeout": "1h0m0s"}
    assert _Holder.model_validate({"timeout": "90s"}).model_dump_json() == '{"timeout":"1m30s"}'
    with pytest.raises(pydantic.ValidationError, match="expected a duration string such as '10s'"):
        _Holder.model_validate({"timeout": 90})
    with pytest.raises(pydantic.ValidationError, match="invalid duration 'soon'"):
        _Holder.model_validate({"timeout": "soon"})
    assert _Holder.model_json_schema()["properties"]["timeout"]["pattern"] == durations.PATTERN


@given(st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1))
def test_print_then_parse_is_the_identity(nanoseconds: int) -> None:
    value = Duration(nanoseconds)
    assert Duration.parse(str(value)) == value


_PATTERN = re.compile(durations.PATTERN)


@given(st.text(alphabet="0123456789.+-hmsunµ ", max_size=20) | st.text(max_size=20))
def test_parse_accepts_exactly_the_crd_pattern(text: str) -> None:
    try:
        Duration.parse(text)
    except durations.DurationError as exc:
        assert not _PATTERN.fullmatch(text) or "out of range" in str(exc) or text.endswith("\n")
    else:
        assert _PATTERN.fullmatch(text)
