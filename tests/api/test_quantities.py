"""Kubernetes resource quantities.

Aspects:
- parsing of binary SI, decimal SI and exponent forms, signs and fractions, into exact values;
- canonical printing as the API server stores it: the input's suffix family kept, no fractions, the
  largest exact suffix, small or fractional binary values in decimal SI, sub-nano precision rounded up;
- integers are quantities; floats, booleans and malformed strings are refused with a message;
- equality by amount (``1Gi == 1073741824``), ordering, ``int()`` rounding up;
- in a model: strings and integers parse, floats are refused, dumps are canonical strings;
- properties: printing is idempotent and print -> parse keeps the amount; parse accepts exactly the
  CRD pattern's language (within range) and never raises anything but ``QuantityError``.
"""

from __future__ import annotations

import decimal
import re

import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from noctaya.api import quantities
from noctaya.api.quantities import Format, Quantity


@pytest.mark.parametrize(
    ("text", "value", "canonical"),
    [
        ("500m", "0.5", "500m"),
        ("32Gi", str(32 * 2**30), "32Gi"),
        ("1e3", "1000", "1e3"),
        ("1E6", "1000000", "1e6"),
        ("1e-3", "0.001", "1e-3"),
        ("1e20", "1e20", "100e18"),
        ("1000", "1000", "1k"),
        ("2000m", "2", "2"),
        ("0.5", "0.5", "500m"),
        ("1.5", "1.5", "1500m"),
        ("1.5Gi", str(1536 * 2**20), "1536Mi"),
        ("1024Ki", str(2**20), "1Mi"),
        ("100Ki", str(100 * 1024), "100Ki"),
        ("0.5Ki", "512", "512"),
        ("1023Ki", str(1023 * 1024), "1023Ki"),
        ("12Ei", str(12 * 2**60), "12Ei"),
        ("5E", "5e18", "5E"),
        ("0.1m", "0.0001", "100u"),
        ("1n", "1e-9", "1n"),
        ("0.0000000001", "1e-9", "1n"),
        ("-0.0000000001", "-1e-9", "-1n"),
        ("-1", "-1", "-1"),
        ("-1.5Gi", str(-1536 * 2**20), "-1536Mi"),
        ("+8", "8", "8"),
        ("0", "0", "0"),
        ("0Gi", "0", "0"),
        ("1.e3", "1000", "1e3"),
        ("64Gi", str(64 * 2**30), "64Gi"),
        ("34359738368", str(32 * 2**30), "34359738368"),
    ],
)
def test_parse_and_print_canonically(text: str, value: str, canonical: str) -> None:
    q = Quantity.parse(text)
    assert q.value == decimal.Decimal(value)
    assert str(q) == canonical
    assert Quantity.parse(canonical) == q


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "invalid quantity"),
        ("32GB", "invalid quantity '32GB'"),
        ("1.2.3", "invalid quantity"),
        ("Gi", "invalid quantity"),
        ("1 Gi", "invalid quantity"),
        ("1e", "invalid quantity"),
        ("1e99", "exponent beyond"),
        ("0E.0", "exponent must be a whole number"),
        ("1e1.5", "exponent must be a whole number"),
        ("9" * 40, "out of range"),
        ("1" * 65, "longer than 64"),
        ("0x10", "invalid quantity"),
    ],
)
def test_refusals_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(quantities.QuantityError, match=re.escape(fragment)):
        Quantity.parse(text)


def test_integers_are_quantities_other_types_are_not() -> None:
    assert Quantity.parse(2) == Quantity.parse("2") and str(Quantity.parse(1000)) == "1k"
    for bad in (0.5, True, None, [1]):
        with pytest.raises(quantities.QuantityError, match="expected a quantity"):
            Quantity.parse(bad)  # type: ignore[arg-type]


def test_value_semantics() -> None:
    assert Quantity.parse("1Gi") == Quantity.parse(str(2**30)) and hash(Quantity.parse("1Gi")) == hash(
        Quantity.parse("1073741824")
    )
    assert Quantity.parse("500m") < Quantity.parse("1") < Quantity.parse("1Ki")
    assert int(Quantity.parse("1500m")) == 2 and int(Quantity.parse("-1500m")) == -1
    assert Quantity.parse("1Gi").format is Format.BINARY_SI
    assert Quantity.of("1.5", Format.BINARY_SI) == Quantity.parse("1.5")
    assert repr(Quantity.parse("2Gi")) == "Quantity('2Gi')"


class _Holder(pydantic.BaseModel):
    memory: Quantity


def test_in_a_model() -> None:
    assert _Holder.model_validate({"memory": "32Gi"}).model_dump() == {"memory": "32Gi"}
    assert _Holder.model_validate({"memory": 1024}).model_dump_json() == '{"memory":"1024"}'
    with pytest.raises(pydantic.ValidationError, match="a string or an integer"):
        _Holder.model_validate({"memory": 0.5})
    with pytest.raises(pydantic.ValidationError, match="invalid quantity 'lots'"):
        _Holder.model_validate({"memory": "lots"})
    schema = _Holder.model_json_schema()["properties"]["memory"]
    assert schema["x-kubernetes-int-or-string"] is True and schema["pattern"] == quantities.PATTERN


_NUMBERS = st.decimals(
    min_value=decimal.Decimal("-1e17"), max_value=decimal.Decimal("1e17"), allow_nan=False, places=9
)


@given(_NUMBERS, st.sampled_from(list(Format)))
def test_printing_is_idempotent_and_keeps_the_amount(number: decimal.Decimal, fmt: Format) -> None:
    q = Quantity.of(number, fmt)
    again = Quantity.parse(str(q))
    assert again == q
    assert str(Quantity(again.value, q.format)) == str(q)


_PATTERN = re.compile(quantities.PATTERN)


@given(st.text(alphabet="0123456789.+-eEiKMGTPnumk", max_size=12) | st.text(max_size=12))
def test_parse_accepts_exactly_the_crd_pattern(text: str) -> None:
    try:
        Quantity.parse(text)
    except quantities.QuantityError as exc:
        assert not _PATTERN.fullmatch(text) or "range" in str(exc) or "exponent" in str(exc)
    else:
        assert _PATTERN.fullmatch(text)
