"""Operator settings from flags and environment variables.

Aspects: defaults; every flag; environment fallbacks with flags winning; POD_NAMESPACE for the Lease;
comma-separated namespaces; bad values are usage errors naming the flag.
"""

from __future__ import annotations

import pytest

from noctaya.api import gatewaymemory
from noctaya.operator import reconciliation, settings


def test_defaults() -> None:
    s = settings.load([], env={})
    assert s.namespaces == () and s.default_gateway_replicas == 1 and s.leader_election
    assert (s.lease_name, s.lease_namespace) == ("noctaya-operator", "noctaya-system")
    assert s.retry_period < s.renew_deadline < s.lease_duration
    assert s.health_listen == ":8081" and s.log_format == "text"


def test_flags() -> None:
    s = settings.load(
        [
            "-n",
            "ai",
            "--namespace",
            "ml,prod",
            "--gateway-image",
            "img:1",
            "--default-gateway-replicas",
            "3",
            "--lease-name",
            "l",
            "--lease-namespace",
            "ops",
            "--lease-duration",
            "30",
            "--lease-renew-deadline",
            "20",
            "--lease-retry-period",
            "5",
            "--workers",
            "8",
            "--log-format",
            "json",
            "--no-leader-election",
            "--identity",
            "me",
            "--health-listen",
            "127.0.0.1:9000",
        ],
        env={},
    )
    assert s.namespaces == ("ai", "ml", "prod")
    assert (s.gateway_image, s.default_gateway_replicas, s.workers) == ("img:1", 3, 8)
    assert (s.lease_name, s.lease_namespace, s.identity) == ("l", "ops", "me")
    assert (s.lease_duration, s.renew_deadline, s.retry_period) == (30, 20, 5)
    assert not s.leader_election and s.log_format == "json"
    assert s.health_listen == "127.0.0.1:9000"


def test_environment_and_precedence() -> None:
    env = {
        "NOCTAYA_GATEWAY_IMAGE": "env:1",
        "NOCTAYA_NAMESPACE": "a,b",
        "NOCTAYA_LEADER_ELECTION": "false",
        "NOCTAYA_LEASE_DURATION": "20",
        "POD_NAMESPACE": "noctaya",
        "NOCTAYA_RESYNC_PERIOD": "120",
        "NOCTAYA_WORKERS": "6",
        "NOCTAYA_RENDER_TIMEOUT": "5",
    }
    s = settings.load(["--gateway-image", "flag:1"], env=env)
    assert s.gateway_image == "flag:1" and s.namespaces == ("a", "b")
    assert not s.leader_election and s.lease_duration == 20 and s.lease_namespace == "noctaya"
    assert (s.resync_period, s.workers, s.render_timeout) == (120.0, 6, 5.0)
    assert (s.resync_period, s.workers, s.render_timeout) == (120.0, 6, 5.0)


@pytest.mark.parametrize(
    ("argv", "env", "fragment"),
    [
        (["--default-gateway-replicas", "0"], {}, "--default-gateway-replicas"),
        (["--lease-duration", "5", "--lease-renew-deadline", "10"], {}, "--lease-retry-period"),
        (["-n", "Not_A_Namespace"], {}, "--namespace"),
        (["--workers", "0"], {}, "--workers"),
        (["--resync-period", "0"], {}, "--resync-period"),
        (["--resync-period", "0"], {}, "--resync-period"),
        (["--health-listen", "nowhere"], {}, "--health-listen"),
        ([], {"NOCTAYA_LEADER_ELECTION": "maybe"}, "NOCTAYA_LEADER_ELECTION"),
        ([], {"NOCTAYA_WORKERS": "many"}, "many"),
        (["--gateway-max-connections", "0"], {}, "--gateway-max-connections"),
        (
            [],
            {"NOCTAYA_GATEWAY_WEBSOCKET_MAX_MESSAGE_BYTES": str(1 << 30)},
            "--gateway-websocket-max-message",
        ),
    ],
)
def test_bad_values_are_usage_errors(
    argv: list[str], env: dict[str, str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        settings.load(argv, env=env)
    assert exc.value.code == 2
    assert fragment in capsys.readouterr().err


def test_the_gateway_memory_bounds_from_flags_and_environment_reach_the_rendered_gateways() -> None:
    """``--gateway-*`` (or NOCTAYA_GATEWAY_*, what the install and the chart set) are the bounds where an
    LLMService sets none; a lowered maxConnections lowers the per-peer bound with it."""
    s = settings.load(
        ["--gateway-max-connections", "100", "--gateway-websocket-max-open", "2"],
        env={"NOCTAYA_GATEWAY_MAX_QUEUED_BODY_BYTES": "1048576", "NOCTAYA_GATEWAY_MAX_CONNECTIONS": "7"},
    )
    bounds = settings.gateway_bounds(s)
    assert bounds == gatewaymemory.Bounds(
        max_queued_body_bytes=1 << 20,
        max_connections=100,
        websocket_max_open=2,
        websocket_max_message_bytes=4 << 20,
    )
    config = reconciliation.ReconcileConfig(
        gateway_image="i", default_gateway_replicas=1, gateway_bounds=bounds
    )
    gateway = config.gateway_settings
    assert (gateway.max_connections, gateway.max_connections_per_peer, gateway.max_queued_body_bytes) == (
        100,
        100,
        1 << 20,
    )
    assert settings.gateway_bounds(settings.load([], env={})) == gatewaymemory.DEFAULTS
