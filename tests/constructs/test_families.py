"""The smaller constructs: aggregate scaler, autoscaling, cache, prewarm, operator install.

Aspects: the scaler's config carries the bounds and the token Secret appears only with a token; the
ScaledObject refuses impossible bounds; each cache strategy yields a claim of the right mode or no
object, and BakedImage is refused; the prewarm Job of a hub source runs one downloader and of an
oci:// source a pull then a stage container, with no accelerator and the registry file projected;
the operator install grants
Leases only in its namespace, runs 2 replicas with anti-affinity and a PDB, and drops the PDB at 1,
with a read-only root and a bounded writable /tmp (jsii unpacks its runtime there);
props hashes ignore fields left at their default (adding one keeps existing hashes), and the render
settings' defaults are the construct props' own (so a default render leaves them out of the hash).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import constructs
import pytest

from noctaya.api import access, sources
from noctaya.constructs import autoscaling, backend, cache, install, naming, prewarm, scaler, settings
from noctaya.runtime import delivery

Synth = Callable[[Callable[[constructs.Construct], object]], list[dict[str, Any]]]
IDENTITY = naming.ServiceIdentity(name="m", namespace="ns")


def test_scaler(synth: Synth) -> None:
    props = scaler.AggregateScalerProps(identity=IDENTITY, image="noctaya:1", max_member_demand=150)
    config = scaler.scaler_config(props).document()
    assert config["maxMemberDemand"] == 150 and config["tokenFile"] == "/etc/noctaya/scaler-token/token"
    kinds = [m["kind"] for m in synth(lambda c: scaler.AggregateScaler(c, "s", props=props))]
    assert kinds == ["ConfigMap", "Deployment", "Service"]
    with_token = synth(
        lambda c: scaler.AggregateScaler(
            c, "s", props=scaler.AggregateScalerProps(identity=IDENTITY, image="noctaya:1", token="abc")
        )
    )
    secret = next(m for m in with_token if m["kind"] == "Secret")
    assert secret["stringData"] == {"token": "abc"} and secret["type"] == "Opaque"
    assert "abc" not in secret["metadata"]["annotations"][naming.SPEC_HASH_ANNOTATION]
    with pytest.raises(ValueError, match="token"):
        synth(
            lambda c: scaler.AggregateScaler(
                c, "s", props=scaler.AggregateScalerProps(identity=IDENTITY, image="x", token="  ")
            )
        )


@pytest.mark.parametrize(("low", "high", "window"), [(-1, 1, 300), (2, 1, 300), (0, 0, 300), (0, 1, 3601)])
def test_autoscaling_bounds(synth: Synth, low: int, high: int, window: int) -> None:
    with pytest.raises(ValueError, match=r"spec\.scaling"):
        synth(
            lambda c: autoscaling.Autoscaling(
                c,
                "a",
                props=autoscaling.AutoscalingProps(
                    identity=IDENTITY,
                    min_replicas=low,
                    max_replicas=high,
                    scale_down_stabilization_seconds=window,
                ),
            )
        )


@pytest.mark.parametrize(
    ("strategy", "mode"),
    [("NodeLocalPVC", "ReadWriteOnce"), ("SharedPVC", "ReadWriteMany"), ("HostPath", None), ("None", None)],
)
def test_cache(synth: Synth, strategy: str, mode: str | None) -> None:
    manifests = synth(
        lambda c: cache.Cache(
            c,
            "c",
            props=cache.CacheProps(
                identity=IDENTITY, strategy=strategy, size="10Gi", storage_class_name="fast"
            ),
        )
    )
    if mode is None:
        assert manifests == []
        return
    (claim,) = manifests
    assert claim["metadata"]["name"] == "m-cache"
    assert claim["spec"] == {
        "accessModes": [mode],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "fast",
        "volumeMode": "Filesystem",
    }


def test_cache_baked_image_refused(synth: Synth) -> None:
    with pytest.raises(delivery.DeliveryError, match="BakedImage is reserved"):
        synth(lambda c: cache.Cache(c, "c", props=cache.CacheProps(identity=IDENTITY, strategy="BakedImage")))


def _prewarm(
    synth: Synth, uri: str, secret: str | None = None, stage_size_limit: str | None = None
) -> dict[str, Any]:
    plan = delivery.plan(
        source=sources.parse_source(uri),
        strategy="SharedPVC",
        prewarm=True,
        service="m",
        namespace="ns",
        claim_name="m-cache",
    )
    staging = plan.staging
    assert staging is not None
    (job,) = synth(
        lambda c: prewarm.Prewarm(
            c,
            "p",
            props=prewarm.PrewarmProps(
                identity=IDENTITY,
                staging=staging,
                cache_volume=plan.volume,
                registry_secret=secret,
                stage_size_limit=stage_size_limit,
                tolerations=({"key": "gpu", "operator": "Exists"},),
            ),
        )
    )
    return job


def test_hub_prewarm(synth: Synth) -> None:
    job = _prewarm(synth, "hf://Qwen/Qwen2.5-7B-Instruct@abc123")
    pod = job["spec"]["template"]["spec"]
    assert job["spec"]["backoffLimit"] == 3 and pod["restartPolicy"] == "Never"
    (container,) = pod["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["REPO_ID"] == "Qwen/Qwen2.5-7B-Instruct" and env["REVISION"] == "abc123"
    assert env["MODEL_DIR"] == "/cache/models/huggingface/Qwen/Qwen2.5-7B-Instruct"
    assert not any("gpu" in r for r in container["resources"]["limits"])
    assert pod["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    script = container["command"][-1]
    assert (
        script.index("rmtree")
        < script.index("snapshot_download")
        < script.index("rename")
        < script.index("write_text")
    )


def test_oci_prewarm(synth: Synth) -> None:
    job = _prewarm(
        synth, "oci://r.example.com/m/q@sha256:" + "f" * 64, secret="regcred", stage_size_limit="20Gi"
    )
    pod = job["spec"]["template"]["spec"]
    stage_volume = next(v for v in pod["volumes"] if v["name"] == "stage")
    assert stage_volume == {"name": "stage", "emptyDir": {"sizeLimit": "20Gi"}}  # bounded like the cache
    (pull,) = pod["initContainers"]
    (stage,) = pod["containers"]
    assert pull["command"] == ["oras"]
    assert pull["args"] == [
        "pull",
        "r.example.com/m/q@sha256:" + "f" * 64,
        "--output",
        "/stage",
        "--no-tty",
        "--registry-config",
        "/etc/noctaya/registry/config.json",
    ]
    assert {m["mountPath"] for m in pull["volumeMounts"]} == {"/stage", "/etc/noctaya/registry", "/tmp"}
    assert {m["mountPath"]: m.get("readOnly", False) for m in stage["volumeMounts"]} == {
        "/stage": True,
        "/cache": False,
    }
    assert {e["name"]: e["value"] for e in stage["env"]}["STAGE"] == "/stage"
    assert pod["securityContext"]["fsGroup"] == 65532


def test_operator_install(synth: Synth) -> None:
    manifests = synth(
        lambda c: install.OperatorInstall(c, "i", props=install.OperatorInstallProps(image="op:1"))
    )
    kinds = [m["kind"] for m in manifests]
    assert kinds == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
        "Role",
        "RoleBinding",
        "Deployment",
        "PodDisruptionBudget",
    ]
    # RBAC is the table of noctaya.api.access, nothing more (tests/operator/test_access.py)
    roles = {m["metadata"]["name"]: m["rules"] for m in manifests if m["kind"] in {"ClusterRole", "Role"}}
    assert roles == {
        "noctaya-operator": install.rules(access.Scope.CLUSTER),
        "noctaya-operator-watched": install.rules(access.Scope.WATCHED),
        "noctaya-operator-leader-election": install.rules(access.Scope.LEASE),
    }
    assert all(
        "*" not in r["verbs"] + r["resources"] + r["apiGroups"] for rules in roles.values() for r in rules
    )
    role = next(m for m in manifests if m["kind"] == "Role")
    assert role["metadata"]["namespace"] == "noctaya-system"
    assert role["rules"][0]["resources"] == ["leases"]
    deployment = next(m for m in manifests if m["kind"] == "Deployment")
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["template"]["spec"]["containers"][0]["args"] == ["operator"]
    assert "podAntiAffinity" in deployment["spec"]["template"]["spec"]["affinity"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["NOCTAYA_HEALTH_LISTEN"] == ":8081" and env["PYTHONOPTIMIZE"] == "1"
    assert "POD_NAMESPACE" in env
    assert container["ports"] == [{"containerPort": 8081, "name": "health", "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    # read-only root: jsii needs a writable temporary directory and $HOME (its package cache)
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["volumeMounts"] == [{"mountPath": "/tmp", "name": "scratch"}]
    assert env["HOME"] == "/tmp"
    assert deployment["spec"]["template"]["spec"]["volumes"] == [
        {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}}
    ]
    assert next(m for m in manifests if m["kind"] == "PodDisruptionBudget")["spec"]["minAvailable"] == 1
    single = synth(
        lambda c: install.OperatorInstall(
            c, "i", props=install.OperatorInstallProps(image="op:1", replicas=1, create_namespace=False)
        )
    )
    assert "PodDisruptionBudget" not in [m["kind"] for m in single] and "Namespace" not in [
        m["kind"] for m in single
    ]
    confined = synth(
        lambda c: install.OperatorInstall(
            c,
            "i",
            props=install.OperatorInstallProps(
                image="op:1", replicas=1, leader_election=False, watch_namespaces=("a", "b")
            ),
        )
    )
    placed = sorted(
        (m["kind"], m["metadata"].get("namespace"), m["metadata"]["name"])
        for m in confined
        if "Role" in m["kind"]
    )
    assert placed == [
        ("ClusterRole", None, "noctaya-operator"),
        ("ClusterRoleBinding", None, "noctaya-operator"),
        ("Role", "a", "noctaya-operator-watched"),
        ("Role", "b", "noctaya-operator-watched"),
        ("RoleBinding", "a", "noctaya-operator-watched"),
        ("RoleBinding", "b", "noctaya-operator-watched"),
    ]
    cluster = next(m for m in confined if m["kind"] == "ClusterRole")["rules"]
    assert cluster == install.rules(access.Scope.CLUSTER) + install.rules(access.Scope.SCAN)
    env = {
        e["name"]: e.get("value")
        for e in next(m for m in confined if m["kind"] == "Deployment")["spec"]["template"]["spec"][
            "containers"
        ][0]["env"]
    }
    assert env["NOCTAYA_NAMESPACE"] == "a,b" and env["NOCTAYA_LEADER_ELECTION"] == "false"
    with pytest.raises(ValueError, match="leader election"):
        synth(
            lambda c: install.OperatorInstall(
                c, "i", props=install.OperatorInstallProps(image="op:1", leader_election=False)
            )
        )


def test_props_hash_ignores_defaulted_fields() -> None:
    import dataclasses

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Before:
        identity: naming.ServiceIdentity
        image: str
        retries: int = 3

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class After:
        identity: naming.ServiceIdentity
        image: str
        retries: int = 3
        added: tuple[str, ...] = ()

    other = naming.ServiceIdentity(name="other", namespace="x", owner_references=())
    assert naming.props_hash(Before(identity=IDENTITY, image="a")) == naming.props_hash(
        After(identity=other, image="a")
    )
    assert naming.props_hash(After(identity=IDENTITY, image="a", added=("x",))) != naming.props_hash(
        After(identity=IDENTITY, image="a")
    )
    assert naming.props_hash(Before(identity=IDENTITY, image="a")) != naming.props_hash(
        Before(identity=IDENTITY, image="b")
    )


def test_render_settings_defaults_are_the_construct_defaults() -> None:
    defaults = settings.RenderSettings()
    plan = delivery.plan(
        source=sources.parse_source("oci://r.example/m@sha256:" + "ab" * 32),
        strategy="SharedPVC",
        prewarm=False,
        service="m",
        namespace="ns",
        claim_name="m-cache",
    )
    assert plan.staging is not None
    bare = prewarm.PrewarmProps(identity=IDENTITY, staging=plan.staging, cache_volume=plan.volume)
    from_settings = prewarm.PrewarmProps(
        identity=IDENTITY,
        staging=plan.staging,
        cache_volume=plan.volume,
        hub_image=defaults.hub_image or defaults.gateway_image,
        oras_image=defaults.oras_image,
        stage_image=defaults.stage_image,
        backoff_limit=defaults.prewarm_backoff_limit,
        active_deadline_seconds=defaults.prewarm_deadline_seconds,
    )
    assert naming.props_hash(from_settings) == naming.props_hash(bare)
    backend_props = backend.BackendProps(identity=IDENTITY, image="e:1")
    assert backend_props.wait_image == defaults.wait_image
    assert backend_props.ready_marker_timeout_seconds == defaults.marker_wait_seconds
