"""LLMServiceChart invariants, over every example and over targeted variations.

Aspects:
- the backend Deployment never has ``spec.replicas`` (KEDA owns it);
- the scaler port (9090) and the reports port (9091) are never on the public gateway Service, and the
  scaler Service is ``<name>-scaler`` on 9090 (+ 9091 in aggregate mode);
- anti-affinity, PDB ``minAvailable: 1`` and the aggregate scaler exist exactly when gateways > 1, and
  then the gateway config has ``report`` and no co-located ``scaler``; the aggregate scaler counts
  every gateway of a large fleet, with room for a rolling update;
- pvc:// is mounted read-only; a prewarmed SharedPVC is read-only in servers and the servers wait for
  the marker; without prewarm the cache stays writable;
- every object has the LLMService label, the app.kubernetes.io labels, a deterministic name and the
  owner references from the settings;
- create-once objects carry ``serving.noctaya.io/spec-hash``; it changes when and only when the
  inputs that shape them change;
- no Secret value appears in any container arg or env; the scaler token only in its Secret; a prewarm
  Job gets only the hub-token variables of the runtime;
- the ScaledObject targets the backend, points at ``<name>-scaler.<ns>.svc:9090``, carries min/max,
  cooldown and the HPA window from scaleDownStabilization, and the mTLS authenticationRef;
- no Pod of an LLMService gets a Kubernetes API token (the data plane holds no credentials);
- rendering is deterministic.
"""

from __future__ import annotations

import json
import pathlib
import re
import tomllib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import naming, prewarm, settings, synthesis
from noctaya.contract import scaler as scaler_contract

Manifest = dict[str, Any]
Rendered = dict[str, list[Manifest]]
MakeService = Callable[..., llmservice.LLMService]
MakeRuntime = Callable[..., inferenceruntime.InferenceRuntime]
HASH = naming.SPEC_HASH_ANNOTATION


def find(manifests: list[Manifest], kind: str, name: str | None = None) -> list[Manifest]:
    return [m for m in manifests if m["kind"] == kind and (name is None or m["metadata"]["name"] == name)]


def one(manifests: list[Manifest], kind: str, name: str | None = None) -> Manifest:
    found = find(manifests, kind, name)
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def pod(manifest: Manifest) -> Manifest:
    spec: Manifest = manifest["spec"]["template"]["spec"]
    return spec


def containers(manifest: Manifest) -> Iterator[Manifest]:
    yield from pod(manifest).get("initContainers", [])
    yield from pod(manifest)["containers"]


def render(
    service: llmservice.LLMService, runtime: inferenceruntime.InferenceRuntime, **overrides: Any
) -> list[Manifest]:
    return synthesis.render_llmservice(
        service=service, runtime=runtime, settings=settings.RenderSettings(**overrides)
    )


def test_backend_never_has_replicas(rendered: Rendered) -> None:
    for name, manifests in rendered.items():
        backend = one(manifests, "Deployment", f"{name}-backend")
        assert "replicas" not in backend["spec"], name


def test_no_pod_mounts_a_kubernetes_api_token(rendered: Rendered) -> None:
    for name, manifests in rendered.items():
        for m in manifests:
            if m["kind"] in {"Deployment", "Job"}:
                pod = m["spec"]["template"]["spec"]
                assert pod.get("automountServiceAccountToken") is False, (
                    name,
                    m["kind"],
                    m["metadata"]["name"],
                )


