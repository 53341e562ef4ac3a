"""``noctaya synth`` (``noctaya.constructs.command.main``) and the repository's cdk8s app.

Aspects: the examples render into ``<namespace>/<name>.yaml`` plus ``install.yaml``; two runs give
byte-identical files and the second changes nothing; the output equals what ``render_llmservice``
returns; problems name the file, the document and the field (invalid field, unknown runtime, ambiguous
runtime, BakedImage, undeliverable cache, duplicates, missing inputs) and nothing is written then;
``--scaler-token-file`` adds the token Secret (and bad token files are usage errors); without it no
Secret is rendered; ``python -m noctaya.constructs`` fills a ``CDK8S_OUTDIR`` with CRDs, install,
examples, security and observability; ``noctaya synth`` is reachable through the CLI.
"""

from __future__ import annotations

import io
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest
import yaml

from noctaya import cli
from noctaya.constructs import command

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

RUNTIME = """
apiVersion: serving.noctaya.io/v1alpha1
kind: InferenceRuntime
metadata: {name: %(name)s}
spec:
  vendor: nvidia
  priority: %(priority)d
  container: {image: vllm/vllm-openai:v0.9.2, args: ["--model", "{{ .Model.Path }}"]}
  accelerator: {resourceName: nvidia.com/gpu}
"""
SERVICE = """
apiVersion: serving.noctaya.io/v1alpha1
kind: LLMService
metadata: {name: %(name)s, namespace: ai}
spec:
  model: {source: {uri: "hf://Qwen/Qwen2.5-7B-Instruct"}}
  runtime: %(runtime)s
  endpoint: {replicas: %(replicas)d}
  cache: %(cache)s
"""


def _service(
    name: str = "qwen", runtime: str = "{selector: {vendor: [nvidia]}}", replicas: int = 1, cache: str = "{}"
) -> str:
    return SERVICE % {"name": name, "runtime": runtime, "replicas": replicas, "cache": cache}


def _runtime(name: str = "vllm", priority: int = 0) -> str:
    return RUNTIME % {"name": name, "priority": priority}


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    status = command.main(list(argv), stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def _tree(directory: pathlib.Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()
    }


def test_examples_render_byte_identically(tmp_path: pathlib.Path) -> None:
    status, out, err = _run(str(EXAMPLES), "-o", str(tmp_path / "a"), "--install")
    assert status == 0, err
    assert "rendered 10 LLMService(s)" in out
    first = _tree(tmp_path / "a")
    assert "install.yaml" in first and "llm/qwen-nvidia.yaml" in first and len(first) == 11
    status, out, _ = _run(str(EXAMPLES), "-o", str(tmp_path / "a"), "--install", "--force")
    assert status == 0 and "0 changed" in out
    assert _tree(tmp_path / "a") == first
    assert _run(str(EXAMPLES), "-o", str(tmp_path / "b"), "--install")[0] == 0
    assert _tree(tmp_path / "b") == first
    # the CRDs live in one place (`noctaya crds`), never in install.yaml; it is dist/install.yaml
    assert b"CustomResourceDefinition" not in first["install.yaml"]
    assert first["install.yaml"] == (ROOT / "dist" / "install.yaml").read_bytes()
    for document in yaml.safe_load_all(first["llm/qwen-ha.yaml"]):
        assert document["metadata"]["namespace"] == "llm"
    assert not any(d["kind"] == "Secret" for d in yaml.safe_load_all(first["llm/qwen-ha.yaml"]))


@pytest.mark.parametrize(
    ("documents", "expected"),
    [
        (
            _service() + "---" + _runtime().replace("priority: 0", 'priority: "high"'),
            "InferenceRuntime vllm: spec.priority",
        ),
        (
            _service(runtime="{name: missing}"),
            "LLMService ai/qwen: spec.runtime.name: InferenceRuntime 'missing' not found",
        ),
        (
            _service() + "---" + _runtime("a", 3) + "---" + _runtime("b", 3),
            "LLMService ai/qwen: spec.runtime.selector.vendor: vendor 'nvidia' has 2 InferenceRuntimes "
            "with the top priority 3: a, b",
        ),
        (_service(cache="{strategy: BakedImage}") + "---" + _runtime(), "spec.cache.strategy"),
        (
            _service(cache="{strategy: None, prewarm: true}") + "---" + _runtime(),
            "LLMService ai/qwen: spec.cache.strategy: None keeps no files",
        ),
        (_service() + "---" + _service() + "---" + _runtime(), "LLMService ai/qwen: also defined in"),
        ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "ConfigMap"),
        ("spec: [unclosed", "in.yaml"),
    ],
)
def test_problems_name_file_document_and_field(tmp_path: pathlib.Path, documents: str, expected: str) -> None:
    source = tmp_path / "in.yaml"
    source.write_text(documents)
    status, _, err = _run(str(source), "-o", str(tmp_path / "out"))
    assert status == 1
    assert expected in err, err
    assert str(source) in err
    assert "nothing written" in err
    assert not (tmp_path / "out").exists()


