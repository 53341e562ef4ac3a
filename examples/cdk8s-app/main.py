"""A platform team's own cdk8s app that adds Noctaya's ``LLMServiceChart`` next to its own charts.

The LLMService and InferenceRuntime are built in Python with the same models the operator uses (they
could as well be loaded from YAML with ``noctaya.api.documents``). Run it with the cdk8s CLI::

    cdk8s synth --app "python main.py"      # or simply: python main.py  (writes ./dist)

No operator is involved: the rendered objects are the ones the operator would apply.
"""

from __future__ import annotations

# isort: off
import noctaya  # noqa: F401  (first: it silences jsii's Node.js banners before cdk8s starts)
# isort: on

import cdk8s
from cdk8s_plus_28 import k8s

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import LLMServiceChart, RenderSettings

RUNTIME = inferenceruntime.InferenceRuntime.model_validate(
    {
        "metadata": {"name": "vllm-nvidia"},
        "spec": {
            "vendor": "nvidia",
            "container": {
                "image": "docker.io/vllm/vllm-openai:v0.9.2",
                "args": ["--model", "{{ .Model.Path }}", "--served-model-name", "{{ .Service.Name }}"],
            },
            "accelerator": {"resourceName": "nvidia.com/gpu"},
            "lifecycle": {"preStopDrain": True},
        },
    }
)

SERVICE = llmservice.LLMService.model_validate(
    {
        "metadata": {"name": "assistant", "namespace": "team-a"},
        "spec": {
            "model": {"source": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct"}},
            "runtime": {"name": "vllm-nvidia"},
            "resources": {"accelerators": 1, "cpu": "4", "memory": "32Gi"},
            "scaling": {"max": 2},
        },
    }
)


def build(app: cdk8s.App) -> list[cdk8s.Chart]:
    """The team's namespace chart and the LLMService chart, in apply order."""
    team = cdk8s.Chart(app, "team-a", disable_resource_name_hashes=True)
    k8s.KubeNamespace(team, "Namespace", metadata=k8s.ObjectMeta(name="team-a"))
    model = LLMServiceChart(
        app,
        "assistant",
        service=SERVICE,
        runtime=RUNTIME,
        settings=RenderSettings(gateway_image="registry.example.com/platform/noctaya:0.1.0"),
    )
    model.add_dependency(team)
    return [team, model]


if __name__ == "__main__":
    application = cdk8s.App()
    build(application)
    application.synth()
