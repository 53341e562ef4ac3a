"""Operator settings: one frozen value, read from flags with environment fallbacks.

Every flag has an environment variable (``NOCTAYA_<FLAG>``, dashes as underscores) so the install
manifest can set them either way; a flag wins over its variable. Bad values are a usage error naming the
flag, never a traceback. Every wait and bound the operator uses is here, with its default.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import socket
from collections.abc import Mapping, Sequence
from typing import Final

from noctaya import __version__
from noctaya.api import gatewaymemory
from noctaya.contract import fields

ENV_PREFIX: Final = "NOCTAYA_"
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


@dataclasses.dataclass(frozen=True, kw_only=True)
class OperatorSettings:
    """Everything that shapes one operator process."""

    namespaces: tuple[str, ...] = ()  # watched namespaces; empty: cluster-wide
    gateway_image: str = f"ghcr.io/noctaya/noctaya:{__version__}"  # the same image runs the gateway
    default_gateway_replicas: int = 1
    # the gateways' memory bounds where an LLMService sets none (lowered to fit a smaller memory limit)
    gateway_max_queued_body_bytes: int = gatewaymemory.DEFAULTS.max_queued_body_bytes
    gateway_max_connections: int = gatewaymemory.DEFAULTS.max_connections
    gateway_websocket_max_open: int = gatewaymemory.DEFAULTS.websocket_max_open
    gateway_websocket_max_message_bytes: int = gatewaymemory.DEFAULTS.websocket_max_message_bytes
    field_manager: str = "noctaya-operator"
    # leader election
    lease_name: str = "noctaya-operator"
    lease_namespace: str = "noctaya-system"
    identity: str = dataclasses.field(default_factory=socket.gethostname)
    lease_duration: float = 15.0  # a standby takes over this long after the last renewal
    renew_deadline: float = 10.0  # the leader steps down when it could not renew for this long
    retry_period: float = 2.0  # renew and acquisition attempt interval
    leader_election: bool = True  # off: a single replica reconciles without a Lease
    # reconciliation
    workers: int = 4  # concurrent reconciles (distinct LLMServices; one at a time per service)
    requeue_max_backoff: float = 300.0  # ceiling of the per-service retry backoff
    requeue_base_backoff: float = 1.0
    keda_recheck: float = 30.0  # how often a service waiting for the ScaledObject CRD is retried
    resync_period: float = 600.0  # every service is reconciled at least this often (drift repair)
    request_timeout: float = 30.0  # per Kubernetes API request
    render_timeout: float = 60.0  # per chart synthesis on the jsii thread
    # serving
    health_listen: str = ":8081"  # /healthz and /metrics; empty disables
    log_format: str = "text"  # text | json
    log_level: str = "INFO"
    kubeconfig: str | None = None  # None: in-cluster, then ~/.kube/config
    server: str | None = None  # explicit API server URL (tests, port-forwards); overrides kubeconfig

    def __post_init__(self) -> None:
        problems: list[str] = []
        for ns in self.namespaces:
            if not _DNS_LABEL.fullmatch(ns):
                problems.append(f"--namespace: {ns!r} is not a valid namespace name")
        if not self.gateway_image.strip():
            problems.append("--gateway-image: must not be empty")
        if self.default_gateway_replicas < 1:
            problems.append("--default-gateway-replicas: must be >= 1")
        for flag, value, ceiling in (
            (
                "max-queued-body-bytes",
                self.gateway_max_queued_body_bytes,
                gatewaymemory.MAX_QUEUED_BODY_BYTES,
            ),
            ("max-connections", self.gateway_max_connections, gatewaymemory.MAX_CONNECTIONS),
            ("websocket-max-open", self.gateway_websocket_max_open, gatewaymemory.MAX_CONNECTIONS),
            (
                "websocket-max-message-bytes",
                self.gateway_websocket_max_message_bytes,
                gatewaymemory.MAX_MESSAGE_BYTES,
            ),
        ):
            if not 1 <= value <= ceiling:
                problems.append(f"--gateway-{flag}: must be in 1..{ceiling}, got {value}")
        if not (0 < self.retry_period < self.renew_deadline < self.lease_duration):
            problems.append(
                "--lease-retry-period < --lease-renew-deadline < --lease-duration must hold, all > 0"
            )
        if not _DNS_LABEL.fullmatch(self.lease_namespace):
            problems.append(f"--lease-namespace: {self.lease_namespace!r} is not a valid namespace name")
        if not self.lease_name or len(self.lease_name) > 253:
            problems.append("--lease-name: must be 1..253 characters")
        if not self.identity:
            problems.append("--identity: must not be empty")
        if self.workers < 1:
            problems.append("--workers: must be >= 1")
        if not (0 < self.requeue_base_backoff <= self.requeue_max_backoff):
            problems.append("--requeue-base-backoff must be > 0 and <= --requeue-max-backoff")
        if min(self.keda_recheck, self.request_timeout, self.resync_period, self.render_timeout) <= 0:
            problems.append(
                "--keda-recheck, --resync-period, --request-timeout, --render-timeout must be > 0"
            )
        if self.log_format not in {"text", "json"}:
            problems.append("--log-format: must be 'text' or 'json'")
        if self.health_listen:
            try:
                fields.ListenAddress.parse(self.health_listen)
            except ValueError as exc:
                problems.append(f"--health-listen: {exc}")
        if problems:
            raise ValueError("; ".join(problems))


def gateway_bounds(settings: OperatorSettings) -> gatewaymemory.Bounds:
    """The gateways' memory bounds from ``--gateway-*`` (what an LLMService does not set itself)."""
    return gatewaymemory.Bounds(**{key: getattr(settings, f"gateway_{key}") for key in gatewaymemory.KEYS})


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="noctaya operator",
        description=(
            "Reconcile LLMServices into owned Kubernetes objects and report their status. "
            f"Every flag can also be set as an environment variable {ENV_PREFIX}<FLAG>, e.g. "
            f"{ENV_PREFIX}GATEWAY_IMAGE."
        ),
    )
    p.add_argument(
        "--namespace",
        "-n",
        action="append",
        dest="namespaces",
        metavar="NS",
        help="watch this namespace (repeatable, or comma-separated); default: all namespaces",
    )
    p.add_argument(
        "--gateway-image",
        help=f"image of gateways and aggregate scalers (default {OperatorSettings.gateway_image})",
    )
    p.add_argument(
        "--default-gateway-replicas",
        type=int,
        help="gateways per LLMService unless the service sets spec.endpoint.replicas (default 1)",
    )
    for key, attribute in gatewaymemory.KEYS.items():
        flag = re.sub(r"(?<!^)(?=[A-Z])", "-", attribute).lower()
        p.add_argument(
            f"--gateway-{flag}",
            type=int,
            dest=f"gateway_{key}",
            metavar="N",
            help=f"the gateways' {attribute} where an LLMService sets no spec.endpoint.{attribute}; lowered "
            f"to fit a smaller gateway memory limit (default {getattr(gatewaymemory.DEFAULTS, key)}"
            + (" bytes)" if key.endswith("_bytes") else ")"),
        )
    p.add_argument("--field-manager", help="server-side apply field manager (default noctaya-operator)")
    p.add_argument("--lease-name", help="Lease used for leader election (default noctaya-operator)")
    p.add_argument(
        "--lease-namespace", help="namespace of the Lease (default: the pod's namespace, else noctaya-system)"
    )
    p.add_argument("--identity", help="this replica's identity in the Lease (default: hostname)")
    p.add_argument(
        "--lease-duration",
        type=float,
        help="a standby takes over this long after the last renewal, in seconds (default 15)",
    )
    p.add_argument(
        "--lease-renew-deadline",
        type=float,
        dest="renew_deadline",
        help="the leader steps down after failing to renew this long, in seconds (default 10)",
    )
    p.add_argument(
        "--lease-retry-period",
        type=float,
        dest="retry_period",
        help="interval of renewals and acquisition attempts, in seconds (default 2)",
    )
    p.add_argument(
        "--no-leader-election",
        action="store_false",
        dest="leader_election",
        default=None,
        help="reconcile without a Lease, one replica only (default: leader election on)",
    )
    p.add_argument("--workers", type=int, help="concurrent reconciles (default 4)")
    p.add_argument("--request-timeout", type=float, help="seconds per Kubernetes API request (default 30)")
    p.add_argument("--render-timeout", type=float, help="seconds per chart synthesis (default 60)")
    p.add_argument(
        "--resync-period", type=float, help="seconds between full resyncs that repair drift (default 600)"
    )
    p.add_argument(
        "--keda-recheck",
        type=float,
        help="seconds between checks for the KEDA CRD while a service waits for it (default 30)",
    )
    p.add_argument("--health-listen", help="[host]:port of /healthz and /metrics (default :8081; '' off)")
    p.add_argument("--log-format", choices=["text", "json"], help="log line format (default text)")
    p.add_argument(
        "--log-level", choices=["DEBUG", "INFO", "WARNING", "ERROR"], help="log level (default INFO)"
    )
    p.add_argument("--kubeconfig", help="kubeconfig file (default: in-cluster, then ~/.kube/config)")
    p.add_argument(
        "--server", help="API server URL overriding the kubeconfig, for local runs (default: unset)"
    )
    return p


