"""In-process synthesis: one LLMService (with its selected runtime) to a list of manifests.

``render_llmservice`` is what the operator calls on every reconcile and what ``noctaya synth`` calls
per document. It is synchronous and drives jsii, which is not thread-safe: the caller guarantees that
every call happens on one thread (the operator uses a single-worker executor).

Each call builds a fresh ``cdk8s.App`` (about 1 ms): reusing one App would accumulate charts.
"""

from __future__ import annotations

from typing import Any

import cdk8s

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import chart, install, settings


def render_llmservice(
    *,
    service: llmservice.LLMService,
    runtime: inferenceruntime.InferenceRuntime,
    settings: settings.RenderSettings,
) -> list[dict[str, Any]]:
    """Every object of ``service`` as plain manifests (dicts), in apply order.

    Raises ``noctaya.runtime.rendering.RenderError`` (or another ``ValueError``) naming the field when
    the service and runtime cannot be rendered.
    """
    app = cdk8s.App()
    built = chart.LLMServiceChart(
        app, service.name or "llmservice", service=service, runtime=runtime, settings=settings
    )
    manifests: list[dict[str, Any]] = built.to_json()
    return manifests


def render_install(*, props: install.OperatorInstallProps) -> list[dict[str, Any]]:
    """The operator installation (CRDs first, then namespace, RBAC, Deployment, PDB) as manifests."""
    app = cdk8s.App()
    chart = cdk8s.Chart(app, "install", disable_resource_name_hashes=True)
    install.OperatorInstall(chart, "Operator", props=props)
    manifests: list[dict[str, Any]] = chart.to_json()
    return manifests
