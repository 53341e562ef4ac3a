"""The Backend construct on its own.

Aspects: a minimal backend is exactly the expected Deployment (no replicas, defaults for probes) and
Service (port ``http`` even when the container names its port otherwise); the drain widens the grace
to drain + 10 s and keeps a larger base grace; the progress deadline covers the startup-probe budget,
the marker wait and an image pull, and never drops below Kubernetes' default; the marker wait is
bounded and read-only; runtime
probes of every handler type translate, and unknown probe fields are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import constructs
import pytest

from noctaya.constructs import backend, kube, naming
from noctaya.runtime import delivery

Synth = Callable[[Callable[[constructs.Construct], object]], list[dict[str, Any]]]
IDENTITY = naming.ServiceIdentity(name="m", namespace="ns")
LABELS = IDENTITY.labels("backend")


def test_minimal_backend(synth: Synth) -> None:
    deployment, service = synth(
        lambda c: backend.Backend(
            c,
            "b",
            props=backend.BackendProps(identity=IDENTITY, image="engine:1", port_name="api", port=9000),
        )
    )
    assert deployment == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "labels": LABELS,
            "name": "m-backend",
            "namespace": "ns",
            # no spec.replicas (KEDA owns them): the operator creates it with these
            "annotations": {naming.INITIAL_REPLICAS_ANNOTATION: "0"},
        },
        "spec": {
            "progressDeadlineSeconds": 900,
            "selector": {
                "matchLabels": {"app.kubernetes.io/component": "backend", naming.LLMSERVICE_LABEL: "m"}
            },
            "template": {
                "metadata": {"labels": LABELS},
                "spec": {
                    "containers": [
                        {
                            "image": "engine:1",
                            "name": "server",
                            "ports": [{"containerPort": 9000, "name": "api", "protocol": "TCP"}],
                            "readinessProbe": {"httpGet": {"path": "/health", "port": "api"}},
                            "resources": {},
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                                "seccompProfile": {"type": "RuntimeDefault"},
                            },
                            "startupProbe": {
                                "failureThreshold": 60,
                                "httpGet": {"path": "/health", "port": "api"},
                                "periodSeconds": 10,
                            },
                        }
                    ],
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                },
            },
        },
    }
    assert service["spec"] == {
        "ports": [{"name": "http", "port": 9000, "protocol": "TCP", "targetPort": "api"}],
        "selector": {"app.kubernetes.io/component": "backend", naming.LLMSERVICE_LABEL: "m"},
    }


@pytest.mark.parametrize(
    ("drain", "base", "grace"),
    [(None, None, None), (None, 45, 45), (120, None, 130), (120, 300, 300), (0, 5, 10)],
)
def test_grace(drain: int | None, base: int | None, grace: int | None) -> None:
    props = backend.BackendProps(
        identity=IDENTITY, image="e", pre_stop_drain_seconds=drain, termination_grace_period_seconds=base
    )
    assert backend.grace_seconds(props) == grace


@pytest.mark.parametrize(
    ("startup", "marker", "deadline"),
    [
        ({"periodSeconds": 10, "failureThreshold": 60}, None, 900),  # API default startup probe
        ({"periodSeconds": 30, "failureThreshold": 120, "initialDelaySeconds": 60}, None, 3960),
        ({"periodSeconds": 10, "failureThreshold": 60}, 3600, 4500),  # waits for a prewarm first
        ({}, None, 600),  # a tiny budget keeps Kubernetes' default
    ],
)
def test_progress_deadline_covers_a_slow_healthy_start(
    startup: dict[str, int], marker: int | None, deadline: int
) -> None:
    assert backend.progress_deadline_seconds(startup=startup, marker_wait_seconds=marker) == deadline


def test_marker_wait_is_bounded(synth: Synth) -> None:
    volume = delivery.ModelVolume(
        name="model-cache", mount_path="/cache", read_only=True, claim_name="m-cache"
    )
    deployment, _ = synth(
        lambda c: backend.Backend(
            c,
            "b",
            props=backend.BackendProps(
                identity=IDENTITY,
                image="e",
                model_volume=volume,
                ready_marker="/cache/x/.noctaya-ready",
                ready_marker_timeout_seconds=61,
            ),
        )
    )
    wait = deployment["spec"]["template"]["spec"]["initContainers"][0]
    assert wait["volumeMounts"] == [{"mountPath": "/cache", "name": "model-cache", "readOnly": True}]
    script = wait["command"][-1]
    assert "-gt 31 ]" in script and "sleep 2" in script and "exit 1" in script


def test_probe_translation() -> None:
    probes: list[dict[str, Any]] = [
        {"exec": {"command": ["true"]}, "periodSeconds": 5},
        {"tcpSocket": {"port": 8000}, "initialDelaySeconds": 3},
        {"grpc": {"port": 9000, "service": "x"}},
        {
            "httpGet": {
                "path": "/h",
                "port": "http",
                "scheme": "HTTP",
                "httpHeaders": [{"name": "a", "value": "b"}],
            },
            "timeoutSeconds": 2,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
    ]
    for probe in probes:
        assert kube.probe(probe) is not None
    with pytest.raises(kube.TranslationError, match="unsupported field"):
        kube.probe({"httpGet": {"path": "/", "port": 1}, "bogus": 1})
    with pytest.raises(kube.TranslationError, match="port"):
        kube.probe({"tcpSocket": {"port": 1.5}})
