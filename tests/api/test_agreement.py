"""Differential test: the models and the generated CRD accept exactly the same documents.

Aspects:
- hypothesis builds LLMService and InferenceRuntime documents from a table of fields, each with valid
  values (absent included) and invalid ones (bounds, enums, types, durations, quantities, URIs,
  templates, ports); most documents are valid, then zero to two fields are spoiled, and valid values
  still combine into cross-field violations (``min > max``, ``source`` + ``catalogRef``, ``queue``
  without volcano ...);
- for every document, ``noctaya validate``'s models accept it exactly when the CRD does
  (openAPIV3Schema after defaulting + every CEL rule, evaluated with cel-python); both outcomes occur;
- when both accept, the object's wire form (``to_manifest()``) is accepted by the CRD too and parses
  back to the same object.
Reserved-field and metadata checks are offline-only by design and not part of the table.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noctaya.api import documents

DIGEST = "sha256:" + "ab" * 32
ABSENT = None  # a field left out of the document
Table = dict[str, tuple[list[Any], list[Any]]]

DURATIONS_OK = [ABSENT, "10s", "1m30s", "90s", "1h", "0.5s"]
DURATIONS_BAD = ["5 minutes", 300, "1d", ""]
QUANTITIES_OK = [ABSENT, "500m", "32Gi", "1e3", 2, "0.5"]
QUANTITIES_BAD = ["lots", "32GB", 0.5, "1 Gi"]

LLMSERVICE: Table = {
    "model.source.uri": (
        [
            "hf://Qwen/Qwen2.5-7B",
            "hf://a/b@main",
            "modelscope://q/m",
            f"oci://ghcr.io/a/b@{DIGEST}",
            "pvc://m/x",
        ],
        [
            "hf://Qwen",
            "hf://a--b/c",
            "oci://ghcr.io/a/b:latest",
            "oci://ghcr.io/a/b@sha256:ab",
            "pvc://m/../x",
            "s3://b/m",
            "",
            5,
        ],
    ),
    "model.source.secretRef": ([ABSENT, ABSENT, {"name": "registry"}], [{"name": ""}, "registry"]),
    "model.catalogRef": ([ABSENT, ABSENT, ABSENT, "qwen"], ["", 1]),
    "runtime.name": (["vllm", "vllm", ABSENT], ["", ["vllm"]]),
    "runtime.selector": (
        [ABSENT, ABSENT, {"vendor": ["nvidia", "cpu"]}],
        [{"vendor": []}, {"vendor": ["tpu"]}],
    ),
    "runtime.argsOverride": ([ABSENT, ["--x", "1"]], ["--x", [1]]),
    "resources.accelerators": ([ABSENT, 1, 4], [0, "2", 1.5]),
    "resources.cpu": (QUANTITIES_OK, QUANTITIES_BAD),
    "resources.memory": (QUANTITIES_OK, QUANTITIES_BAD),
    "resources.sharedMemory": ([ABSENT, "16Gi", "512Mi"], ["0Gi", "1G", 16, "1.5Gi", "16Gib", ""]),
    "scaling.min": ([ABSENT, 0, 1, 3], [-1, "0"]),
    "scaling.max": ([ABSENT, 1, 2, 8], [0, True]),
    "scaling.metric": ([ABSENT, "queueDepth"], ["cpu", "QueueDepth"]),
    "scaling.target": ([ABSENT, 10, 1], [0, -5]),
    "scaling.activationTimeout": (DURATIONS_OK, [*DURATIONS_BAD, "0s", "-1s"]),
    "scaling.scaleDownStabilization": (
        [ABSENT, "0s", "5m", "1h", "90s"],
        [*DURATIONS_BAD, "2h", "1500ms", "-1s"],
    ),
    "scaling.drainTimeout": ([*DURATIONS_OK, "0s"], [*DURATIONS_BAD, "-5s"]),
    "scaling.externalScaler": (
        [ABSENT, {"tls": {"serverSecretName": "s", "authenticationRef": {"name": "a"}}}],
        [
            {"tls": {"serverSecretName": "", "authenticationRef": {"name": "a"}}},
            {"tls": {"serverSecretName": "s", "authenticationRef": {"name": "a", "kind": "Secret"}}},
        ],
    ),
    "cache.strategy": ([ABSENT, "SharedPVC", "None", "HostPath"], ["Local", "none"]),
    "cache.size": (QUANTITIES_OK, QUANTITIES_BAD),
    "cache.prewarm": ([ABSENT, True, False], ["yes"]),
    "endpoint.maxQueue": ([ABSENT, 1, 500], [0]),
    "endpoint.replicas": ([ABSENT, 1, 3], [0]),
    "endpoint.openAICompatible": ([ABSENT, False], ["true"]),
    "endpoint.coldStart.mode": ([ABSENT, "reject", "keepalive"], ["queue"]),
    "endpoint.coldStart.heartbeatInterval": (DURATIONS_OK, [*DURATIONS_BAD, "0s"]),
    "endpoint.authentication": (
        [ABSENT, {"secretRef": {"name": "k", "key": "token"}}],
        [{"secretRef": {"name": "k"}}],
    ),
    "endpoint.resources.requests.cpu": (QUANTITIES_OK, QUANTITIES_BAD),
    "imagePullSecrets": ([ABSENT, [{"name": "r"}]], [[{}], [{"name": ""}]]),
    "unknownField": ([ABSENT], [1]),
}

TEMPLATES_OK = ["--model", "{{ .Model.Path }}", "{{.Service.Name}}-{{ .Service.Namespace }}", "a{b}", "}}"]
TEMPLATES_BAD = ["{{ .Foo }}", "{{- .Model.Path }}", "{{", "{{ .Model.Path | q }}"]
PORTS_OK = [ABSENT, "http", 8000, "metrics"]
PORTS_BAD = [0, 70000, "Metrics_Port", "a-very-long-port-name", 1.5]
PROBES_OK = [
    ABSENT,
    {"httpGet": {"port": "http", "path": "/health"}},
    {"tcpSocket": {"port": 8000}, "periodSeconds": 5},
    {"exec": {"command": ["true"]}},
    {"grpc": {"port": 9000}},
]
PROBES_BAD = [
    {"httpGet": {"port": 0}},
    {"periodSeconds": 1},
    {"grpc": {"port": 9000}, "exec": {"command": ["true"]}},
    {"httpGet": {"port": "http", "scheme": "FTP"}},
    {"tcpSocket": {"port": 80}, "periodSeconds": 0},
]

VOLUMES_OK = [
    ABSENT,
    [{"name": "lic", "configMap": {"name": "license"}}],
    [
        {"name": "drv", "hostPath": {"path": "/opt/drv", "type": "Directory"}},
        {"name": "scratch", "emptyDir": {"medium": "Memory", "sizeLimit": "1Gi"}},
    ],
    [{"name": "lic", "secret": {"secretName": "key", "optional": True}}],
]
VOLUMES_BAD = [
    [{"name": "dshm", "emptyDir": {}}],
    [{"name": "a"}],
    [{"name": "a", "emptyDir": {}, "secret": {"secretName": "s"}}],
    [{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}],
    [{"name": "a", "hostPath": {"path": "relative"}}],
    [{"name": "a", "hostPath": {"path": "/x", "type": "Pipe"}}],
    [{"name": "a", "nfs": {"server": "s", "path": "/"}}],
    [{"name": f"v{i}", "emptyDir": {}} for i in range(17)],
]
MOUNTS_OK = [
    ABSENT,
    [{"name": "lic", "mountPath": "/etc/license", "readOnly": True}],
    [{"name": "drv", "mountPath": "/opt/drv", "subPath": "lib64"}],
]
MOUNTS_BAD = [
    [{"name": "lic", "mountPath": "/cache/x"}],
    [{"name": "lic", "mountPath": "/dev"}],
    [{"name": "lic", "mountPath": "/etc/../x"}],
    [{"name": "lic", "mountPath": "/a"}, {"name": "lic", "mountPath": "/a"}],
    [{"name": "lic", "mountPath": "/a", "subPath": "../x"}],
    [{"name": "lic", "mountPath": "relative"}],
]

RUNTIME: Table = {
    "family": ([ABSENT, "vllm", "sglang", "llamacpp"], ["triton"]),
    "vendor": (["nvidia", "ascend", "cpu", "cpu"], ["tpu", ABSENT]),
    "priority": ([ABSENT, 0, -3, 2**31 - 1], [2**31, "high"]),
    "container.image": (["img:1"], ["", ABSENT]),
    "container.args": (
        [ABSENT, ["--model", "{{ .Model.Path }}"], TEMPLATES_OK],
        [[t] for t in TEMPLATES_BAD],
    ),
    "container.env": (
        [
            ABSENT,
            [{"name": "A", "value": t} for t in TEMPLATES_OK],
            [{"name": "B", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
        ],
        [[{"name": "A", "value": t}] for t in TEMPLATES_BAD]
        + [
            [{"name": "1 BAD"}],
            [{"name": "A", "value": "x", "valueFrom": {"fieldRef": {"fieldPath": "a"}}}],
            [{"name": "A", "valueFrom": {}}],
        ],
    ),
    "container.port.name": ([ABSENT, "http", "serve"], ["HTTP", "a-very-long-name"]),
    "container.port.containerPort": ([ABSENT, 8000, 1], [0, 70000]),
    "container.volumes": (VOLUMES_OK, VOLUMES_BAD),
    "container.volumeMounts": (MOUNTS_OK, MOUNTS_BAD),
    "accelerator.resourceName": (["nvidia.com/gpu", "nvidia.com/gpu", ABSENT], ["", "bad name"]),
    "accelerator.tolerations": (
        [ABSENT, [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]],
        [[{"operator": "Exists", "value": "v"}], [{"operator": "Maybe"}]],
    ),
    "accelerator.scheduler": (
        [ABSENT, {"name": "volcano", "queue": "q"}, {"name": "x"}, {"queue": "q"}],
        [{"name": ""}],
    ),
    "accelerator.nodeSelector": ([ABSENT, {"a": "b"}], [{"a": 1}]),
    "health.readiness": (PROBES_OK, PROBES_BAD),
    "health.liveness": (PROBES_OK, PROBES_BAD),
    "health.startup": (PROBES_OK, PROBES_BAD),
    "lifecycle.terminationGracePeriodSeconds": ([ABSENT, 30], [0]),
    "lifecycle.preStopDrain": ([ABSENT, True], ["no"]),
    "metrics.queueDepth": ([ABSENT, "vllm:num_requests_waiting"], [""]),
    "metrics.path": ([ABSENT, "/m"], ["m"]),
    "metrics.port": (PORTS_OK, PORTS_BAD),
}


@st.composite
def _documents(draw: st.DrawFn, kind: str, table: Table) -> dict[str, Any]:
    values = {path: draw(st.sampled_from(ok)) for path, (ok, _) in table.items()}
    for path in draw(st.lists(st.sampled_from(sorted(table)), max_size=2, unique=True)):
        values[path] = draw(st.sampled_from(table[path][1]))
    spec: dict[str, Any] = {}
    for path, value in values.items():
        if value is ABSENT:
            continue
        *parents, last = path.split(".")
        node = spec
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value
    metadata = {"name": "x", "namespace": "ai"} if kind == "LLMService" else {"name": "x"}
    return {"apiVersion": "serving.noctaya.io/v1alpha1", "kind": kind, "metadata": metadata, "spec": spec}


OUTCOMES: collections.Counter[tuple[str, bool]] = collections.Counter()


def _check(doc: dict[str, Any], crd_checks: dict[str, Any]) -> None:
    kind = doc["kind"]
    checked = documents.check_document(documents.Document(source="x", index=1, line=1, data=doc, lines={}))
    offline = [p for p in checked.problems if "reserved, not implemented" not in p.message]
    crd_errors = crd_checks[kind].errors(doc)
    assert (offline == []) == (crd_errors == []), (doc, [str(p) for p in offline], crd_errors)
    OUTCOMES[(kind, offline == [])] += 1
    if offline == []:
        model = documents.KINDS[kind]
        obj = model.model_validate(doc)
        wire = obj.to_manifest()
        assert crd_checks[kind].errors(wire) == []
        assert model.model_validate(wire) == obj


_SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize(("kind", "spec"), [("LLMService", LLMSERVICE), ("InferenceRuntime", RUNTIME)])
def test_models_and_crd_agree(kind: str, spec: Any, crd_checks: dict[str, Any]) -> None:
    """The models and the CRD agree on every generated document, and both outcomes occur often."""

    @_SETTINGS
    @given(doc=_documents(kind, spec))
    def agree(doc: dict[str, Any]) -> None:
        _check(doc, crd_checks)

    before = OUTCOMES.copy()
    agree()
    seen = OUTCOMES - before
    assert seen[(kind, True)] >= 10 and seen[(kind, False)] >= 10, seen
