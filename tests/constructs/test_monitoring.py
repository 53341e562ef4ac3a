"""The monitoring objects, checked by the real Prometheus tools and against the NetworkPolicies.

Aspects: ``promtool check rules`` accepts the groups of the rendered PrometheusRule; ``promtool test
rules`` runs a unit test for every alert, firing on the series it is about and silent on healthy ones
(every alert of the rules has both); every scrape the ServiceMonitor asks for (each endpoint port on
each Service it selects) reaches its Pods through every rendered NetworkPolicy from the monitoring
namespace. Prometheus scraping a running gateway and aggregate scaler is ``tests/e2e/test_prometheus.py``.

promtool is Debian's (``scripts/prometheus.sh`` installs it; missing, these tests fail).
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
DIST = ROOT / "dist" / "examples"
LABELS = {"namespace": "llm", "serving_noctaya_io_llmservice": "qwen"}
SERIES = '{namespace="llm",serving_noctaya_io_llmservice="qwen",pod="qwen-gateway-0"}'
EXPIRED = SERIES.replace("}", ',event="expired"}')
SCALER = SERIES.replace("qwen-gateway-0", "qwen-scaler-0")


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool is missing: run `bash scripts/prometheus.sh` (Debian package prometheus)"
    return path


def rule_groups() -> list[dict[str, Any]]:
    docs = yaml.safe_load_all((DIST / "observability" / "monitoring.yaml").read_text())
    rule = next(d for d in docs if d["kind"] == "PrometheusRule")
    groups: list[dict[str, Any]] = rule["spec"]["groups"]
    return groups


def alerts() -> dict[str, dict[str, Any]]:
    return {r["alert"]: r for g in rule_groups() for r in g["rules"] if "alert" in r}


#: per alert: (input series when it must fire, when it must not), the evaluation time, extra labels
CASES: dict[str, tuple[list[tuple[str, str]], list[tuple[str, str]], str, dict[str, str]]] = {
    "NoctayaActivationTimeouts": (
        [("noctaya_gateway_activation_events_total" + EXPIRED, "0 0 0 1 1 1")],
        [
            ("noctaya_gateway_activation_events_total" + EXPIRED, "0x10"),
            ("noctaya_gateway_activation_events_total" + SERIES.replace("}", ',event="started"}'), "0+1x10"),
        ],
        "5m",
        {},
    ),
    "NoctayaColdQueueSaturated": (
        [("noctaya_gateway_pending" + SERIES, "95x10"), ("noctaya_gateway_max_queue" + SERIES, "100x10")],
        [("noctaya_gateway_pending" + SERIES, "50x10"), ("noctaya_gateway_max_queue" + SERIES, "100x10")],
        "5m",
        {},
    ),
    "NoctayaRequestsRejected": (
        [("noctaya_gateway_rejections_total" + SERIES.replace("}", ',reason="queue_full"}'), "0+10x30")],
        [("noctaya_gateway_rejections_total" + SERIES.replace("}", ',reason="queue_full"}'), "7x30")],
        "20m",
        {"reason": "queue_full"},
    ),
    "NoctayaSlowActivation": (
        [
            ("noctaya_gateway_activation_duration_seconds_bucket" + SERIES.replace("}", ',le="60"}'), "0x60"),
            (
                "noctaya_gateway_activation_duration_seconds_bucket" + SERIES.replace("}", ',le="600"}'),
                "0+1x60",
            ),
            (
                "noctaya_gateway_activation_duration_seconds_bucket" + SERIES.replace("}", ',le="+Inf"}'),
                "0+1x60",
            ),
        ],
        [
            (
                "noctaya_gateway_activation_duration_seconds_bucket" + SERIES.replace("}", ',le="60"}'),
                "0+1x60",
            ),
            (
                "noctaya_gateway_activation_duration_seconds_bucket" + SERIES.replace("}", ',le="600"}'),
                "0+1x60",
            ),
            (
                "noctaya_gateway_activation_duration_seconds_bucket" + SERIES.replace("}", ',le="+Inf"}'),
                "0+1x60",
            ),
        ],
        "40m",
        {},
    ),
    "NoctayaBackendUnreadyWithDemand": (
        [("noctaya_gateway_demand" + SERIES, "3x30"), ("noctaya_gateway_backend_ready" + SERIES, "0x30")],
        [("noctaya_gateway_demand" + SERIES, "3x30"), ("noctaya_gateway_backend_ready" + SERIES, "1x30")],
        "20m",
        {},
    ),
    "NoctayaExternalScalerStreamMissing": (
        [("noctaya_scaler_streams" + SCALER, "1 1 0x10")],
        [("noctaya_scaler_streams" + SCALER, "1x12")],
        "10m",
        {},
    ),
    "NoctayaEngineSignalFallback": (
        [("noctaya_engine_fallback" + SERIES, "0 1x20")],
        [("noctaya_engine_fallback" + SERIES, "0 1 0x19")],
        "15m",
        {},
    ),
    "NoctayaEngineQueueHigh": (
        [("vllm:num_requests_waiting" + SERIES.replace("qwen-gateway-0", "qwen-backend-0"), "60x20")],
        [("vllm:num_requests_waiting" + SERIES.replace("qwen-gateway-0", "qwen-backend-0"), "10x20")],
        "10m",
        {},
    ),
}


def _annotations(rule: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, str]:
    def fill(text: str) -> str:
        return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], text)

    return {k: fill(v) for k, v in rule["annotations"].items()}


def _tests() -> list[dict[str, Any]]:
    tests = []
    for name, rule in alerts().items():
        firing, quiet, at, extra = CASES[name]
        labels = {**LABELS, **extra, **rule["labels"]}
        expected = [{"exp_labels": labels, "exp_annotations": _annotations(rule, labels)}]
        for series, exp in ((firing, expected), (quiet, [])):
            tests.append(
                {
                    "name": f"{name} {'fires' if exp else 'stays quiet'}",
                    "interval": "1m",
                    "input_series": [{"series": s, "values": v} for s, v in series],
                    "alert_rule_test": [{"eval_time": at, "alertname": name, "exp_alerts": exp}],
                }
            )
    return tests


def test_every_alert_has_a_unit_test() -> None:
    assert sorted(alerts()) == sorted(CASES)


def test_promtool_checks_the_rules(promtool: str, tmp_path: pathlib.Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": rule_groups()}))
    result = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in result.stdout


def test_promtool_unit_tests_every_alert(promtool: str, tmp_path: pathlib.Path) -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": rule_groups()}))
    tests = tmp_path / "tests.yaml"
    tests.write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "tests": _tests()}, sort_keys=False))
    result = subprocess.run(
        [promtool, "test", "rules", str(tests)], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


# ------------------------------------------------------------------ scrape paths vs NetworkPolicies
def _documents(paths: Iterable[pathlib.Path]) -> list[dict[str, Any]]:
    return [d for p in paths for d in yaml.safe_load_all(p.read_text()) if d]


def _matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions with In/NotIn/Exists/DoesNotExist)."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {
            "In": labels.get(key) in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[op]
        if not ok:
            return False
    return True


def _admits(policy: Mapping[str, Any], *, port: int, source_namespace: str) -> bool:
    """Does ``policy`` admit a connection to ``port`` from any Pod of ``source_namespace``?"""
    for rule in policy["spec"].get("ingress") or []:
        ports = rule.get("ports")
        if ports and not any(p.get("port") == port for p in ports):
            continue
        peers = rule.get("from")
        if not peers:
            return True
        for peer in peers:
            ns_selector, pod_selector = peer.get("namespaceSelector"), peer.get("podSelector")
            if pod_selector not in (None, {}):  # Prometheus' own Pod labels are not ours to know
                continue
            if ns_selector is not None and _matches(
                ns_selector, {"kubernetes.io/metadata.name": source_namespace}
            ):
                return True
    return False


def scrape_paths(docs: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, str], int]]:
    """(ServiceMonitor namespace, Service, Pod labels, container port) of every scrape it asks for."""
    monitors = [d for d in docs if d["kind"] == "ServiceMonitor"]
    services = [d for d in docs if d["kind"] == "Service"]
    workloads = [d for d in docs if d["kind"] == "Deployment"]
    paths = []
    for monitor in monitors:
        spec = monitor["spec"]
        names = (spec.get("namespaceSelector") or {}).get("matchNames")
        for service in services:
            meta = service["metadata"]
            if names is not None and meta["namespace"] not in names:
                continue
            if not _matches(spec["selector"], meta.get("labels") or {}):
                continue
            for endpoint in spec["endpoints"]:
                port = next((p for p in service["spec"]["ports"] if p.get("name") == endpoint["port"]), None)
                if port is None:
                    continue
                for workload in workloads:
                    if workload["metadata"]["namespace"] != meta["namespace"]:
                        continue
                    template = workload["spec"]["template"]
                    pod_labels = template["metadata"]["labels"]
                    if not all(pod_labels.get(k) == v for k, v in service["spec"]["selector"].items()):
                        continue
                    target = port.get("targetPort", port["port"])
                    if isinstance(target, str):  # a named container port
                        target = next(
                            cp["containerPort"]
                            for c in template["spec"]["containers"]
                            for cp in c.get("ports") or []
                            if cp.get("name") == target
                        )
                    paths.append((monitor["metadata"]["namespace"], meta["name"], pod_labels, int(target)))
    return paths


@pytest.mark.parametrize("service", ["qwen-ha", "qwen-mtls"])
def test_every_scrape_path_is_admitted_by_every_policy(service: str) -> None:
    docs = _documents(
        [
            DIST / "observability" / "monitoring.yaml",
            DIST / "llm" / f"{service}.yaml",
            DIST / "security" / f"{service}.yaml",
        ]
    )
    paths = scrape_paths(docs)
    scraped = {labels.get("app.kubernetes.io/component") for _, _, labels, _ in paths}
    # gateways and backends; with two gateways also the aggregate scaler's reports port
    assert scraped == ({"gateway", "backend", "scaler"} if service == "qwen-ha" else {"gateway", "backend"})
    policies = [d for d in docs if d["kind"] == "NetworkPolicy"]
    assert policies
    for namespace, name, pod_labels, port in paths:
        for policy in policies:
            if not _matches(policy["spec"]["podSelector"], pod_labels):
                continue
            assert _admits(policy, port=port, source_namespace=namespace), (
                f"NetworkPolicy {policy['metadata']['name']} blocks the scrape of Service {name} "
                f"port {port} from namespace {namespace}"
            )
