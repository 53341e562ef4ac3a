"""Every setting is a flag, named by one rule in every command that takes it.

Aspects: the rule (attribute path, dashes for underscores); every gateway tunable is the same flag in
``noctaya gateway`` and ``noctaya dev``, each help stating its default (a structured one as the JSON
the flag takes, ``%`` escaped for argparse); a bad option is named by its flag.
"""

from __future__ import annotations

import json

import pytest

from noctaya.contract import flags
from noctaya.contract import gateway as gateway_contract
from noctaya.dev import command as dev_command
from noctaya.process import gateway as gateway_process


def test_the_rule() -> None:
    assert flags.flag(["max_queue"]) == "--max-queue"
    assert flags.flag(["service", "name"]) == "--service-name"
    assert flags.flag(["scaler", "tls", "cert_file"]) == "--scaler-tls-cert-file"


def test_every_gateway_tunable_is_the_same_flag_in_both_commands() -> None:
    gateway_options = gateway_process.build_parser()._option_string_actions
    dev_options = dev_command.build_parser()._option_string_actions
    for name in gateway_contract.GatewaySettings.model_fields:
        option = flags.flag([name])
        assert option in gateway_options, option
        assert option in dev_options, option
    routes = gateway_options["--cold-routes"].help or ""
    shown = routes.partition("(default ")[2].removesuffix(")")
    assert json.loads(shown.replace("%%", "%"))[0]["path"] == "/v1/models"


def test_a_bad_option_is_named_by_its_flag() -> None:
    args = dev_command.build_parser().parse_args(["--max-queue", "0", "--heartbeat-interval", "soon"])
    with pytest.raises(ValueError) as caught:
        dev_command.settings_from_args(args)
    message = str(caught.value)
    assert "--max-queue: " in message and "--heartbeat-interval: " in message
