"""Kubernetes (Go) duration strings as a typed, frozen value.

Grammar (Go's ``time.ParseDuration``): an optional sign, then one or more decimal numbers each with a
unit ``ns``, ``us`` (or ``µs``/``μs``), ``ms``, ``s``, ``m``, ``h`` — ``10s``, ``2m``, ``1h30m``,
``500ms``, ``1.5h``; a bare ``0`` is zero. The value is held as whole nanoseconds, like Go, so
``str()`` prints exactly what Go's ``Duration.String()`` prints (``90s`` -> ``1m30s``, ``1h`` ->
``1h0m0s``, ``1500us`` -> ``1.5ms``) and parse -> print -> parse is the identity.

In a model a ``Duration`` field accepts a string (or a ``Duration``) and serializes back to the
canonical string; a number is refused, as the API server refuses it for a string field.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, ClassVar, Final

from noctaya.api import scalars

#: The CRD pattern: Go's duration syntax (what the API server's CEL ``duration()`` accepts).
PATTERN: Final = r"^[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$"
#: Longest accepted string; Go durations fit in int64 nanoseconds (about 292 years).
MAX_LENGTH: Final = 64
MAX_NANOSECONDS: Final = 2**63 - 1

_UNITS: Final[dict[str, int]] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_FULL = re.compile(PATTERN)
_TERM = re.compile(r"([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """A string that is not a Kubernetes duration."""


@functools.total_ordering
@dataclasses.dataclass(frozen=True, slots=True)
class Duration(scalars.Scalar):
    """A Go duration: whole nanoseconds, signed. Compare, hash and print like Go's ``time.Duration``."""

    nanoseconds: int

    def __post_init__(self) -> None:
        if not isinstance(self.nanoseconds, int) or isinstance(self.nanoseconds, bool):
            raise TypeError("Duration holds whole nanoseconds (int)")
        if abs(self.nanoseconds) > MAX_NANOSECONDS:
            raise DurationError("duration out of range (about ±292 years)")

    # ------------------------------------------------------------------ construction
    @classmethod
    def parse(cls, text: str) -> Duration:
        """Parse a Go duration string; ``DurationError`` names what is wrong."""
        if not isinstance(text, str):
            raise DurationError(f"expected a duration string such as '10s', got {type(text).__name__}")
        if len(text) > MAX_LENGTH:
            raise DurationError(f"duration longer than {MAX_LENGTH} characters")
        if not _FULL.fullmatch(text):
            raise DurationError(
                f"invalid duration {text!r}: use numbers with units (ns, us, ms, s, m, h), e.g. 90s or 1h30m"
            )
        sign = -1 if text.startswith("-") else 1
        body = text.lstrip("+-")
        if body == "0":
            return cls(0)
        total = 0
        for whole, frac, unit in _TERM.findall(body):
            scale = _UNITS[unit]
            total += int(whole or "0") * scale
            if frac:
                # Go truncates fractional nanoseconds; so do we.
                total += int(frac) * scale // 10 ** len(frac)
            if total > MAX_NANOSECONDS:
                raise DurationError(f"invalid duration {text!r}: out of range (about ±292 years)")
        return cls(sign * total)

    @classmethod
    def of(cls, *, hours: int = 0, minutes: int = 0, seconds: float = 0, milliseconds: int = 0) -> Duration:
        return cls(
            hours * _UNITS["h"]
            + minutes * _UNITS["m"]
            + round(seconds * _UNITS["s"])
            + milliseconds * _UNITS["ms"]
        )

    # ------------------------------------------------------------------ views
    @property
    def total_seconds(self) -> float:
        return self.nanoseconds / 1e9

    @property
    def is_whole_seconds(self) -> bool:
        return self.nanoseconds % _UNITS["s"] == 0

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Duration):
            return NotImplemented
        return self.nanoseconds < other.nanoseconds

    def __bool__(self) -> bool:
        return self.nanoseconds != 0

    def __repr__(self) -> str:
        return f"Duration({str(self)!r})"

    def __str__(self) -> str:
        """Go's ``Duration.String()``."""
        ns = self.nanoseconds
        if ns == 0:
            return "0s"
        sign = "-" if ns < 0 else ""
        u = abs(ns)
        if u < _UNITS["s"]:
            for unit, scale in (("ns", 1), ("µs", 1_000), ("ms", 1_000_000)):
                if u < scale * 1000:
                    return sign + _fixed(u, scale) + unit
        out = _fixed(u % _UNITS["m"], _UNITS["s"]) + "s"
        minutes = u // _UNITS["m"]
        if minutes:
            hours, minutes = divmod(minutes, 60)
            out = f"{minutes}m{out}"
            if hours:
                out = f"{hours}h{out}"
        return sign + out

    # ------------------------------------------------------------------ pydantic integration
    JSON_SCHEMA: ClassVar[dict[str, Any]] = {"type": "string", "pattern": PATTERN, "maxLength": MAX_LENGTH}

    ACCEPTS: ClassVar[tuple[type, ...]] = (str,)
    ERROR: ClassVar[str] = "duration"
    TYPE_MESSAGE: ClassVar[str] = "expected a duration string such as '10s' or '1h30m'"


def _fixed(value: int, scale: int) -> str:
    """``value / scale`` in decimal with trailing zeros (and a bare point) dropped."""
    whole, frac = divmod(value, scale)
    if not frac:
        return str(whole)
    digits = len(str(scale)) - 1
    return f"{whole}.{str(frac).rjust(digits, '0').rstrip('0')}"


def parse(text: str) -> Duration:
    """Module-level shorthand for ``Duration.parse``."""
    return Duration.parse(text)
