"""A listener's connection bounds, as the gateway file and the aggregate scaler file both carry them.

Aspects: the four keys mean the same in both files (one description, one floor, one rule that the
per-address bound stays within the overall one, with the same message naming both keys), while each
file keeps its own defaults and its own ceiling.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import annotated_types
import pydantic
import pytest

from noctaya.contract import documents, fields
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract

KEYS = ("headerTimeout", "keepAliveTimeout", "maxConnections", "maxConnectionsPerPeer")
GATEWAY: dict[str, Any] = {"backendUrl": "http://b"}
SCALER: dict[str, Any] = {"service": {"name": "qwen", "namespace": "ai"}}
Build = Callable[[dict[str, Any]], fields.Model]


def _gateway(document: dict[str, Any]) -> fields.Model:
    return gateway_contract.build_config({**GATEWAY, **document})


def _scaler(document: dict[str, Any]) -> fields.Model:
    return scaler_contract.build_config({**SCALER, **document})


FILES = pytest.mark.parametrize(
    ("build", "ceiling"),
    [(_gateway, gateway_contract.MAX_CONNECTIONS), (_scaler, scaler_contract.MAX_REPORT_CONNECTIONS)],
    ids=["gateway", "scaler"],
)


@FILES
@pytest.mark.parametrize(
    ("document", "message"),
    [
        (
            {"maxConnections": 8, "maxConnectionsPerPeer": 9},
            "maxConnectionsPerPeer: must not exceed maxConnections",
        ),
        ({"maxConnections": 0}, "maxConnections: Input should be greater than or equal to 1"),
        ({"maxConnectionsPerPeer": 0}, "maxConnectionsPerPeer: Input should be greater than or equal to 1"),
        ({"headerTimeout": "0s"}, "headerTimeout: Input should be greater than 0"),
        ({"keepAliveTimeout": -1}, "keepAliveTimeout: duration -1 is out of range (0 to one year)"),
        ({"keepAliveTimeout": "soon"}, "keepAliveTimeout: invalid duration 'soon'"),
    ],
)
def test_each_file_refuses_the_same_bounds(
    build: Build, ceiling: int, document: dict[str, Any], message: str
) -> None:
    with pytest.raises(documents.ConfigError) as caught:
        build(document)
    assert str(caught.value).startswith(message)


@FILES
def test_each_file_has_its_own_ceiling(build: Build, ceiling: int) -> None:
    config = build({"maxConnections": ceiling, "maxConnectionsPerPeer": ceiling})
    assert config.document()["maxConnections"] == ceiling
    for key in ("maxConnections", "maxConnectionsPerPeer"):
        with pytest.raises(documents.ConfigError) as caught:
            build({"maxConnections": ceiling, key: ceiling + 1})
        assert str(caught.value) == f"{key}: Input should be less than or equal to {ceiling}"


def test_each_file_keeps_its_defaults() -> None:
    assert [_gateway({}).document()[key] for key in KEYS] == ["10s", "1m0s", 1024, 256]
    assert [_scaler({}).document()[key] for key in KEYS] == ["5s", "30s", 512, 64]


def test_the_keys_mean_the_same_in_both_files() -> None:
    for key in KEYS:
        name = next(
            name for name, field in gateway_contract.GatewayConfig.model_fields.items() if field.alias == key
        )
        ours, theirs = (
            gateway_contract.GatewayConfig.model_fields[name],
            scaler_contract.ScalerConfig.model_fields[name],
        )
        assert ours.description and ours.description == theirs.description
        assert _floor(ours) == _floor(theirs) and _floor(ours)  # the ceiling is each file's own


def _floor(field: pydantic.fields.FieldInfo) -> list[str]:
    """A field's constraints and checks but its ceiling."""
    return [repr(item) for item in field.metadata if not isinstance(item, annotated_types.Le)]


def test_a_renderer_is_held_to_the_same_rule() -> None:
    """``wire``, as the constructs use it, validates the bounds across the wiring and the settings."""
    with pytest.raises(ValueError, match="maxConnectionsPerPeer: must not exceed maxConnections"):
        scaler_contract.ScalerConfig.wire(
            settings=scaler_contract.ExternalScalerSettings(),
            service=SCALER["service"],
            max_connections=4,
            max_connections_per_peer=5,
        )
    with pytest.raises(ValueError, match="maxConnectionsPerPeer: must not exceed maxConnections"):
        gateway_contract.GatewayConfig.wire(
            settings=gateway_contract.GatewaySettings(max_connections=4, max_connections_per_peer=4),
            backend_url="http://b",
            max_connections_per_peer=5,
        )
