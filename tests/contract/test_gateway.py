"""The gateway and scaler files as the contract defines them.

Aspects: every setting documents itself (a description for ``--help`` and the docs); the tunables
and the wiring make one flat file that reads back to the same config; the wiring is validated with
the tunables (a renderer cannot write what the gateway refuses); ``scaler`` and ``report`` are
exclusive and both need ``service``; the co-located scaler and the aggregate scaler share the
ExternalScaler settings, bounds included.
"""

from __future__ import annotations

import pydantic
import pytest

from noctaya.contract import documents, fields
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract

SERVICE = fields.ServiceRef(name="qwen", namespace="ai")


@pytest.mark.parametrize(
    "model",
    [
        gateway_contract.GatewayConfig,
        gateway_contract.ScalerSection,
        gateway_contract.ReportSection,
        scaler_contract.ScalerConfig,
        fields.TlsFiles,
    ],
)
def test_every_setting_is_documented(model: type[pydantic.BaseModel]) -> None:
    for name, field in model.model_fields.items():
        if name in {"scaler", "report"}:
            continue  # sections document themselves
        assert field.description, f"{model.__name__}.{name} has no description"


def test_settings_and_wiring_make_one_file() -> None:
    settings = gateway_contract.GatewaySettings(
        max_queue=7, activation_timeout="90s", cold_start_mode="reject"
    )
    config = gateway_contract.GatewayConfig.wire(
        settings=settings,
        listen=":8080",
        backend_url="http://qwen-backend.ai.svc:8000/",
        service=SERVICE,
        scaler=gateway_contract.ScalerSection(target=3),
    )
    document = config.document()
    assert document["activationTimeout"] == "1m30s" and document["maxQueue"] == 7
    assert document["backendUrl"] == "http://qwen-backend.ai.svc:8000"
    assert document["scaler"]["maxStreams"] == scaler_contract.DEFAULT_MAX_STREAMS
    assert gateway_contract.build_config(document) == config
    assert config.settings == settings


def test_wiring_is_validated_with_the_settings() -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        gateway_contract.GatewayConfig.wire(
            settings=gateway_contract.GatewaySettings(), backend_url="nowhere", listen="8080"
        )
    assert {error["loc"][0] for error in caught.value.errors()} == {"backendUrl", "listen"}


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"scaler": {}, "report": {"url": "http://s", "tokenFile": "/t"}, "service": SERVICE}, "exclusive"),
        ({"scaler": {}}, "service: required"),
        ({"report": {"url": "http://s", "tokenFile": "/t"}}, "service: required"),
        ({"scaler": {"maxStreams": 0}, "service": SERVICE}, "scaler.maxStreams"),
        ({"report": {"url": "http://s?x=1", "tokenFile": "/t"}, "service": SERVICE}, "report.url"),
    ],
)
def test_scaler_sections(document: dict[str, object], problem: str) -> None:
    with pytest.raises(documents.ConfigError, match=problem):
        gateway_contract.build_config({"backendUrl": "http://b", **document})


def test_both_scalers_share_the_external_scaler_settings() -> None:
    shared = set(scaler_contract.ExternalScalerSettings.model_fields)
    assert shared <= set(gateway_contract.ScalerSection.model_fields)
    assert shared <= set(scaler_contract.ScalerConfig.model_fields)
    for name in shared:
        assert repr(gateway_contract.ScalerSection.model_fields[name]) == repr(
            scaler_contract.ScalerConfig.model_fields[name]
        )
