"""LLMServices written for the Go implementation render what its users rely on.

``tests/data/go/`` holds field-for-field equivalents of the Go project's example LLMServices and
InferenceRuntimes (v1alpha1 fields of the Go implementation only, no Noctaya extension). Aspects, for
each of them: it parses and its runtime is selected as there; the public Service ``<name>`` is the
gateway (port 80 named ``http`` -> the gateway's 8080) and ``<name>-backend`` the backend (the runtime's
port), each selecting only its own Pods; the gateway's ``backendUrl`` points at ``<name>-backend``; the
ScaledObject ``<name>`` scales Deployment ``<name>-backend`` with ``pollingInterval: 5``, the spec's
bounds and cooldown, through ``<name>-scaler.<ns>.svc:9090``; ``status.endpointURL`` is
``http://<name>.<ns>.svc/v1``; and the condition types and reasons a Go user watches for are the ones the
operator declares."""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from noctaya.api import inferenceruntime, llmservice, servicestatus
from noctaya.constructs import naming, settings, synthesis
from noctaya.contract import gateway as gateway_contract
from noctaya.operator import reconciliation
from noctaya.runtime import selection

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "go"
SERVICES = [
    llmservice.LLMService.model_validate(d)
    for d in yaml.safe_load_all((DATA / "llmservices.yaml").read_text())
]
RUNTIMES = [
    inferenceruntime.InferenceRuntime.model_validate(d)
    for d in yaml.safe_load_all((DATA / "runtimes.yaml").read_text())
]
Manifest = dict[str, Any]


def one(manifests: list[Manifest], kind: str, name: str) -> Manifest:
    found = [m for m in manifests if m["kind"] == kind and m["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


def selects(service: Manifest, deployment: Manifest) -> bool:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    return all(labels.get(k) == v for k, v in service["spec"]["selector"].items())


@pytest.mark.parametrize("service", SERVICES, ids=lambda s: s.name)
def test_a_go_user_finds_the_names_they_rely_on(service: llmservice.LLMService) -> None:
    runtime = selection.select_runtime(service=service, runtimes=RUNTIMES)
    manifests = synthesis.render_llmservice(
        service=service, runtime=runtime, settings=settings.RenderSettings()
    )
    name, ns = service.name, service.namespace
    gateway = one(manifests, "Deployment", f"{name}-gateway")
    backend = one(manifests, "Deployment", f"{name}-backend")

    public = one(manifests, "Service", name)
    assert public["spec"]["ports"] == [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}]
    assert selects(public, gateway) and not selects(public, backend)
    (gateway_http,) = [
        p for p in gateway["spec"]["template"]["spec"]["containers"][0]["ports"] if p["name"] == "http"
    ]
    assert gateway_http["containerPort"] == 8080

    port = runtime.spec.container.port
    serving_port = runtime.spec.serving_port
    private = one(manifests, "Service", f"{name}-backend")
    assert [(p["name"], p["port"], p["targetPort"]) for p in private["spec"]["ports"]] == [
        ("http", serving_port, port.name)
    ]
    assert selects(private, backend) and not selects(private, gateway)

    config = yaml.safe_load(one(manifests, "ConfigMap", f"{name}-gateway")["data"]["config.yaml"])
    assert config["backendUrl"] == f"http://{name}-backend.{ns}.svc:{serving_port}"
    assert config["maxQueue"] == service.spec.endpoint.max_queue
    assert config["coldStartMode"] == service.spec.endpoint.cold_start.mode.value

    scaled = one(manifests, "ScaledObject", name)["spec"]
    assert scaled["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": f"{name}-backend",
    }
    assert scaled["pollingInterval"] == 5
    assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (
        service.spec.scaling.min,
        service.spec.scaling.max,
    )
    assert scaled["cooldownPeriod"] == int(service.spec.scaling.scale_down_stabilization.total_seconds)
    (trigger,) = scaled["triggers"]
    assert trigger["type"] == "external-push"
    assert trigger["metadata"]["scalerAddress"] == f"{name}-scaler.{ns}.svc:9090"
    scaler = one(manifests, "Service", f"{name}-scaler")
    ports = [p["port"] for p in scaler["spec"]["ports"]]
    assert ports == ([9090, 9091] if service.spec.endpoint.replicas else [9090])  # 9091: gateway reports
    assert 9090 not in [p["port"] for p in public["spec"]["ports"]]

    ident = naming.ServiceIdentity(name=name, namespace=ns)
    assert reconciliation.endpoint_url(ident) == f"http://{name}.{ns}.svc/v1"

    # a gateway memory limit the Go implementation accepts renders, its bounds derived to fit it
    text = one(manifests, "ConfigMap", f"{name}-gateway")["data"]["config.yaml"]
    limit = service.spec.endpoint.memory_limit
    if limit is not None and int(limit) < 864 << 20:
        assert text.startswith(f"# bounds derived to fit the gateway memory limit {limit} ")
        assert gateway_contract.build_config(config).worst_case_memory_bytes() <= int(limit)
    else:
        assert not text.startswith("#")


def test_the_examples_cover_what_a_go_user_writes() -> None:
    specs = [s.spec for s in SERVICES]
    assert {s.cache.strategy.value for s in specs} == {"NodeLocalPVC", "SharedPVC", "HostPath", "None"}
    assert {s.model.source.parsed.__class__.__name__ for s in specs if s.model.source} >= {
        "HubSource",
        "OciSource",
        "PvcSource",
    }
    assert any(s.runtime.selector for s in specs) and any(s.endpoint.replicas for s in specs)
    assert {s.endpoint.cold_start.mode.value for s in specs} == {"keepalive", "reject"}
    limits = {str(s.endpoint.memory_limit) for s in specs if s.endpoint.resources}
    assert limits == {"256Mi", "512Mi"}


def test_the_condition_vocabulary_a_go_user_watches_is_declared() -> None:
    types = {str(t) for t in servicestatus.ConditionType}
    reasons = {str(r) for r in servicestatus.Reason}
    assert {"Ready", "Degraded", "AutoscalingReady"} <= types
    assert {
        "Available",
        "ScaledObjectApplied",
        "AutoscalingUnavailable",
        "Inactive",
        "Healthy",
        "Progressing",
        "Activating",
        "Starting",
        "ModelLoading",
        "SchedulingDelayed",
        "ScaledToZero",
        "ImagePullFailed",
        "OOMKilled",
        "CrashLoopBackOff",
        "ContainerRestarting",
        "ProgressDeadlineExceeded",
        "PrewarmFailed",
    } <= reasons
