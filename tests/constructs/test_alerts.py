"""The rendered alert rules, evaluated by Prometheus' own rule engine (``promtool test rules``).

Aspects: every rendered rule parses (``promtool check rules``); ``NoctayaExternalScalerStreamMissing``
fires for a scaler that no KEDA stream has been connected to for ``stream_missing_for`` and not for
one that holds a stream or lost it only briefly; the rejection and queue alerts read the renamed
families (``noctaya_gateway_rejections_total``, ``noctaya_gateway_pending``);
``NoctayaEngineSignalFallback`` fires for an engine signal that has fallen back for ``engine_fallback_for``,
not for one that fell back for a round.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

import constructs
import yaml

from noctaya.constructs import observability

Synth = Callable[[Callable[[constructs.Construct], object]], list[dict[str, Any]]]
SERVICE = 'namespace="llm", serving_noctaya_io_llmservice="qwen"'
SERVICE_FALLBACK = 'noctaya_engine_fallback{{namespace="llm", serving_noctaya_io_llmservice="{service}"}}'


def streams(service: str) -> str:
    return f'noctaya_scaler_streams{{namespace="llm", serving_noctaya_io_llmservice="{service}"}}'


def promtool() -> str:
    found = shutil.which("promtool")
    assert found, "promtool is missing: scripts/setup.sh installs it (Debian package prometheus)"
    return found


def write_rules(synth: Synth, directory: pathlib.Path) -> pathlib.Path:
    _, rules = synth(lambda c: observability.Observability(c, "o", props=observability.ObservabilityProps()))
    path = directory / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": rules["spec"]["groups"]}))
    return path


def description(rules: pathlib.Path, alert: str) -> str:
    document = yaml.safe_load(rules.read_text())
    rule = next(r for r in document["groups"][0]["rules"] if r["alert"] == alert)
    return str(rule["annotations"]["description"])


def run_promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([promtool(), *args], capture_output=True, text=True, timeout=60, check=False)


def test_rules_parse(synth: Synth, tmp_path: pathlib.Path) -> None:
    result = run_promtool("check", "rules", str(write_rules(synth, tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr


def test_alerts_fire_as_documented(synth: Synth, tmp_path: pathlib.Path) -> None:
    rules = write_rules(synth, tmp_path)
    tests = {
        "rule_files": [str(rules)],
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    # one scaler KEDA never reconnected to, one with a stream, one with a 2-minute gap
                    {"series": f'noctaya_scaler_streams{{{SERVICE}, pod="a"}}', "values": "1 0x20"},
                    {"series": streams("ok"), "values": "1x20"},
                    {"series": streams("gap"), "values": "1 0 0 1x18"},
                    {
                        "series": f'noctaya_gateway_rejections_total{{{SERVICE}, reason="queue_full"}}',
                        "values": "0+60x20",
                    },
                    {"series": f"noctaya_gateway_pending{{{SERVICE}}}", "values": "10x20"},
                    {"series": f"noctaya_gateway_max_queue{{{SERVICE}}}", "values": "10x20"},
                    # one reader falling back for good; one that fell back for a round and recovered
                    {"series": f'noctaya_engine_fallback{{{SERVICE}, pod="a"}}', "values": "0 1x20"},
                    {"series": SERVICE_FALLBACK.format(service="blip"), "values": "0 1 0x19"},
                ],
                "alert_rule_test": [
                    {
                        "eval_time": "10m",
                        "alertname": "NoctayaExternalScalerStreamMissing",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "warning",
                                    "namespace": "llm",
                                    "serving_noctaya_io_llmservice": "qwen",
                                },
                                "exp_annotations": {
                                    "summary": "KEDA holds no StreamIsActive stream to the scaler of qwen",
                                    "description": description(rules, "NoctayaExternalScalerStreamMissing"),
                                },
                            }
                        ],
                    },
                    {"eval_time": "3m", "alertname": "NoctayaExternalScalerStreamMissing", "exp_alerts": []},
                    {
                        "eval_time": "20m",
                        "alertname": "NoctayaRequestsRejected",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "info",
                                    "namespace": "llm",
                                    "serving_noctaya_io_llmservice": "qwen",
                                    "reason": "queue_full",
                                },
                                "exp_annotations": {
                                    "summary": "qwen rejects requests (queue_full)",
                                    "description": description(rules, "NoctayaRequestsRejected"),
                                },
                            }
                        ],
                    },
                    {"eval_time": "9m", "alertname": "NoctayaEngineSignalFallback", "exp_alerts": []},
                    {
                        "eval_time": "12m",
                        "alertname": "NoctayaEngineSignalFallback",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "warning",
                                    "namespace": "llm",
                                    "serving_noctaya_io_llmservice": "qwen",
                                },
                                "exp_annotations": {
                                    "summary": "qwen scales on the gateways' count, not the engine's",
                                    "description": description(rules, "NoctayaEngineSignalFallback"),
                                },
                            }
                        ],
                    },
                    {
                        "eval_time": "5m",
                        "alertname": "NoctayaColdQueueSaturated",
                        "exp_alerts": [
                            {
                                "exp_labels": {
                                    "severity": "warning",
                                    "namespace": "llm",
                                    "serving_noctaya_io_llmservice": "qwen",
                                },
                                "exp_annotations": {
                                    "summary": "The cold queue of qwen is nearly full",
                                    "description": description(rules, "NoctayaColdQueueSaturated"),
                                },
                            }
                        ],
                    },
                ],
            }
        ],
    }
    path = tmp_path / "tests.yaml"
    path.write_text(yaml.safe_dump(tests))
    result = run_promtool("test", "rules", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
