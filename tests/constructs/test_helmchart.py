"""The Helm chart (``charts/noctaya``) is generated from the install construct and agrees with it.

Aspects: the committed chart is what ``noctaya chart`` generates (fresh); ``helm lint --strict`` passes;
``helm template`` with the default values gives what ``noctaya synth --install`` writes (without the
Namespace, which the release namespace replaces, and modulo Helm's labels); every value changes exactly
what the construct's matching property changes; values.schema.json refuses bad values; ``helm package``
keeps the CRDs and renders as the directory does.

Helm is the real one, built from its Go module by ``scripts/helm.sh`` (a missing Go fails the tests).
"""

from __future__ import annotations

import dataclasses
import io
import os
import pathlib
import subprocess
import tarfile
from collections.abc import Iterable, Mapping
from typing import Any

import pytest
import yaml

from noctaya.api import gatewaymemory
from noctaya.constructs import command, helmchart, install, settings, synthesis

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHART = ROOT / "charts" / "noctaya"
pytestmark = pytest.mark.timeout(900)  # the first run may build Helm


@pytest.fixture(scope="session")
def helm() -> str:
    path = os.environ.get("NOCTAYA_HELM")
    if not path:
        result = subprocess.run(
            ["bash", str(ROOT / "scripts" / "helm.sh")], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"scripts/helm.sh could not provide Helm:\n{result.stderr}"
        path = result.stdout.strip().splitlines()[-1]
    assert os.access(path, os.X_OK), f"Helm at {path} is not executable"
    return path


def _template(helm: str, *args: str, namespace: str = "noctaya-system") -> list[dict[str, Any]]:
    result = subprocess.run(
        [helm, "template", "noctaya", str(CHART), "--namespace", namespace, *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def _normalized(objects: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], Any]:
    """Keyed by (kind, namespace, name); Helm's labels taken out, the Namespace left out."""
    out: dict[tuple[str, str, str], Any] = {}
    for obj in objects:
        if obj["kind"] == "Namespace":
            continue
        body = yaml.safe_load(yaml.safe_dump(dict(obj)))
        labels = body["metadata"].get("labels") or {}
        labels.pop(helmchart.CHART_LABEL, None)
        labels[helmchart.MANAGED_BY] = "noctaya"
        meta = body["metadata"]
        out[(body["kind"], meta.get("namespace") or "", meta["name"])] = body
    return out


def test_the_chart_is_fresh() -> None:
    wanted = helmchart.files()
    committed = {
        p.relative_to(CHART).as_posix(): p.read_text(encoding="utf-8")
        for p in CHART.rglob("*")
        if p.is_file()
    }
    assert sorted(committed) == sorted(wanted), "charts/noctaya is stale: `noctaya chart -o charts/noctaya`"
    for name, text in wanted.items():
        assert committed[name] == text, f"charts/noctaya/{name} is stale: `noctaya chart -o charts/noctaya`"
    assert sorted(n for n in wanted if n.startswith("crds/")) == sorted(
        f"crds/{p.name}" for p in (ROOT / "dist" / "crds").iterdir()
    )
    for name in (n for n in wanted if n.startswith("crds/")):
        assert wanted[name] == (ROOT / "dist" / name).read_text(encoding="utf-8")


def test_helm_lint(helm: str) -> None:
    for extra in ([], ["--set-json", 'watchNamespaces=["a","b"]', "--set", "replicas=1"]):
        result = subprocess.run(
            [helm, "lint", "--strict", str(CHART), *extra], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr


def test_default_values_give_what_synth_writes(helm: str, tmp_path: pathlib.Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = command.main(
        [str(ROOT / "examples" / "runtimes"), "-o", str(tmp_path), "--install"], stdout=out, stderr=err
    )
    assert status == 0, err.getvalue()
    synthesized = list(yaml.safe_load_all((tmp_path / "install.yaml").read_text()))
    assert any(o["kind"] == "Namespace" for o in synthesized)
    assert _normalized(_template(helm)) == _normalized(synthesized)


DEFAULT = install.OperatorInstallProps(image=settings.DEFAULT_IMAGE)


@pytest.mark.parametrize(
    ("args", "props"),
    [
        (
            ["--set", "image.repository=registry.example/noctaya", "--set", "image.tag=1.2.3"],
            dataclasses.replace(
                DEFAULT,
                image="registry.example/noctaya:1.2.3",
                gateway_image="registry.example/noctaya:1.2.3",
            ),
        ),
        (
            ["--set", "gatewayImage.repository=registry.example/gw", "--set-string", "gatewayImage.tag=7"],
            dataclasses.replace(DEFAULT, gateway_image="registry.example/gw:7"),
        ),
        (["--set", "replicas=3"], dataclasses.replace(DEFAULT, replicas=3)),
        (["--set", "replicas=1"], dataclasses.replace(DEFAULT, replicas=1)),
        (
            ["--set", "replicas=1", "--set", "leaderElection.enabled=false"],
            dataclasses.replace(DEFAULT, replicas=1, leader_election=False),
        ),
        (
            ["--set-json", 'watchNamespaces=["llm","batch"]'],
            dataclasses.replace(DEFAULT, watch_namespaces=("llm", "batch")),
        ),
        (["--set", "logLevel=DEBUG"], dataclasses.replace(DEFAULT, log_level="DEBUG")),
        (
            ["--set-json", 'imagePullSecrets=[{"name":"regcred"},{"name":"mirror"}]'],
            dataclasses.replace(DEFAULT, image_pull_secrets=("regcred", "mirror")),
        ),
        (
            ["--set-string", "resources.requests.cpu=2", "--set", "resources.limits.memory=4Gi"],
            dataclasses.replace(
                DEFAULT, resources={"requests": {"cpu": "2", "memory": "256Mi"}, "limits": {"memory": "4Gi"}}
            ),
        ),
        (
            ["--set", "gateway.maxQueuedBodyBytes=268435456", "--set", "gateway.websocketMaxOpen=4"],
            dataclasses.replace(
                DEFAULT,
                gateway_bounds=dataclasses.replace(
                    gatewaymemory.DEFAULTS, max_queued_body_bytes=256 << 20, websocket_max_open=4
                ),
            ),
        ),
    ],
    ids=[
        "image",
        "gateway-image",
        "replicas-3",
        "replicas-1",
        "no-leader-election",
        "watch",
        "log",
        "pull-secrets",
        "resources",
        "gateway-bounds",
    ],
)
def test_values_change_what_the_construct_props_change(
    helm: str, args: list[str], props: install.OperatorInstallProps
) -> None:
    expected = _normalized(synthesis.render_install(props=props))
    assert _normalized(_template(helm, *args)) == expected
    assert expected != _normalized(synthesis.render_install(props=DEFAULT))


def test_the_release_namespace_places_the_operator(helm: str) -> None:
    expected = _normalized(synthesis.render_install(props=dataclasses.replace(DEFAULT, namespace="platform")))
    assert _normalized(_template(helm, namespace="platform")) == expected


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--set", "replicas=0"], "replicas"),
        (["--set", "gateway.maxConnections=0"], "maxConnections"),
        (["--set", "logLevel=TRACE"], "logLevel"),
        (["--set", "surprise=1"], "surprise"),
        (["--set-json", 'imagePullSecrets=["regcred"]'], "imagePullSecrets"),
        (["--set-json", 'watchNamespaces=["Not_A_Namespace"]'], "watchNamespaces"),
        (["--set", "replicas=3", "--set", "leaderElection.enabled=false"], "leaderElection"),
    ],
)
def test_bad_values_are_refused(helm: str, args: list[str], message: str) -> None:
    result = subprocess.run(
        [helm, "template", "noctaya", str(CHART), *args], capture_output=True, text=True, check=False
    )
    assert result.returncode != 0 and message in result.stderr, result.stderr


def test_the_packaged_chart_renders_the_same(helm: str, tmp_path: pathlib.Path) -> None:
    """``helm package`` (what a chart repository serves) keeps the CRDs and renders as the directory does."""
    result = subprocess.run(
        [helm, "package", str(CHART), "--destination", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    (archive,) = tmp_path.glob("noctaya-*.tgz")
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {f"noctaya/{name}" for name in helmchart.files()} <= names
    rendered = subprocess.run(
        [helm, "template", "noctaya", str(archive), "--namespace", "noctaya-system", "--include-crds"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert rendered.returncode == 0, rendered.stderr
    objects = [d for d in yaml.safe_load_all(rendered.stdout) if d]
    crds = [o for o in objects if o["kind"] == "CustomResourceDefinition"]
    assert sorted(c["metadata"]["name"] for c in crds) == sorted(
        p.name.removesuffix(".yaml") for p in (ROOT / "dist" / "crds").iterdir()
    )
    rest = [o for o in objects if o["kind"] != "CustomResourceDefinition"]
    assert _normalized(rest) == _normalized(_template(helm))