def _pod_security_level(manifest: Manifest) -> str:
    """The strictest Pod Security Standard a workload's Pod template meets (the container rules of
    ``baseline`` and ``restricted`` that a rendered Pod can break: escalation, capabilities, seccomp,
    the user)."""
    spec = pod(manifest)
    pod_context = spec.get("securityContext") or {}
    if any("hostPath" in v for v in spec.get("volumes", [])):
        return "privileged"  # baseline forbids hostPath volumes
    level = "restricted"
    for container in containers(manifest):
        ctx = container.get("securityContext") or {}
        if ctx.get("privileged") or set(ctx.get("capabilities", {}).get("add", [])) - {"NET_BIND_SERVICE"}:
            return "privileged"
        non_root = ctx.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is True
        user = ctx.get("runAsUser", pod_context.get("runAsUser"))
        seccomp = (ctx.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
        if not (
            ctx.get("allowPrivilegeEscalation") is False
            and ctx.get("capabilities", {}).get("drop") == ["ALL"]
            and seccomp == "RuntimeDefault"
            and non_root
            and user != 0
        ):
            level = "baseline"
    return level


def test_every_workload_meets_its_documented_pod_security_level(rendered: Rendered) -> None:
    """docs/architecture.md: gateways, scalers and the Jobs on a claim are ``restricted``; backends (the
    engines' images run as root) ``baseline``; whatever mounts a HostPath cache ``privileged``."""
    seen = set()
    for name, manifests in rendered.items():
        for m in manifests:
            if m["kind"] not in {"Deployment", "Job"}:
                continue
            host_path = any("hostPath" in v for v in pod(m).get("volumes", []))
            component = m["metadata"]["labels"].get("app.kubernetes.io/component")
            expected = "privileged" if host_path else "baseline" if component == "backend" else "restricted"
            assert _pod_security_level(m) == expected, (name, m["kind"], m["metadata"]["name"])
            for container in containers(m):  # no workload escalates or keeps a capability
                ctx = container["securityContext"]
                assert ctx["allowPrivilegeEscalation"] is False and ctx["capabilities"] == {"drop": ["ALL"]}
            seen.add((m["kind"], expected, host_path))
    assert {
        ("Deployment", "restricted", False),
        ("Deployment", "baseline", False),
        ("Job", "restricted", False),
    } <= seen


def test_scaler_ports_never_on_the_public_service(rendered: Rendered) -> None:
    for name, manifests in rendered.items():
        public = one(manifests, "Service", name)
        assert [(p["name"], p["port"], p["targetPort"]) for p in public["spec"]["ports"]] == [
            ("http", 80, "http")
        ]
        scaler = one(manifests, "Service", f"{name}-scaler")
        ports = {p["name"]: p["port"] for p in scaler["spec"]["ports"]}
        assert ports["grpc"] == 9090
        aggregate = bool(find(manifests, "Deployment", f"{name}-scaler"))
        assert ports == ({"grpc": 9090, "reports": 9091} if aggregate else {"grpc": 9090})


@pytest.mark.parametrize("replicas", [1, 2, 3])
def test_aggregate_parts_exactly_when_several_gateways(
    make_service: MakeService, make_runtime: MakeRuntime, replicas: int
) -> None:
    manifests = render(make_service(endpoint={"replicas": replicas}), make_runtime())
    gateway = one(manifests, "Deployment", "qwen-gateway")
    config = json.loads(json.dumps(one(manifests, "ConfigMap", "qwen-gateway")["data"]))
    several = replicas > 1
    assert gateway["spec"]["replicas"] == replicas
    assert ("affinity" in pod(gateway)) is several
    assert bool(find(manifests, "PodDisruptionBudget")) is several
    assert bool(find(manifests, "Deployment", "qwen-scaler")) is several
    assert ("report: null" in config["config.yaml"]) is not several
    assert ("scaler: null" in config["config.yaml"]) is several
    if several:
        term = pod(gateway)["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][
            0
        ]
        assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
        assert (
            "requiredDuringSchedulingIgnoredDuringExecution"
            not in pod(gateway)["affinity"]["podAntiAffinity"]
        )
        assert one(manifests, "PodDisruptionBudget", "qwen-gateway")["spec"]["minAvailable"] == 1
        assert "url: http://qwen-scaler.ai.svc:9091" in config["config.yaml"]
        assert [p["name"] for p in gateway["spec"]["template"]["spec"]["containers"][0]["ports"]] == ["http"]


@pytest.mark.parametrize("replicas", [2, 40])
def test_aggregate_scaler_counts_every_gateway(
    make_service: MakeService, make_runtime: MakeRuntime, replicas: int
) -> None:
    manifests = render(make_service(endpoint={"replicas": replicas}), make_runtime())
    document = yaml.safe_load(one(manifests, "ConfigMap", "qwen-scaler")["data"]["config.yaml"])
    parsed = scaler_contract.build_config(document)
    assert parsed.max_members >= replicas + 1  # all of them and the surge gateway of a rolling update
    assert parsed.max_members >= 32


def test_default_gateway_replicas_come_from_the_settings(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    manifests = render(make_service(), make_runtime(), default_gateway_replicas=2)
    assert one(manifests, "Deployment", "qwen-gateway")["spec"]["replicas"] == 2
    assert find(manifests, "Deployment", "qwen-scaler")
    pinned = render(make_service(endpoint={"replicas": 1}), make_runtime(), default_gateway_replicas=2)
    assert not find(pinned, "Deployment", "qwen-scaler")


@pytest.mark.parametrize("access", [None, "open", "off"])
def test_the_warm_endpoint_is_closed_unless_keys_or_the_owner_open_it(
    make_service: MakeService, make_runtime: MakeRuntime, access: str | None
) -> None:
    endpoint = {} if access is None else {"warmAccess": access}
    manifests = render(make_service(endpoint=endpoint), make_runtime())
    config = yaml.safe_load(one(manifests, "ConfigMap", "qwen-gateway")["data"]["config.yaml"])
    assert config["warmAccess"] == (access or "key")


def _server_mounts(manifests: list[Manifest], name: str) -> dict[str, bool]:
    server = pod(one(manifests, "Deployment", f"{name}-backend"))["containers"][0]
    return {m["mountPath"]: bool(m.get("readOnly")) for m in server.get("volumeMounts", [])}


def test_pvc_source_is_mounted_read_only(rendered: Rendered) -> None:
    manifests = rendered["qwen-prestaged"]
    assert _server_mounts(manifests, "qwen-prestaged") == {"/models": True, "/dev/shm": False}
    volume = pod(one(manifests, "Deployment", "qwen-prestaged-backend"))["volumes"][0]
    assert volume["persistentVolumeClaim"] == {"claimName": "model-store", "readOnly": True}
    assert not find(manifests, "Job") and not find(manifests, "PersistentVolumeClaim")


def test_prewarmed_shared_cache_is_read_only_in_servers(rendered: Rendered) -> None:
    manifests = rendered["qwen-shared"]
    claim = one(manifests, "PersistentVolumeClaim", "qwen-shared-cache")
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    assert _server_mounts(manifests, "qwen-shared") == {"/cache": True, "/dev/shm": False}
    backend = one(manifests, "Deployment", "qwen-shared-backend")
    wait = pod(backend)["initContainers"][0]
    assert ".noctaya-ready" in wait["command"][-1]
    job = one(manifests, "Job", "qwen-shared-prewarm")
    writer = {m["mountPath"]: bool(m.get("readOnly")) for c in containers(job) for m in c["volumeMounts"]}
    assert writer["/cache"] is False
    assert "readOnly" not in pod(job)["volumes"][0]["persistentVolumeClaim"]
    for container in containers(job):
        for key in ("limits", "requests"):
            assert not any("gpu" in r for r in container.get("resources", {}).get(key, {}))


def test_without_prewarm_the_cache_stays_writable(rendered: Rendered) -> None:
    assert _server_mounts(rendered["qwen-nvidia"], "qwen-nvidia") == {"/cache": False, "/dev/shm": False}
    assert "initContainers" not in pod(one(rendered["qwen-nvidia"], "Deployment", "qwen-nvidia-backend"))


def test_labels_names_and_owners(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    owner = {"apiVersion": "serving.noctaya.io/v1alpha1", "kind": "LLMService", "name": "qwen", "uid": "u-1"}
    service = make_service(endpoint={"replicas": 2}, cache={"prewarm": True})
    manifests = render(service, make_runtime(), owner_references=[owner], scaler_token="t0k3n")
    names = {(m["kind"], m["metadata"]["name"]) for m in manifests}
    assert names == {
        ("PersistentVolumeClaim", "qwen-cache"),
        ("Job", "qwen-prewarm"),
        ("Deployment", "qwen-backend"),
        ("Service", "qwen-backend"),
        ("ConfigMap", "qwen-scaler"),
        ("Secret", "qwen-scaler-token"),
        ("Deployment", "qwen-scaler"),
        ("Service", "qwen-scaler"),
        ("ConfigMap", "qwen-gateway"),
        ("Deployment", "qwen-gateway"),
        ("Service", "qwen"),
        ("PodDisruptionBudget", "qwen-gateway"),
        ("ScaledObject", "qwen"),
    }
    for manifest in manifests:
        meta = manifest["metadata"]
        assert meta["namespace"] == "ai"
        assert meta["labels"][naming.LLMSERVICE_LABEL] == "qwen"
        assert meta["labels"]["app.kubernetes.io/part-of"] == "noctaya"
        assert meta["labels"]["app.kubernetes.io/instance"] == "qwen"
        assert meta["ownerReferences"] == [{**owner, "controller": True, "blockOwnerDeletion": True}]
        if "template" in manifest.get("spec", {}):
            labels = manifest["spec"]["template"]["metadata"]["labels"]
            assert labels[naming.LLMSERVICE_LABEL] == "qwen"


def test_create_once_objects_carry_a_spec_hash(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    manifests = render(
        make_service(endpoint={"replicas": 2}, cache={"prewarm": True}), make_runtime(), scaler_token="t0k3n"
    )
    hashed = {m["kind"] for m in manifests if HASH in m["metadata"].get("annotations", {})}
    assert hashed == {"PersistentVolumeClaim", "Job", "Secret"}


def _hashes(manifests: list[Manifest]) -> dict[str, str]:
    return {
        m["kind"]: m["metadata"]["annotations"][HASH]
        for m in manifests
        if HASH in m["metadata"].get("annotations", {})
    }


def test_hashes_change_when_and_only_when_immutable_inputs_change(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    base_spec: dict[str, Any] = {"cache": {"prewarm": True, "size": "40Gi"}}
    base = _hashes(render(make_service(**base_spec), make_runtime()))
    # unrelated inputs: scaling, gateway, runtime args/image, owner references, argsOverride
    for spec in (
        {"scaling": {"max": 5}},
        {"endpoint": {"maxQueue": 7, "replicas": 2}},
        {"runtime": {"argsOverride": ["--x"]}},
        {"resources": {"cpu": "9"}},
    ):
        assert _hashes(render(make_service(**base_spec, **spec), make_runtime())) == base, spec
    assert _hashes(render(make_service(**base_spec), make_runtime(container={"image": "other:1"}))) == base
    owner = {"apiVersion": "v1", "kind": "X", "name": "n", "uid": "u"}
    assert _hashes(render(make_service(**base_spec), make_runtime(), owner_references=[owner])) == base
    # cache inputs change the claim's hash, the model changes the Job's
    bigger = _hashes(render(make_service(cache={"prewarm": True, "size": "80Gi"}), make_runtime()))
    assert bigger["PersistentVolumeClaim"] != base["PersistentVolumeClaim"]
    assert bigger["Job"] == base["Job"]
    shared = _hashes(
        render(make_service(cache={"prewarm": True, "size": "40Gi", "strategy": "SharedPVC"}), make_runtime())
    )
    assert shared["PersistentVolumeClaim"] != base["PersistentVolumeClaim"]
    other_model = _hashes(
        render(make_service(**base_spec, model={"source": {"uri": "hf://Qwen/Other"}}), make_runtime())
    )
    assert other_model["Job"] != base["Job"]
    assert other_model["PersistentVolumeClaim"] == base["PersistentVolumeClaim"]
    revision = _hashes(
        render(
            make_service(**base_spec, model={"source": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct@v2"}}),
            make_runtime(),
        )
    )
    assert revision["Job"] != base["Job"]
    # the token Secret's hash never depends on the token
    a = _hashes(render(make_service(endpoint={"replicas": 2}), make_runtime(), scaler_token="one"))
    b = _hashes(render(make_service(endpoint={"replicas": 2}), make_runtime(), scaler_token="two"))
    assert a["Secret"] == b["Secret"]


def test_no_secret_value_in_args_or_env(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    token = "s3cr3t-scaler-token-value"
    service = make_service(
        endpoint={"replicas": 2, "authentication": {"secretRef": {"name": "keys", "key": "api-key"}}},
        model={
            "source": {"uri": "oci://r.example.com/m/q@sha256:" + "e" * 64, "secretRef": {"name": "regcred"}}
        },
    )
    manifests = render(service, make_runtime(), scaler_token=token)
    secret = one(manifests, "Secret", "qwen-scaler-token")
    assert secret["stringData"] == {"token": token}
    for manifest in manifests:
        if manifest["kind"] == "Secret":
            continue
        assert token not in json.dumps(manifest)
        if manifest["kind"] in ("Deployment", "Job"):
            for container in containers(manifest):
                text = json.dumps(
                    [container.get("args", []), container.get("command", []), container.get("env", [])]
                )
                assert "regcred" not in text and "keys" not in text and ".dockerconfigjson" not in text
                for var in container.get("env", []):
                    assert "secretKeyRef" not in var.get("valueFrom", {})
    job = one(manifests, "Job", "qwen-prewarm")
    projected = [v for v in pod(job)["volumes"] if "projected" in v]
    assert projected[0]["projected"]["sources"][0]["secret"] == {
        "name": "regcred",
        "items": [{"key": ".dockerconfigjson", "path": "config.json"}],
    }


def test_scaled_object(rendered: Rendered) -> None:
    scaled = one(rendered["qwen-nvidia"], "ScaledObject", "qwen-nvidia")
    spec = scaled["spec"]
    assert spec["scaleTargetRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "qwen-nvidia-backend",
    }
    assert (spec["minReplicaCount"], spec["maxReplicaCount"], spec["cooldownPeriod"]) == (0, 2, 300)
    assert spec["pollingInterval"] == 5  # the Go implementation's; activation never waits for it
    window = spec["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]
    assert window == {"stabilizationWindowSeconds": 300}
    trigger = spec["triggers"][0]
    assert trigger["type"] == "external-push"
    assert trigger["metadata"]["scalerAddress"] == "qwen-nvidia-scaler.llm.svc:9090"
    assert "authenticationRef" not in trigger
    cpu = one(rendered["qwen-cpu"], "ScaledObject")["spec"]
    assert (cpu["cooldownPeriod"], cpu["maxReplicaCount"]) == (120, 3)
    mtls = one(rendered["qwen-mtls"], "ScaledObject")["spec"]["triggers"][0]
    assert mtls["authenticationRef"] == {"name": "qwen-mtls-keda-client", "kind": "TriggerAuthentication"}


def test_schedules_become_cron_triggers_beside_the_demand_trigger(
    rendered: Rendered, make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    """KEDA's cron trigger metadata: timezone, start, end (a duration becomes the end it implies) and
    desiredReplicas as a string; the demand trigger stays first."""
    triggers = one(rendered["qwen-nvidia"], "ScaledObject")["spec"]["triggers"]
    assert [t["type"] for t in triggers] == ["external-push", "cron"]
    assert triggers[1] == {
        "type": "cron",
        "name": "schedule-office-hours",
        "metadata": {
            "timezone": "Europe/Berlin",
            "start": "0 8 * * 1-5",
            "end": "0 18 * * 1-5",
            "desiredReplicas": "1",
        },
    }
    schedules = [
        {"name": "late", "start": "30 22 * * 5", "duration": "4h", "minReplicas": 2},
        {"name": "weekday", "start": "0 9 * * MON-FRI", "end": "0 17 * * MON-FRI", "timezone": "Asia/Tokyo"},
    ]
    manifests = render(make_service(scaling={"max": 3, "schedules": schedules}), make_runtime())
    cron = [t for t in one(manifests, "ScaledObject")["spec"]["triggers"] if t["type"] == "cron"]
    assert [(t["name"], t["metadata"]["start"], t["metadata"]["end"]) for t in cron] == [
        ("schedule-late", "30 22 * * 5", "30 2 * * 6"),  # Friday 22:30 + 4h is Saturday 02:30
        ("schedule-weekday", "0 9 * * MON-FRI", "0 17 * * MON-FRI"),
    ]
    assert [t["metadata"]["desiredReplicas"] for t in cron] == ["2", "1"]
    assert cron[0]["metadata"]["timezone"] == "UTC"


def test_mtls_mounts_the_server_secret_where_grpc_is_served(
    rendered: Rendered, make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    gateway = one(rendered["qwen-mtls"], "Deployment", "qwen-mtls-gateway")
    volumes = {v["name"]: v for v in pod(gateway)["volumes"]}
    assert volumes["scaler-tls"]["projected"]["sources"][0]["secret"]["name"] == "qwen-mtls-scaler-tls"
    config = one(rendered["qwen-mtls"], "ConfigMap", "qwen-mtls-gateway")["data"]["config.yaml"]
    assert "caFile: /etc/noctaya/scaler-tls/ca.crt" in config
    tls = {"tls": {"serverSecretName": "srv", "authenticationRef": {"name": "ta"}}}
    manifests = render(
        make_service(endpoint={"replicas": 2}, scaling={"externalScaler": tls}), make_runtime()
    )
    scaler = one(manifests, "Deployment", "qwen-scaler")
    assert "srv" in json.dumps(pod(scaler)["volumes"])
    assert "srv" not in json.dumps(pod(one(manifests, "Deployment", "qwen-gateway"))["volumes"])


def test_backend_pod_details(rendered: Rendered) -> None:
    backend = one(rendered["qwen-nvidia"], "Deployment", "qwen-nvidia-backend")
    server = pod(backend)["containers"][0]
    assert server["resources"] == {
        "requests": {"cpu": "4", "memory": "32Gi", "nvidia.com/gpu": 1},
        "limits": {"memory": "32Gi", "nvidia.com/gpu": 1},
    }
    assert server["lifecycle"]["preStop"]["exec"]["command"] == ["/bin/sh", "-c", "sleep 120"]
    assert pod(backend)["terminationGracePeriodSeconds"] == 130
    assert server["args"][-2:] == ["--max-model-len", "8192"]
    ascend = pod(one(rendered["qwen-ascend"], "Deployment", "qwen-ascend-backend"))
    assert ascend["schedulerName"] == "volcano"
    assert ascend["nodeSelector"] == {"accelerator": "huawei-Ascend910"}
    meta = one(rendered["qwen-ascend"], "Deployment", "qwen-ascend-backend")["spec"]["template"]["metadata"]
    assert meta["annotations"] == {"scheduling.volcano.sh/queue-name": "inference"}
    cpu = pod(one(rendered["qwen-cpu"], "Deployment", "qwen-cpu-backend"))["containers"][0]
    assert cpu["resources"] == {"requests": {"cpu": "4", "memory": "4Gi"}, "limits": {"memory": "4Gi"}}
    pulls = pod(one(rendered["mistral-oci"], "Deployment", "mistral-oci-backend"))["imagePullSecrets"]
    assert pulls == [{"name": "registry-credentials"}]


def test_rendering_is_deterministic(examples: dict[str, Any]) -> None:
    service, runtime = examples["qwen-ha"]
    first = render(service, runtime)
    assert render(service, runtime) == first
    assert json.dumps(first, sort_keys=False) == json.dumps(render(service, runtime), sort_keys=False)


def test_prewarm_gets_the_runtimes_hub_token_only(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    token = {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}}}
    runtime = make_runtime(container={"env": [token, {"name": "OTHER", "value": "x"}]})
    job = one(render(make_service(cache={"prewarm": True}), runtime), "Job")
    env = pod(job)["containers"][0]["env"]
    assert token in env and not any(e["name"] == "OTHER" for e in env)
    oci = make_service(model={"source": {"uri": "oci://r.example.com/m/q@sha256:" + "e" * 64}})
    assert "HF_TOKEN" not in json.dumps(one(render(oci, runtime), "Job"))


INSTALLERS = re.compile(r"\b(pip3?|uv|apt(-get)?|apk|dnf|yum|conda|micromamba)\b|ensurepip|get-pip")


@pytest.mark.parametrize(
    "uri",
    [
        "hf://Qwen/Qwen2.5-0.5B-Instruct",
        "modelscope://qwen/Qwen2.5-0.5B-Instruct",
        "oci://r.example.com/m@sha256:" + "a" * 64,
    ],
)
def test_prewarm_installs_nothing_at_run_time(
    make_service: MakeService, make_runtime: MakeRuntime, uri: str
) -> None:
    job = one(
        render(make_service(model={"source": {"uri": uri}}, cache={"prewarm": True}), make_runtime()), "Job"
    )
    for container in containers(job):
        text = " ".join([*container.get("command", []), *container.get("args", [])])
        text += " ".join(str(e.get("value", "")) for e in container.get("env", []))
        assert not INSTALLERS.search(text), (container["name"], INSTALLERS.search(text))
    if not uri.startswith("oci://"):
        (download,) = pod(job)["containers"]
        assert download["image"] == settings.DEFAULT_IMAGE  # the Noctaya image: it ships the hub clients
        # non-root on a claim: it writes through the Pod's fsGroup (restricted Pod Security)
        assert download["securityContext"]["runAsNonRoot"] is True
        assert pod(job)["securityContext"]["fsGroup"] == download["securityContext"]["runAsUser"]


def test_the_noctaya_image_ships_the_hub_clients_the_download_imports() -> None:
    root = pathlib.Path(__file__).resolve().parents[2]
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]["hub"]
    pinned = {re.split(r"[=<>~!]", requirement)[0].replace("-", "_").lower() for requirement in extra}
    imported = set(re.findall(r'"(huggingface_hub|modelscope)"', prewarm._HUB_SCRIPT))
    assert imported == {"huggingface_hub", "modelscope"} and imported <= pinned
    constraints = (root / "constraints.txt").read_text().splitlines()
    assert {line.split("==")[0].lower() for line in constraints if "==" in line} >= imported  # pinned
    installs = [line for line in (root / "Dockerfile").read_text().splitlines() if "pip install" in line]
    assert any(
        "-c /wheels/constraints.txt" in line and "noctaya-*.whl)[all,hub]" in line for line in installs
    )


@pytest.mark.parametrize(
    ("cache", "pinned"),
    [
        ({}, True),  # NodeLocalPVC, the default: one ReadWriteOnce claim
        ({"strategy": "SharedPVC"}, False),
        ({"strategy": "HostPath"}, False),
        ({"strategy": "None"}, False),
    ],
)
def test_replicas_sharing_a_read_write_once_claim_share_its_node(
    make_service: MakeService, make_runtime: MakeRuntime, cache: dict[str, Any], pinned: bool
) -> None:
    service = make_service(cache=cache, scaling={"max": 3})
    backend = pod(one(render(service, make_runtime()), "Deployment", f"{service.name}-backend"))
    affinity = backend.get("affinity")
    if not pinned:
        assert affinity is None
        return
    assert affinity == {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchLabels": {
                            "app.kubernetes.io/component": "backend",
                            naming.LLMSERVICE_LABEL: service.name,
                        }
                    },
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


def test_a_prestaged_claim_pins_nothing(make_service: MakeService, make_runtime: MakeRuntime) -> None:
    service = make_service(model={"source": {"uri": "pvc://weights/qwen"}}, cache={"strategy": "None"})
    backend = pod(one(render(service, make_runtime()), "Deployment", f"{service.name}-backend"))
    assert "affinity" not in backend


def _server(manifests: list[Manifest], name: str = "qwen") -> tuple[Manifest, Manifest]:
    spec = pod(one(manifests, "Deployment", f"{name}-backend"))
    return spec, next(c for c in spec["containers"] if c["name"] == "server")


@pytest.mark.parametrize(
    ("resources", "size"),
    [({"memory": "64Gi"}, "32Gi"), ({}, "8Gi"), ({"memory": "64Gi", "sharedMemory": "2Gi"}, "2Gi")],
)
def test_dev_shm_is_memory_backed_and_sized(
    make_service: MakeService,
    make_runtime: MakeRuntime,
    schema_check: Callable[[Manifest], None],
    resources: dict[str, str],
    size: str,
) -> None:
    manifests = render(make_service(resources=resources), make_runtime())
    spec, server = _server(manifests)
    assert {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}} in spec["volumes"]
    assert {"name": "dshm", "mountPath": "/dev/shm"} in server["volumeMounts"]
    for manifest in manifests:
        schema_check(manifest)


def test_ascend_driver_files_are_mounted_from_the_host(
    make_service: MakeService, make_runtime: MakeRuntime, schema_check: Callable[[Manifest], None]
) -> None:
    ascend = make_runtime(vendor="ascend", accelerator={"resourceName": "huawei.com/Ascend910"})
    manifests = render(make_service(), ascend)
    spec, server = _server(manifests)
    expected = {
        "/usr/local/Ascend/driver": "Directory",
        "/usr/local/bin/npu-smi": "File",
        "/usr/local/dcmi": "Directory",
        "/etc/ascend_install.info": "File",
    }
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounted = {m["mountPath"]: m for m in server["volumeMounts"] if m["name"].startswith("ascend-")}
    assert set(mounted) == set(expected)
    for path, kind in expected.items():
        assert mounted[path]["readOnly"] is True
        assert volumes[mounted[path]["name"]]["hostPath"] == {"path": path, "type": kind}
    for manifest in manifests:
        schema_check(manifest)
    nvidia_spec, _ = _server(render(make_service(), make_runtime()))
    assert not any("hostPath" in v for v in nvidia_spec["volumes"])  # only Ascend's adapter adds host files
    job = one(render(make_service(cache={"prewarm": True}), ascend), "Job")
    assert "hostPath" not in json.dumps(job)  # the prewarm Job holds no accelerator and no driver


def test_runtime_volumes_are_rendered_and_may_replace_an_adapter_default(
    make_service: MakeService, make_runtime: MakeRuntime, schema_check: Callable[[Manifest], None]
) -> None:
    runtime = make_runtime(
        vendor="ascend",
        accelerator={"resourceName": "huawei.com/Ascend910"},
        container={
            "volumes": [
                {"name": "driver", "hostPath": {"path": "/opt/ascend/driver", "type": "Directory"}},
                {"name": "conf", "configMap": {"name": "engine-conf", "optional": True}},
                {"name": "license", "secret": {"secretName": "lic"}},
                {"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
            ],
            "volumeMounts": [
                {"name": "driver", "mountPath": "/usr/local/Ascend/driver", "readOnly": True},
                {"name": "conf", "mountPath": "/etc/engine", "subPath": "conf.d"},
                {"name": "license", "mountPath": "/etc/license", "readOnly": True},
                {"name": "scratch", "mountPath": "/scratch"},
            ],
        },
    )
    manifests = render(make_service(), runtime)
    spec, server = _server(manifests)
    volumes = {v["name"]: v for v in spec["volumes"]}
    assert volumes["driver"]["hostPath"] == {"path": "/opt/ascend/driver", "type": "Directory"}
    assert "ascend-driver" not in volumes  # the runtime's mount at its path replaced the default
    assert {"ascend-npu-smi", "ascend-dcmi", "ascend-install-info"} <= set(volumes)
    assert volumes["conf"]["configMap"] == {"name": "engine-conf", "optional": True}
    assert volumes["license"]["secret"] == {"secretName": "lic", "defaultMode": 0o440}
    assert volumes["scratch"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"}
    mounts = {m["mountPath"]: m for m in server["volumeMounts"]}
    assert mounts["/etc/engine"] == {"name": "conf", "mountPath": "/etc/engine", "subPath": "conf.d"}
    assert mounts["/usr/local/Ascend/driver"]["name"] == "driver"
    for manifest in manifests:
        schema_check(manifest)


def test_a_runtime_volume_may_not_take_an_adapter_defaults_name(
    make_service: MakeService, make_runtime: MakeRuntime
) -> None:
    runtime = make_runtime(
        vendor="ascend",
        accelerator={"resourceName": "huawei.com/Ascend910"},
        container={"volumes": [{"name": "ascend-dcmi", "emptyDir": {}}]},
    )
    with pytest.raises(ValueError, match=r"volumes\[0\]\.name: 'ascend-dcmi' is the ascend adapter's own"):
        render(make_service(), runtime)