def test_committed_files_are_not_overwritten_unless_asked(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    status, _, err = _run(str(EXAMPLES), "-o", str(out))
    assert status == 1 and "already holds files" in err and "--force" in err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]
    assert _run(str(EXAMPLES), "-o", str(out), "--force")[0] == 0
    assert (out / "notes.txt").read_text() == "mine" and not (out / "install.yaml").exists()
    assert (out / "llm" / "qwen-nvidia.yaml").is_file()


def test_install_options(tmp_path: pathlib.Path) -> None:
    status, _, err = _run(
        str(EXAMPLES / "runtimes"),
        "-o",
        str(tmp_path / "out"),
        "--install",
        "--operator-replicas",
        "1",
        "--operator-no-leader-election",
        "--operator-watch-namespace",
        "llm",
        "--operator-log-level",
        "DEBUG",
    )
    assert status == 0, err
    objects = list(yaml.safe_load_all((tmp_path / "out" / "install.yaml").read_text()))
    kinds = [(o["kind"], o["metadata"].get("namespace")) for o in objects]
    assert ("Role", "llm") in kinds and ("PodDisruptionBudget", "noctaya-system") not in kinds
    env = {e["name"]: e.get("value") for e in objects[-1]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["NOCTAYA_NAMESPACE"] == "llm" and env["NOCTAYA_LOG_LEVEL"] == "DEBUG"
    status, _, err = _run(
        str(EXAMPLES / "runtimes"), "-o", str(tmp_path / "two"), "--install", "--operator-no-leader-election"
    )
    assert status == 2 and "leader election" in err


def test_missing_input_and_usage_errors(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = _run(str(tmp_path / "nope.yaml"), "-o", str(tmp_path / "out"))
    assert status == 1 and "no such file or directory" in err
    with pytest.raises(SystemExit) as info:
        command.main([str(EXAMPLES)])  # -o is required
    assert info.value.code == 2
    assert "--output" in capsys.readouterr().err


def test_scaler_token_file(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "in.yaml"
    source.write_text(_service(replicas=2) + "---" + _runtime())
    token = tmp_path / "token"
    token.write_text("0123456789abcdef\n")
    status, _, err = _run(str(source), "-o", str(tmp_path / "out"), "--scaler-token-file", str(token))
    assert status == 0, err
    secret = next(
        d
        for d in yaml.safe_load_all((tmp_path / "out" / "ai" / "qwen.yaml").read_text())
        if d["kind"] == "Secret"
    )
    assert secret["metadata"]["name"] == "qwen-scaler-token"
    assert secret["stringData"] == {"token": "0123456789abcdef"}
    assert not (tmp_path / "out" / "install.yaml").exists()
    for bad in ("", "two words", "x" * 5000):
        token.write_text(bad)
        status, _, err = _run(str(source), "-o", str(tmp_path / "bad"), "--scaler-token-file", str(token))
        assert status == 2 and "--scaler-token-file" in err
    assert (
        _run(str(source), "-o", str(tmp_path / "bad"), "--scaler-token-file", str(tmp_path / "none"))[0] == 2
    )


def test_reachable_through_the_cli(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "in.yaml"
    source.write_text(_service() + "---" + _runtime())
    assert cli.main(["synth", str(source), "-o", str(tmp_path / "out"), "--gateway-image", "gw:1"]) == 0
    text = (tmp_path / "out" / "ai" / "qwen.yaml").read_text()
    assert "image: gw:1" in text


@pytest.mark.timeout(120)
def test_cdk8s_app_fills_the_output_directory(tmp_path: pathlib.Path) -> None:
    env = {**os.environ, "CDK8S_OUTDIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "noctaya.constructs", str(EXAMPLES)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=110,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    files = set(_tree(tmp_path))
    assert {
        "install.yaml",
        "crds/llmservices.serving.noctaya.io.yaml",
        "crds/inferenceruntimes.serving.noctaya.io.yaml",
        "examples/llm/qwen-nvidia.yaml",
        "examples/security/qwen-mtls.yaml",
        "examples/observability/monitoring.yaml",
    } <= files
    install = (tmp_path / "install.yaml").read_text()
    assert install.startswith("# The Noctaya operator") and "kind: CustomResourceDefinition" not in install
    dist = ROOT / "dist"
    for name in files:
        if name.startswith("examples/") or name == "install.yaml":
            assert (dist / name).read_bytes() == (tmp_path / name).read_bytes(), (
                f"dist/{name} is stale: re-render with `.venv/bin/python -m noctaya.constructs`"
            )


def test_cdk8s_yaml_points_at_the_app() -> None:
    config = yaml.safe_load((ROOT / "cdk8s.yaml").read_text())
    assert config["language"] == "python" and config["output"] == "dist"
    assert "-m noctaya.constructs" in config["app"]
    assert textwrap.dedent(config["app"]).split()[0].endswith("python")
