"""``noctaya dev``: gateway, scaler, a local KEDA and local backend replicas on this machine.

Point any OpenAI client at the printed URL and watch the backend go 0 -> 1 -> N -> 0. Every option
has a default that works out of the box with the built-in fake engine; ``--backend-cmd`` runs a real
OpenAI-compatible server instead (``{port}`` is replaced by the port each replica must listen on).
Exit codes: 0 after Ctrl-C / SIGTERM, 2 for bad options, 1 when a part does not start.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import shlex
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import pydantic

from noctaya.contract import documents, engines, fields, flags
from noctaya.contract import gateway as gateway_contract
from noctaya.contract import scaler as scaler_contract
from noctaya.dev import certificates, gateways, replicas, view

if TYPE_CHECKING:  # imported when the runner starts: gRPC must see GRPC_ENABLE_FORK_SUPPORT first
    from noctaya.dev import keda, runner

DESCRIPTION = (
    "Run gateway(s), the ExternalScaler, a local KEDA and backend replicas as local processes: point an "
    "OpenAI client at the printed URL and watch the backend scale 0 -> 1 -> N -> 0."
)
DEFAULT_BACKEND = (
    f"{shlex.quote(sys.executable)} -m noctaya.dev.fake_engine --port {{port}} "
    "--ready-delay 2s --tokens 16 --token-delay 50ms"
)

#: every gateway tunable is a flag (``maxQueue`` -> ``--max-queue``); these defaults differ here
DEV_GATEWAY_DEFAULTS: dict[str, Any] = {"drain_timeout": 10.0}
#: gateway tunables with a flag of their own above (the replicas probe the same readiness path)
OWN_FLAGS = {"readiness_path"}
#: the runner writes the file of Ready replicas into its run directory and puts its path here
ENDPOINTS_PLACEHOLDER: Final = "engines"
DEFAULT_KV_METRICS: Final = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")


def _gateway_help(name: str) -> str:
    field = gateway_contract.GatewaySettings.model_fields[name]
    return "gateway: " + flags.describe(field, default=DEV_GATEWAY_DEFAULTS.get(name, field.default))


def _duration(text: str) -> float:
    try:
        return fields.parse_seconds(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _count(low: int, high: int) -> Any:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="noctaya dev", description=DESCRIPTION)
    p.add_argument(
        "--backend-cmd",
        default=DEFAULT_BACKEND,
        help="command of one backend replica, with {port} (default: the built-in fake engine)",
    )
    p.add_argument(
        "--readiness-path",
        default="/health",
        help="backend path that answers 200 once ready (default /health)",
    )
    p.add_argument(
        "--listen", default="127.0.0.1:8080", help="where clients connect (default 127.0.0.1:8080)"
    )
    p.add_argument(
        "--min",
        type=_count(0, replicas.MAX_REPLICAS),
        default=0,
        help="fewest backend replicas, KEDA's minReplicaCount (default 0)",
    )
    p.add_argument(
        "--max",
        type=_count(1, replicas.MAX_REPLICAS),
        default=3,
        help="most backend replicas, KEDA's maxReplicaCount (default 3)",
    )
    p.add_argument(
        "--target",
        type=_count(1, 1_000_000),
        default=10,
        help="per-replica demand target for 1 -> N (default 10)",
    )
    p.add_argument(
        "--metric",
        choices=("queueDepth", "kvCacheUtil"),
        default="queueDepth",
        help="scaling metric, as spec.scaling.metric: kvCacheUtil reads the replicas' KV-cache use "
        "(default queueDepth)",
    )
    p.add_argument(
        "--engine-queue-target",
        type=_count(1, 1_000_000),
        default=None,
        help="also scale on the engines' own waiting queue, this many per replica, read from every "
        "Ready replica's metrics (default: not read)",
    )
    p.add_argument(
        "--kv-cache-target",
        type=_count(1, 100),
        default=80,
        help="with --metric kvCacheUtil, the KV-cache use per replica in percent (default 80)",
    )
    p.add_argument(
        "--engine-queue-metric",
        default="vllm:num_requests_waiting",
        help="the engines' waiting-requests gauge (default vllm:num_requests_waiting; llama.cpp: "
        "llamacpp:requests_deferred)",
    )
    p.add_argument(
        "--engine-kv-metric",
        action="append",
        default=None,
        help="the engines' KV-cache use gauge, repeatable, the first exported counts "
        "(default vllm:kv_cache_usage_perc, then vllm:gpu_cache_usage_perc)",
    )
    p.add_argument(
        "--engine-metrics-path", default="/metrics", help="the replicas' metrics path (default /metrics)"
    )
    p.add_argument(
        "--engine-interval",
        default="1s",
        help="how often every Ready replica's metrics are read, a duration (default 1s)",
    )
    p.add_argument(
        "--cooldown", type=_duration, default=30.0, help="idle time before 1 -> 0, a duration (default 30s)"
    )
    p.add_argument(
        "--polling-interval",
        type=_duration,
        default=5.0,
        help="KEDA polling interval, a duration (default 5s)",
    )
    p.add_argument(
        "--scale-down-window",
        type=_duration,
        default=None,
        help="HPA scale-down stabilization window, a duration (default: the cooldown)",
    )
    p.add_argument(
        "--schedule",
        action="append",
        default=[],
        metavar="SPEC",
        help="a warm window, as spec.scaling.schedules[] takes it (repeatable): "
        "'start=0 8 * * 1-5; duration=10h; timezone=Europe/Berlin; minReplicas=1' (or end=CRON, name=N) "
        "or the same as a JSON object; default: none (no warm window)",
    )
    p.add_argument(
        "--gateways",
        type=_count(1, 16),
        default=1,
        help="gateway processes; more than 1 also runs the aggregate scaler (default 1)",
    )
    p.add_argument(
        "--scaler-tls",
        action="store_true",
        help="run the ExternalScaler with mutual TLS, throwaway certificates (default: plaintext)",
    )
    p.add_argument("--service-name", default="dev", help="LLMService / ScaledObject name (default dev)")
    p.add_argument("--namespace", default="default", help="namespace of that LLMService (default default)")
    p.add_argument(
        "--member-ttl",
        default="10s",
        help="aggregate scaler member expiry, a duration (default 10s); the gateways report at least 4 "
        "times per expiry (every 2s, or a quarter of it when shorter)",
    )
    p.add_argument(
        "--replica-drain-timeout",
        type=_duration,
        default=30.0,
        help="longest wait for a replica's connections on scale-down, a duration (default 30s)",
    )
    p.add_argument(
        "--crash-loop-exits",
        type=_count(0, 100),
        default=3,
        help="replica exits in a row, none Ready, after which waiting clients get the last exit's "
        "code and output line at once instead of waiting out --activation-timeout (default 3; 0: never)",
    )
    p.add_argument(
        "--state-file",
        type=pathlib.Path,
        default=None,
        help="keep a JSON snapshot of the live state in this file (default: none)",
    )
    p.add_argument(
        "--run-dir",
        type=pathlib.Path,
        default=None,
        help="where logs and configs go, kept at exit (default: a temporary directory, removed at exit)",
    )
    p.add_argument(
        "--keep-run-dir",
        action="store_true",
        help="keep the temporary run directory at exit and print where it is (default: remove it)",
    )
    p.add_argument(
        "--plain",
        action="store_true",
        help="line-based status even on a terminal (default: live on a terminal)",
    )
    p.add_argument(
        "--log-level",
        default="WARNING",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="log level of the gateway and scaler processes, logged into the run dir (default %(default)s)",
    )
    p.add_argument(
        "--api-key-file",
        default=None,
        help="gateway: require 'Authorization: Bearer <key>' with the key in FILE (default: no key)",
    )
    for name in gateway_contract.GatewaySettings.model_fields:
        if name not in OWN_FLAGS:
            p.add_argument(flags.flag([name]), default=None, metavar="VALUE", help=_gateway_help(name))
    return p


def settings_from_args(args: argparse.Namespace) -> runner.Settings:
    """Options to settings; raises ``ValueError`` naming the option."""
    from noctaya.dev import keda, runner

    if args.min > args.max:
        raise ValueError(f"--min {args.min} is above --max {args.max}")
    try:
        replicas.render_command(args.backend_cmd, port=1)
    except ValueError as exc:
        raise ValueError(f"--backend-cmd: {exc}") from None
    try:
        host, port = fields.ListenAddress.parse(args.listen)
    except ValueError as exc:
        raise ValueError(f"--listen: {exc}") from None
    if port == 0:
        raise ValueError("--listen needs a fixed port (clients must know it)")
    service = {"name": args.service_name, "namespace": args.namespace}
    try:  # the fields the scaler (and every gateway) reads, checked here rather than by a child
        scaler_contract.ScalerConfig.model_validate({"service": service, "memberTtl": args.member_ttl})
    except pydantic.ValidationError as exc:
        raise ValueError(documents.describe_errors(exc, where=_scaler_option, separator="; ")) from None
    tunables: dict[str, Any] = {**DEV_GATEWAY_DEFAULTS, "readiness_path": args.readiness_path}
    for name, field in gateway_contract.GatewaySettings.model_fields.items():
        value = getattr(args, name, None) if name not in OWN_FLAGS else None
        if value is not None and isinstance(field.default, tuple | list | dict):
            try:  # a structured setting (--cold-routes) is given as JSON
                value = json.loads(value)
            except ValueError as exc:
                raise ValueError(f"{flags.flag([name])}: not JSON ({exc})") from None
        if value is not None:
            tunables[name] = value
    # check the gateway options now, so a bad one is reported here and not by a child process
    try:
        gateway = gateway_contract.GatewaySettings.model_validate(tunables)
    except pydantic.ValidationError as exc:
        raise ValueError(f"gateway options: {_flag_errors(exc)}") from None
    try:
        gateway_contract.GatewayConfig.wire(
            settings=gateway, backend_url="http://127.0.0.1:1", api_key_file=args.api_key_file
        )
    except pydantic.ValidationError as exc:
        raise ValueError(f"--api-key-file: {_flag_errors(exc)}") from None
    drain = gateway.drain_timeout
    windows = tuple(
        _schedule(text, index=index, max_replicas=args.max) for index, text in enumerate(args.schedule)
    )
    scaling = keda.Scaling(
        name=args.service_name,
        namespace=args.namespace,
        min_replicas=args.min,
        max_replicas=args.max,
        polling_interval=max(args.polling_interval, 0.05),
        cooldown=args.cooldown,
        scale_down_window=args.cooldown if args.scale_down_window is None else args.scale_down_window,
        schedules=windows,
        metric_name=args.metric,
    )
    return runner.Settings(
        backend_cmd=args.backend_cmd,
        listen_host=host,
        listen_port=port,
        readiness_path=args.readiness_path,
        gateways=args.gateways,
        scaling=scaling,
        target=args.target,
        gateway=gateway,
        api_key_file=args.api_key_file,
        scaler_tls=args.scaler_tls,
        member_ttl=args.member_ttl,
        replica_drain_timeout=args.replica_drain_timeout,
        crash_loop_exits=args.crash_loop_exits,
        gateway_stop_grace=drain + 5.0,
        run_dir=args.run_dir,
        keep_run_dir=args.keep_run_dir,
        state_file=args.state_file,
        log_level=args.log_level,
        engine=_engine_signal(args),
    )


def _engine_signal(args: argparse.Namespace) -> engines.EngineSignalSection | None:
    """The engine section the scaler reads the local replicas with (None: the gateways' count alone)."""
    kv = args.metric == "kvCacheUtil"
    if not kv and args.engine_queue_target is None:
        return None
    queue = args.engine_queue_target is not None
    try:
        interval = fields.parse_seconds(args.engine_interval)
    except ValueError as exc:
        raise ValueError(f"--engine-interval: {exc}") from None
    try:
        return engines.EngineSignalSection(
            endpoints_file=ENDPOINTS_PLACEHOLDER,
            path=args.engine_metrics_path,
            interval=interval,
            timeout=min(1.0, 2 * interval),  # a read ends before its round is stale
            queue_metrics=(args.engine_queue_metric,) if queue else (),
            queue_target=float(args.engine_queue_target) if queue else None,
            kv_cache_metrics=tuple(args.engine_kv_metric or DEFAULT_KV_METRICS) if kv else (),
            kv_cache_target=args.kv_cache_target / 100 if kv else None,
        )
    except pydantic.ValidationError as exc:
        raise ValueError(documents.describe_errors(exc, where=_engine_option, separator="; ")) from None


SCALER_FLAGS: Final = {
    ("service", "name"): "--service-name",
    ("service", "namespace"): "--namespace",
    ("memberTtl",): "--member-ttl",
}
"""The flag each scaler field ``noctaya dev`` sets comes from (a problem names the flag the user typed)."""


def _scaler_option(location: tuple[int | str, ...]) -> str:
    for place, flag in SCALER_FLAGS.items():
        if location[: len(place)] == place:
            return flag
    return f"scaler options: {documents.dotted(location)}"


ENGINE_FLAGS: Final = {
    "path": "--engine-metrics-path",
    "interval": "--engine-interval",
    "timeout": "--engine-interval",  # derived from it
    "queue_metrics": "--engine-queue-metric",
    "queue_target": "--engine-queue-target",
    "kv_cache_metrics": "--engine-kv-metric",
    "kv_cache_target": "--kv-cache-target",
}
"""The flag each field of the engine section comes from (a problem names the flag the user typed)."""


def _engine_option(location: tuple[int | str, ...]) -> str:
    """The flag a problem of the engine section names (its value's place in a repeated flag too)."""
    head = str(location[0])
    name = next(
        (n for n, f in engines.EngineSignalSection.model_fields.items() if head in (n, f.alias)), head
    )
    flag = ENGINE_FLAGS.get(name)
    if flag is None:
        return f"engine options: {documents.dotted(location)}"
    index = location[1] if len(location) > 1 and isinstance(location[1], int) else None
    return flag if index is None or name != "kv_cache_metrics" else f"{flag} #{index + 1}"


def _schedule(text: str, *, index: int, max_replicas: int) -> keda.CronTrigger:
    """One ``--schedule``, checked exactly as ``spec.scaling.schedules[]`` is; ``ValueError`` says why."""
    from noctaya.api import cron, llmservice
    from noctaya.dev import keda

    flag = f"--schedule {text!r}"
    document: object
    if text.lstrip().startswith("{"):
        try:
            document = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"{flag}: not JSON ({exc})") from None
    else:
        pairs: dict[str, object] = {}
        document = pairs
        for item in text.split(";"):
            if not item.strip():
                continue
            key, equals, value = item.partition("=")
            if not equals:
                raise ValueError(f"{flag}: {item.strip()!r} is not key=value")
            pairs[key.strip()] = value.strip()
    if isinstance(document, dict):
        document.setdefault("name", f"schedule-{index}")
        if "minReplicas" in document:
            document["minReplicas"] = _replicas(document["minReplicas"], flag=flag)
    try:
        schedule = llmservice.Schedule.model_validate(document)
    except pydantic.ValidationError as exc:
        raise ValueError(f"{flag}: {documents.describe_errors(exc, separator='; ')}") from None
    if schedule.min_replicas > max_replicas:
        raise ValueError(f"{flag}: minReplicas {schedule.min_replicas} is above --max {max_replicas}")
    return keda.CronTrigger(
        name=schedule.name,
        start=cron.Expression.parse(schedule.start),
        end=cron.Expression.parse(schedule.end_expression),
        zone=cron.zone(schedule.timezone),
        desired_replicas=schedule.min_replicas,
    )


