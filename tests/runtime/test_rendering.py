"""Rendering of the server recipe.

Aspects: every placeholder in args is substituted (with and without spaces inside the braces);
argsOverride is appended verbatim after the rendered args; literal env values are rendered and
valueFrom entries pass through untouched; the cache variables of hub clients are added without
overriding a variable the runtime sets; ModelScope sources served without staging get the engine
family's switch; probes default to the API defaults on the named port and runtime probes win;
preStopDrain turns into the drain seconds; cpu/memory/accelerators and the adapter's placement come
through; the model path follows the source (hub id, staged directory, pvc mount).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from noctaya.api import inferenceruntime, llmservice
from noctaya.runtime import rendering

MakeService = Callable[..., llmservice.LLMService]
MakeRuntime = Callable[..., inferenceruntime.InferenceRuntime]


def _recipe(
    service: llmservice.LLMService, runtime: inferenceruntime.InferenceRuntime
) -> rendering.ServerRecipe:
    return rendering.recipe(service=service, runtime=runtime, claim_name=f"{service.name}-cache")


def test_args_are_rendered_then_override_appended(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    runtime = make_runtime(
        container={
            "args": [
                "--model",
                "{{ .Model.Path }}",
                "--name={{.Service.Name}}",
                "--ns",
                "{{  .Service.Namespace  }}",
            ]
        }
    )
    service = make_service(runtime={"argsOverride": ["--max-model-len", "{{ .Model.Path }}"]})
    recipe = _recipe(service, runtime)
    assert recipe.args == (
        "--model",
        "Qwen/Qwen2.5-7B-Instruct",
        "--name=qwen",
        "--ns",
        "ai",
        "--max-model-len",
        "{{ .Model.Path }}",
    )


def test_env_rendering_and_value_from(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    runtime = make_runtime(
        container={
            "env": [
                {"name": "MODEL", "value": "{{ .Model.Path }}"},
                {"name": "HF_HOME", "value": "/somewhere/else"},
                {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}},
            ]
        }
    )
    env = _recipe(make_service(), runtime).env
    assert env[0] == {"name": "MODEL", "value": "Qwen/Qwen2.5-7B-Instruct"}
    assert env[1] == {"name": "HF_HOME", "value": "/somewhere/else"}  # the runtime's own value wins
    assert env[2] == {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}
    assert {"name": "MODELSCOPE_CACHE", "value": "/cache/modelscope"} in env
    assert [e["name"] for e in env].count("HF_HOME") == 1


@pytest.mark.parametrize(
    ("family", "variable"), [("vllm", "VLLM_USE_MODELSCOPE"), ("sglang", "SGLANG_USE_MODELSCOPE")]
)
def test_modelscope_switch_only_without_staging(
    make_service: MakeService, make_runtime: MakeRuntime, family: str, variable: str
) -> None:
    runtime = make_runtime(family=family)
    direct = _recipe(
        make_service(model={"source": {"uri": "modelscope://Qwen/Qwen2.5-7B-Instruct"}}), runtime
    )
    assert variable in {e["name"] for e in direct.env}
    staged = _recipe(
        make_service(
            model={"source": {"uri": "modelscope://Qwen/Qwen2.5-7B-Instruct"}}, cache={"prewarm": True}
        ),
        runtime,
    )
    assert variable not in {e["name"] for e in staged.env}
    assert staged.args[1] == "/cache/models/modelscope/Qwen/Qwen2.5-7B-Instruct"


def test_probe_defaults_and_runtime_probes(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    recipe = _recipe(make_service(), make_runtime())
    assert recipe.readiness_probe == {"httpGet": {"path": "/health", "port": "http"}}
    assert recipe.startup_probe == {
        "httpGet": {"path": "/health", "port": "http"},
        "periodSeconds": 10,
        "failureThreshold": 60,
    }
    assert recipe.liveness_probe is None
    assert recipe.readiness_path == "/health"
    custom = _recipe(
        make_service(),
        make_runtime(
            container={"port": {"name": "api", "containerPort": 9000}},
            health={
                "readiness": {"httpGet": {"path": "/v1/models", "port": "api"}},
                "liveness": {"tcpSocket": {"port": 9000}, "periodSeconds": 30},
            },
        ),
    )
    assert custom.readiness_probe == {"httpGet": {"path": "/v1/models", "port": "api"}}
    assert custom.startup_probe["httpGet"] == {"path": "/health", "port": "api"}
    assert custom.liveness_probe == {"tcpSocket": {"port": 9000}, "periodSeconds": 30}
    assert (custom.port_name, custom.port, custom.readiness_path) == ("api", 9000, "/v1/models")


def test_drain_resources_and_placement(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    service = make_service(
        resources={"accelerators": 2, "cpu": "4", "memory": "32Gi"}, scaling={"drainTimeout": "90s"}
    )
    runtime = make_runtime(
        lifecycle={"preStopDrain": True, "terminationGracePeriodSeconds": 20},
        accelerator={"nodeSelector": {"gpu": "a10"}, "scheduler": {"name": "volcano", "queue": "q1"}},
    )
    recipe = _recipe(service, runtime)
    assert recipe.pre_stop_drain_seconds == 90
    assert recipe.termination_grace_period_seconds == 20
    assert (recipe.cpu, recipe.memory) == ("4", "32Gi")
    assert dict(recipe.placement.resources) == {"nvidia.com/gpu": 2}
    assert dict(recipe.placement.node_selector) == {"gpu": "a10"}
    assert recipe.placement.scheduler_name == "volcano"
    assert dict(recipe.placement.pod_annotations) == {"scheduling.volcano.sh/queue-name": "q1"}
    assert _recipe(make_service(), make_runtime()).pre_stop_drain_seconds is None


@pytest.mark.parametrize(
    ("uri", "cache", "path"),
    [
        ("hf://Qwen/Qwen2.5-7B-Instruct", {}, "Qwen/Qwen2.5-7B-Instruct"),
        (
            "hf://Qwen/Qwen2.5-7B-Instruct",
            {"prewarm": True},
            "/cache/models/huggingface/Qwen/Qwen2.5-7B-Instruct",
        ),
        ("pvc://store/qwen/7b", {"strategy": "None"}, "/models/qwen/7b"),
        ("pvc://store", {}, "/models"),
        ("oci://r.example.com/m/q@sha256:" + "a" * 64, {}, "/cache/models/oci/sha256-" + "a" * 64),
    ],
)
def test_model_path_follows_the_source(
    make_service: MakeService, make_runtime: MakeRuntime, uri: str, cache: dict[str, Any], path: str
) -> None:
    recipe = _recipe(make_service(model={"source": {"uri": uri}}, cache=cache), make_runtime())
    assert recipe.delivery.model_path == path
    assert recipe.args[1] == path


def test_undeliverable_combination_is_a_render_error(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    service = make_service(cache={"strategy": "None", "prewarm": True})
    with pytest.raises(rendering.RenderError, match=r"spec\.cache\.strategy: None"):
        _recipe(service, make_runtime())
    with pytest.raises(rendering.RenderError, match="BakedImage is reserved"):
        _recipe(make_service(cache={"strategy": "BakedImage"}), make_runtime())


def test_cpu_runtime_requests_no_device(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    runtime = make_runtime("llamacpp", vendor="cpu", family="llamacpp")
    recipe = _recipe(make_service(runtime={"selector": {"vendor": ["cpu"]}}), runtime)
    assert dict(recipe.placement.resources) == {}
    assert recipe.family.name == "llamacpp"


@pytest.mark.parametrize(
    ("family", "port"), [("vllm", 8000), ("sglang", 30000), ("tgi", 80), ("llamacpp", 8080)]
)
def test_an_unset_container_port_is_the_familys_port(
    make_service: MakeService, make_runtime: MakeRuntime, family: str, port: int
) -> None:
    recipe = _recipe(make_service(), make_runtime(family=family))
    assert recipe.port == port
    given = make_runtime(family=family, container={"port": {"containerPort": 9000}})
    assert _recipe(make_service(), given).port == 9000


def test_a_port_argument_that_disagrees_with_the_container_port_is_a_render_error(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    """What the operator and synth refuse: llama.cpp told ``--port 8081`` while its Service and probes
    look at 8080 would never become Ready."""
    args = ["-m", "{{ .Model.Path }}", "--port", "8081"]
    runtime = make_runtime("llama", vendor="cpu", family="llamacpp", container={"args": args})
    with pytest.raises(
        rendering.RenderError, match=r"InferenceRuntime llama: spec\.container\.args\[3\]: --port 8081"
    ):
        _recipe(make_service(), runtime)
    agrees = make_runtime("llama", vendor="cpu", family="llamacpp", container={"args": [*args[:3], "8080"]})
    assert _recipe(make_service(), agrees).port == 8080