def _from_env(env: Mapping[str, str]) -> dict[str, object]:
    values: dict[str, object] = {}
    flag_names = {
        "namespaces": "NAMESPACE",
        "renew_deadline": "LEASE_RENEW_DEADLINE",
        "retry_period": "LEASE_RETRY_PERIOD",
        "leader_election": "LEADER_ELECTION",
    }
    for field in dataclasses.fields(OperatorSettings):
        var = ENV_PREFIX + flag_names.get(field.name, field.name.upper())
        raw = env.get(var)
        if raw is None:
            continue
        values[field.name] = raw
    return values


_FIELD_TYPES: Final[dict[str, str]] = {f.name: str(f.type) for f in dataclasses.fields(OperatorSettings)}


def _convert(name: str, raw: object) -> object:
    if name == "namespaces":
        items = raw if isinstance(raw, list) else [raw]
        return tuple(ns.strip() for item in items for ns in str(item).split(",") if ns.strip())
    if name == "leader_election" and isinstance(raw, str):
        if raw.lower() not in {"true", "false", "1", "0", "yes", "no"}:
            raise ValueError(f"{ENV_PREFIX}LEADER_ELECTION: {raw!r} is not a boolean")
        return raw.lower() in {"true", "1", "yes"}
    kind = _FIELD_TYPES.get(name)
    if kind == "int":
        return int(str(raw))
    if kind == "float":
        return float(str(raw))
    return raw


def load(argv: Sequence[str], *, env: Mapping[str, str] | None = None) -> OperatorSettings:
    """Parse flags over environment variables; raises ``SystemExit(2)`` with a message on bad input."""
    env = os.environ if env is None else env
    parser = _parser()
    args = vars(parser.parse_args(list(argv)))
    values = _from_env(env)
    values.update({k: v for k, v in args.items() if v is not None})
    if "lease_namespace" not in values and env.get("POD_NAMESPACE"):
        values["lease_namespace"] = env["POD_NAMESPACE"]
    try:
        converted = {name: _convert(name, raw) for name, raw in values.items()}
        return OperatorSettings(**converted)  # type: ignore[arg-type]
    except (TypeError, ValueError) as e:
        parser.error(str(e))