def _replicas(value: object, *, flag: str) -> object:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"{flag}: minReplicas {value!r} is not a whole number") from None
    return value


def _flag_errors(error: pydantic.ValidationError) -> str:
    """``--max-queue: Input should be ...`` for each bad gateway option."""
    return documents.describe_errors(error, where=_gateway_option, separator="; ")


def _gateway_option(location: tuple[int | str, ...]) -> str:
    """The option a problem's location names: a gateway setting's flag, else the location."""
    names = {field.alias: name for name, field in gateway_contract.GatewaySettings.model_fields.items()}
    head = str(location[0])
    name = names.get(head, head)
    return (
        flags.flag([name])
        if name in gateway_contract.GatewaySettings.model_fields
        else documents.dotted(location)
    )


async def _main(settings: runner.Settings, out: view.View) -> int:
    from noctaya.dev import runner

    stop = asyncio.Event()
    runner.install_stop_signals(stop)
    dev = runner.DevRunner(settings=settings, out=out)
    try:
        return await dev.run(stop)
    except BaseExceptionGroup as group:
        failures, rest = group.split((gateways.StartError, certificates.CertificateError, OSError))
        if rest is not None or failures is None:
            raise
        for exc in _leaves(failures):
            print(f"noctaya dev: {exc}", file=sys.stderr)
        return 1


def _leaves(group: BaseExceptionGroup[BaseException]) -> list[BaseException]:
    found: list[BaseException] = []
    for exc in group.exceptions:
        found.extend(_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    return found


def main(argv: Sequence[str]) -> int:
    # replicas and gateways are started with fork+exec while gRPC threads run: gRPC's fork handlers
    # have nothing to protect here and only warn, so they are switched off before gRPC starts
    os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
    parser = build_parser()
    args = parser.parse_args(list(argv))
    try:
        settings = settings_from_args(args)
    except ValueError as exc:
        print(f"noctaya dev: {exc}", file=sys.stderr)
        return 2
    out = view.View(live=False if args.plain else None)
    import uvloop

    return uvloop.run(_main(settings, out))
