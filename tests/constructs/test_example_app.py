"""``examples/cdk8s-app``: a platform team's own cdk8s app adding ``LLMServiceChart``.

Aspects: the public import ``from noctaya.constructs import LLMServiceChart`` works; the app builds its
own chart and the LLMService chart side by side, with the dependency between them; ``App.synth()``
writes one file per chart into the app's output directory with the objects of both.
"""

from __future__ import annotations

import pathlib
import runpy
from typing import Any

import cdk8s
import yaml

import noctaya.constructs

APP = pathlib.Path(__file__).resolve().parents[2] / "examples" / "cdk8s-app" / "main.py"


def test_public_names() -> None:
    for name in (
        "LLMServiceChart",
        "RenderSettings",
        "render_llmservice",
        "Backend",
        "BackendProps",
        "Gateway",
        "GatewayProps",
        "AggregateScaler",
        "AggregateScalerProps",
        "Autoscaling",
        "AutoscalingProps",
        "Cache",
        "CacheProps",
        "Prewarm",
        "PrewarmProps",
        "OperatorInstall",
        "OperatorInstallProps",
    ):
        assert name in noctaya.constructs.__all__
        assert getattr(noctaya.constructs, name)


def test_the_app_synthesizes(tmp_path: pathlib.Path) -> None:
    module: dict[str, Any] = runpy.run_path(str(APP))
    app = cdk8s.App(outdir=str(tmp_path))
    team, model = module["build"](app)
    assert isinstance(model, noctaya.constructs.LLMServiceChart)
    kinds = [m["kind"] for m in model.to_json()]
    assert kinds.count("Deployment") == 2 and "ScaledObject" in kinds
    assert [m["kind"] for m in team.to_json()] == ["Namespace"]
    app.synth()
    files = sorted(p.name for p in tmp_path.iterdir())
    assert len(files) == 2
    documents = [d for p in sorted(tmp_path.iterdir()) for d in yaml.safe_load_all(p.read_text())]
    assert {"Namespace", "Deployment", "Service", "ScaledObject"} <= {d["kind"] for d in documents}
    gateway = next(
        d for d in documents if d["metadata"]["name"] == "assistant-gateway" and d["kind"] == "Deployment"
    )
    image = gateway["spec"]["template"]["spec"]["containers"][0]["image"]
    assert image == "registry.example.com/platform/noctaya:0.1.0"
