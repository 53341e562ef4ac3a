"""Optional monitoring of every LLMService with the Prometheus Operator, plus a Grafana dashboard.

- a ServiceMonitor scraping ``/metrics`` on the ``http`` port of every Service labelled
  ``serving.noctaya.io/llmservice`` (backends and gateways), in the ``llm`` namespace;
- a PrometheusRule with the alert examples (activation timeouts, a saturated cold queue, rejections,
  slow activations, demand without a Ready backend, an ExternalScaler no KEDA stream is connected to,
  an engine signal fallen back to the gateways' count, a long engine queue);
- ``dashboard.json`` (beside this file) as a ConfigMap labelled ``grafana_dashboard: "1"``, which the
  Grafana sidecar of kube-prometheus-stack loads.

Run ``python examples/observability/app.py [OUTDIR]`` (default ``dist/examples/observability``).
"""

from __future__ import annotations

# isort: off
import noctaya  # noqa: F401  (first: it silences jsii's Node.js banners before cdk8s starts)
# isort: on

import json
import pathlib
import sys

import cdk8s
from cdk8s_plus_28 import k8s

from noctaya.constructs import observability, output

DASHBOARD = pathlib.Path(__file__).with_name("dashboard.json")


def chart(app: cdk8s.App) -> cdk8s.Chart:
    chart = cdk8s.Chart(app, "observability", disable_resource_name_hashes=True)
    props = observability.ObservabilityProps(
        namespace="monitoring", watch_namespaces=("llm",), extra_labels=(("release", "kube-prometheus"),)
    )
    observability.Observability(chart, "Monitoring", props=props)
    dashboard = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    k8s.KubeConfigMap(
        chart,
        "Dashboard",
        metadata=k8s.ObjectMeta(
            name="noctaya-dashboard",
            namespace="monitoring",
            labels={**observability.LABELS, "grafana_dashboard": "1"},
        ),
        data={"noctaya.json": json.dumps(dashboard, indent=2, sort_keys=True) + "\n"},
    )
    return chart


def synth(outdir: pathlib.Path) -> list[pathlib.Path]:
    """Write the manifests into ``outdir``; returns the files."""
    target = outdir / "monitoring.yaml"
    output.write(target, output.to_yaml(chart(cdk8s.App()).to_json()))
    return [target]


if __name__ == "__main__":
    for path in synth(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "dist/examples/observability")):
        print(path)
