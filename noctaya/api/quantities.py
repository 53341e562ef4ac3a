"""Kubernetes resource quantities (``500m``, ``32Gi``, ``1e3``) as a typed, frozen value.

Grammar (``k8s.io/apimachinery/pkg/api/resource``): ``<signedNumber><suffix>`` where the suffix is a
binary SI one (``Ki Mi Gi Ti Pi Ei``), a decimal SI one (``n u m "" k M G T P E``) or a decimal
exponent (``e3``, ``E-6``). The value is exact (``Decimal``); precision finer than ``1n`` is rounded
away from zero to the next nano unit, as the API server does.

``str()`` prints the canonical form the API server stores, following its rules: the suffix family of
the input is kept; no fraction is printed and the suffix is the largest that keeps the value exact
(``1000`` -> ``1k``, ``0.5`` -> ``500m``, ``1.5Gi`` -> ``1536Mi``, ``1e3`` stays ``1e3``); binary values
that are not whole or are below 1024 print in decimal SI (``0.5Ki`` -> ``512``).

In a model a ``Quantity`` field accepts a string or an integer (the CRD types it int-or-string) and
serializes to the canonical string; a float is refused (write it as a string: ``"0.5"``).
"""

from __future__ import annotations

import dataclasses
import decimal
import enum
import functools
import re
from typing import Any, ClassVar, Final

from noctaya.api import scalars

#: The CRD pattern, the same one the Kubernetes API uses for ``resource.Quantity``.
PATTERN: Final = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
#: Longest accepted string; bounds the work of parsing hostile input.
MAX_LENGTH: Final = 64
#: The API server refuses exponents beyond this magnitude.
MAX_EXPONENT: Final = 30

