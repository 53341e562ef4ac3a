"""The contract's value types.

Aspects: a duration is a Go string or a number of seconds, written back in Go's canonical form and
read back to the same value; negative, boolean, unit-less and over-a-year durations are refused with
a message; a listen address is ``HOST:PORT``, ``:PORT`` or ``[V6]:PORT`` and nothing else, with the
bind host and gRPC target each server needs; a service reference prints as ``namespace/name``.
"""

from __future__ import annotations

import pydantic
import pytest

from noctaya.contract import fields


class Periods(fields.Model):
    period: fields.Seconds = 1.0
    positive: fields.PositiveSeconds = 1.0


@pytest.mark.parametrize(
    ("given", "seconds", "written"),
    [
        ("500ms", 0.5, "500ms"),
        ("90s", 90.0, "1m30s"),
        ("1h", 3600.0, "1h0m0s"),
        ("1.5s", 1.5, "1.5s"),
        ("0", 0.0, "0s"),
        (0.05, 0.05, "50ms"),
        (300, 300.0, "5m0s"),
        (" 10s ", 10.0, "10s"),
    ],
)
def test_durations_round_trip(given: object, seconds: float, written: str) -> None:
    parsed = Periods.model_validate({"period": given})
    assert parsed.period == pytest.approx(seconds)
    assert parsed.document()["period"] == written
    assert Periods.model_validate(parsed.document()) == parsed


@pytest.mark.parametrize(
    "bad", ["10", "5 minutes", "-1s", True, None, [], "400d", 10**9, float("nan"), "ms", 10**400, -(10**400)]
)
def test_bad_durations_are_refused(bad: object) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        Periods.model_validate({"period": bad})
    assert caught.value.errors()[0]["loc"] == ("period",)


def test_positive_durations_refuse_zero() -> None:
    with pytest.raises(pydantic.ValidationError, match="greater than 0"):
        Periods.model_validate({"positive": "0s"})


@pytest.mark.parametrize(
    ("text", "host", "port", "bind", "grpc"),
    [
        (":8080", "", 8080, "0.0.0.0", "[::]:8080"),
        ("127.0.0.1:0", "127.0.0.1", 0, "127.0.0.1", "127.0.0.1:0"),
        ("[::1]:9090", "::1", 9090, "::1", "[::1]:9090"),
        ("gateway.local:80", "gateway.local", 80, "gateway.local", "gateway.local:80"),
    ],
)
def test_listen_addresses(text: str, host: str, port: int, bind: str, grpc: str) -> None:
    address = fields.ListenAddress.parse(text)
    assert (address.host, address.port, address.bind_host, address.grpc_target) == (host, port, bind, grpc)
    assert fields.ListenAddress.parse(str(address)) == address


@pytest.mark.parametrize(
    "bad",
    ["9090", "host:", "host:http", ":70000", ":-1", "::1:80", "[::1:80", "[]:80", "a b:80", ":+80", ":٣"],
)
def test_bad_listen_addresses(bad: str) -> None:
    with pytest.raises(ValueError, match="listen address"):
        fields.ListenAddress.parse(bad)


def test_service_ref() -> None:
    ref = fields.ServiceRef(name="qwen", namespace="ai")
    assert str(ref) == "ai/qwen"
    assert ref == fields.ServiceRef.model_validate({"name": "qwen", "namespace": "ai"})
    assert len({ref, fields.ServiceRef(name="qwen", namespace="ai")}) == 1
    with pytest.raises(pydantic.ValidationError):
        fields.ServiceRef(name="Qwen_7B", namespace="ai")
