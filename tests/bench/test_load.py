"""The held load generator's reading of a server's queue endpoint (the gateway's and the interceptor's)."""

from __future__ import annotations

import pytest

from bench import load


def test_the_gateways_queue_is_read_by_its_queued_field() -> None:
    assert load.held_count({"queued": 10_000, "backendReady": False}, key=None) == 10_000


def test_the_interceptors_queue_is_read_by_its_routes_concurrency() -> None:
    document = {"ns/cold": {"Concurrency": 42, "RequestCount": 42}, "ns/engine": {"Concurrency": 3}}
    assert load.held_count(document, key="ns/cold") == 42


def test_a_route_not_listed_yet_holds_nothing() -> None:
    assert load.held_count({}, key="ns/cold") == 0


@pytest.mark.parametrize(
    ("document", "key", "names"),
    [
        ([], None, "expected a JSON object, got list"),
        ({"queued": "7"}, None, "queued is not a non-negative integer: '7'"),
        ({"queued": True}, None, "queued is not a non-negative integer: True"),
        ({}, None, "queued is not a non-negative integer: None"),
        ({"ns/cold": 7}, "ns/cold", "route 'ns/cold' is not an object"),
        (
            {"ns/cold": {"Concurrency": -1}},
            "ns/cold",
            "ns/cold.Concurrency is not a non-negative integer: -1",
        ),
        (
            {"ns/cold": {"Concurrency": 1.5}},
            "ns/cold",
            "ns/cold.Concurrency is not a non-negative integer: 1.5",
        ),
    ],
)
def test_a_malformed_queue_answer_is_refused_naming_the_field(
    document: object, key: str | None, names: str
) -> None:
    with pytest.raises(ValueError, match=r"^queue: ") as caught:
        load.held_count(document, key=key)
    assert names in str(caught.value)
