"""The configuration files ``noctaya dev`` writes for its children.

Aspects: with one gateway its config carries the co-located scaler and no report section; with
several, each gateway reports to the aggregate scaler and the scaler's per-member demand bound is
that gateway's own ``maxQueue`` + ``maxInFlight`` (defaults or options); every document is accepted
by the config model of the command that reads it.
"""

from __future__ import annotations

import io
import pathlib

import pytest

from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract
from noctaya.dev import command, runner, view


def dev_runner(tmp_path: pathlib.Path, *argv: str) -> runner.DevRunner:
    args = command.build_parser().parse_args([*argv, "--run-dir", str(tmp_path)])
    out = view.View(out=io.StringIO(), live=False)
    return runner.DevRunner(settings=command.settings_from_args(args), out=out)


def test_one_gateway_runs_the_colocated_scaler(tmp_path: pathlib.Path) -> None:
    dev = dev_runner(tmp_path)
    config = gateway_contract.build_config(dev.gateway_config(port=8080).document())
    assert config.report is None and config.scaler is not None
    assert config.scaler.listen == f"127.0.0.1:{dev.grpc_port}"


@pytest.mark.parametrize(
    ("options", "bound"), [((), 100 + 1000), (("--max-queue", "5", "--max-in-flight", "7"), 12)]
)
def test_member_demand_bound_is_one_gateways_bounds(
    tmp_path: pathlib.Path, options: tuple[str, ...], bound: int
) -> None:
    dev = dev_runner(tmp_path, "--gateways", "3", *options)
    gateway = gateway_contract.build_config(dev.gateway_config(port=8081).document())
    assert gateway.scaler is None and gateway.report is not None
    scaler = scaler_contract.build_config(dev.scaler_config().document())
    assert scaler.max_member_demand == gateway.max_queue + gateway.max_in_flight == bound
    assert scaler.token_file == gateway.report.token_file


@pytest.mark.parametrize(
    ("ttl", "interval"), [((), 2.0), (("--member-ttl", "1s"), 0.25), (("--member-ttl", "4s"), 1.0)]
)
def test_gateways_report_at_least_four_times_per_member_expiry(
    tmp_path: pathlib.Path, ttl: tuple[str, ...], interval: float
) -> None:
    """A member reporting less often than it expires would flap out of the aggregate between reports."""
    dev = dev_runner(tmp_path, "--gateways", "2", *ttl)
    gateway = gateway_contract.build_config(dev.gateway_config(port=8081).document())
    scaler = scaler_contract.build_config(dev.scaler_config().document())
    assert gateway.report is not None
    assert gateway.report.interval == interval <= scaler.member_ttl / 4