_FULL = re.compile(
    r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"((?:[KMGTPE]i)|[numkMGTPE]|(?:[eE][+-]?[0-9]+))?"
)
_CRD_PATTERN: Final = re.compile(PATTERN)
_BINARY: Final[dict[str, int]] = {"": 0, "Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL: Final[dict[str, int]] = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_BY_EXP: Final[dict[int, str]] = {v: k for k, v in _DECIMAL.items()}
_CONTEXT = decimal.Context(prec=80, rounding=decimal.ROUND_CEILING, Emax=999, Emin=-999)
_NANO = decimal.Decimal("1e-9")


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


class Format(enum.StrEnum):
    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"


@functools.total_ordering
@dataclasses.dataclass(frozen=True, slots=True)
class Quantity(scalars.Scalar):
    """An exact amount with the suffix family it was written in. Equal when the amounts are equal."""

    value: decimal.Decimal
    format: Format = Format.DECIMAL_SI

    @classmethod
    def parse(cls, text: str | int) -> Quantity:
        """Parse a quantity string (or an integer); ``QuantityError`` names what is wrong."""
        if isinstance(text, bool) or not isinstance(text, str | int):
            raise QuantityError(f"expected a quantity such as '500m' or '32Gi', got {type(text).__name__}")
        if isinstance(text, int):
            if abs(text) >= 10**MAX_EXPONENT:
                raise QuantityError("quantity out of range")
            return cls(decimal.Decimal(text))
        if len(text) > MAX_LENGTH:
            raise QuantityError(f"quantity longer than {MAX_LENGTH} characters")
        match = _FULL.fullmatch(text)
        if match is None:
            if _CRD_PATTERN.fullmatch(text):  # the CRD pattern allows a fraction the API server refuses
                raise QuantityError(f"invalid quantity {text!r}: the exponent must be a whole number")
            raise QuantityError(
                f"invalid quantity {text!r}: use a number with an optional suffix, e.g. 500m, 2, 32Gi, 1e3"
            )
        number, suffix = match.group(1), match.group(2) or ""
        mantissa = _CONTEXT.create_decimal(number)
        if suffix in _BINARY and suffix:
            value = _CONTEXT.multiply(mantissa, decimal.Decimal(2 ** _BINARY[suffix]))
            fmt = Format.BINARY_SI
        elif suffix in _DECIMAL:
            value = _CONTEXT.multiply(mantissa, decimal.Decimal(1).scaleb(_DECIMAL[suffix]))
            fmt = Format.DECIMAL_SI
        else:
            exponent = int(suffix[1:])
            if abs(exponent) > MAX_EXPONENT:
                raise QuantityError(f"invalid quantity {text!r}: exponent beyond ±{MAX_EXPONENT}")
            value = _CONTEXT.multiply(mantissa, decimal.Decimal(1).scaleb(exponent))
            fmt = Format.DECIMAL_EXPONENT
        if abs(value) >= decimal.Decimal(10) ** MAX_EXPONENT:
            raise QuantityError(f"invalid quantity {text!r}: out of range")
        return cls(_round_to_nano(value), fmt)

    @classmethod
    def of(cls, value: int | str | decimal.Decimal, fmt: Format = Format.DECIMAL_SI) -> Quantity:
        return cls(_round_to_nano(_CONTEXT.create_decimal(value)), fmt)

    # ------------------------------------------------------------------ views
    def __int__(self) -> int:
        """The value rounded up to a whole number, as ``Quantity.Value()`` does."""
        return int(self.value.to_integral_value(rounding=decimal.ROUND_CEILING))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value < other.value

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"

    def __str__(self) -> str:
        value, fmt = self.value, self.format
        if value == 0:
            return "0"
        if fmt is Format.BINARY_SI:
            if abs(value) < 1024 or value != value.to_integral_value():
                fmt = Format.DECIMAL_SI
            else:
                whole = int(value)
                shift = 0
                while shift < 60 and whole % (1 << (shift + 10)) == 0:
                    shift += 10
                suffix = next(k for k, v in _BINARY.items() if v == shift)
                return f"{whole >> shift}{suffix}"
        sign = "-" if value < 0 else ""
        mantissa, exponent = _decimal_parts(abs(value))
        if fmt is Format.DECIMAL_EXPONENT:
            return f"{sign}{mantissa}" + (f"e{exponent}" if exponent else "")
        if exponent > 18:  # beyond E: keep the largest SI suffix and a longer mantissa
            mantissa, exponent = mantissa * 10 ** (exponent - 18), 18
        return f"{sign}{mantissa}{_DECIMAL_BY_EXP[exponent]}"

    # ------------------------------------------------------------------ pydantic integration
    JSON_SCHEMA: ClassVar[dict[str, Any]] = {
        "anyOf": [{"type": "integer"}, {"type": "string"}],
        "pattern": PATTERN,
        "x-kubernetes-int-or-string": True,
    }

    ACCEPTS: ClassVar[tuple[type, ...]] = (str, int)
    ERROR: ClassVar[str] = "quantity"
    TYPE_MESSAGE: ClassVar[str] = "expected a quantity such as '500m', '2' or '32Gi' (a string or an integer)"


def _round_to_nano(value: decimal.Decimal) -> decimal.Decimal:
    """Round away from zero to a whole number of nano units (the API server's smallest scale)."""
    return value.quantize(_NANO, rounding=decimal.ROUND_UP, context=_CONTEXT).normalize(_CONTEXT)


def _decimal_parts(value: decimal.Decimal) -> tuple[int, int]:
    """``value == mantissa * 10**exponent``, ``exponent`` a multiple of 3 as large as exactness allows."""
    scaled = value.scaleb(9, context=_CONTEXT)  # in nano units, whole by construction
    mantissa, exponent = int(scaled), -9
    while mantissa % 1000 == 0 and mantissa:
        mantissa //= 1000
        exponent += 3
    return mantissa, exponent


def parse(text: str | int) -> Quantity:
    """Module-level shorthand for ``Quantity.parse``."""
    return Quantity.parse(text)
