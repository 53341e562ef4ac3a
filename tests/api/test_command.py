"""``noctaya validate`` and ``noctaya crds``.

Aspects:
- validate: files, directories (recursing into ``*.yaml``/``*.yml`` only, sorted), ``-`` for stdin,
  several inputs at once; exit 0 with a one-line summary when all is valid, 1 with every problem of
  every document otherwise, 2 on usage errors; missing files, empty input and stdin given twice are
  problems, not tracebacks; ``--quiet``; reads no more than the stream bound from stdin;
- the real ``noctaya`` entry point dispatches to both (in-process through ``noctaya.cli.main`` and
  once as a subprocess, stdin included);
- fuzz (hypothesis): any bytes on stdin give exit 0 or 1 and printable lines, never an exception;
- crds: prints both CRDs as multi-document YAML; ``-o DIR`` writes one file per CRD and lists them;
  an unwritable directory is a clean error.
"""

from __future__ import annotations

import io
import pathlib
import subprocess
import sys

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from noctaya import cli
from noctaya.api import command, crds

DATA = pathlib.Path(__file__).parent / "data"
RUNTIME = """apiVersion: serving.noctaya.io/v1alpha1
kind: InferenceRuntime
metadata: {name: cpu}
spec: {vendor: cpu, container: {image: img}}
"""
BROKEN = """apiVersion: serving.noctaya.io/v1alpha1
kind: LLMService
metadata: {name: qwen, namespace: ai}
spec:
  model: {source: {uri: "hf://a/b"}}
  runtime: {name: x}
  scaling: {min: 3, max: 2}
"""


def _run(argv: list[str], stdin: bytes = b"") -> tuple[int, str]:
    out = io.StringIO()
    code = command.validate_main(argv, stdin=io.BytesIO(stdin), stdout=out)
    return code, out.getvalue()


def test_valid_file_gives_a_summary_and_exit_0(tmp_path: pathlib.Path) -> None:
    (tmp_path / "rt.yaml").write_text(RUNTIME)
    assert _run([str(tmp_path / "rt.yaml")]) == (0, "1 document(s) valid (1 InferenceRuntime) in 1 file(s)\n")
    assert _run(["-q", str(tmp_path / "rt.yaml")]) == (0, "")


def test_problems_of_every_document_and_exit_1(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a.yaml").write_text(BROKEN + "---\n" + RUNTIME + "---\n" + BROKEN.replace("qwen", "other"))
    code, out = _run([str(tmp_path / "a.yaml")])
    assert code == 1
    lines = out.splitlines()
    assert lines == [
        f"{tmp_path / 'a.yaml'}:7: LLMService ai/qwen: spec.scaling: min must not exceed max",
        f"{tmp_path / 'a.yaml'}:20: LLMService ai/other: spec.scaling: min must not exceed max",
        "2 problem(s) found in 1 file(s)",
    ]


FOREIGN = """apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ai}
---
apiVersion: other.example.com/v1
kind: LLMService
metadata: {name: theirs}
"""


def test_foreign_kinds_are_skipped_with_a_note_and_refused_with_strict(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "mixed.yaml"
    source.write_text(FOREIGN + "---\n" + RUNTIME)
    code, out = _run([str(source)])
    assert (code, out.splitlines()) == (
        0,
        [
            f"{source}:2: skipped ConfigMap ai/settings (v1): not a Noctaya kind (--strict refuses it)",
            f"{source}:6: skipped LLMService theirs (other.example.com/v1): not a Noctaya kind "
            "(--strict refuses it)",
            "1 document(s) valid (1 InferenceRuntime) in 1 file(s); 2 of other APIs skipped",
        ],
    )
    assert _run(["-q", str(source)]) == (0, "")
    code, out = _run(["--strict", str(source)])
    assert code == 1 and "unknown kind 'ConfigMap' (apiVersion 'v1')" in out and "2 problem(s)" in out
    only = tmp_path / "only.yaml"
    only.write_text(FOREIGN)
    code, out = _run([str(only)])
    assert code == 1 and "no LLMService or InferenceRuntime found" in out


def test_a_missing_api_version_is_named_missing(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "a.yaml"
    source.write_text(RUNTIME.replace("apiVersion: serving.noctaya.io/v1alpha1\n", ""))
    code, out = _run([str(source)])
    assert code == 1
    assert (
        "InferenceRuntime cpu: apiVersion: apiVersion is missing: expected 'serving.noctaya.io/v1alpha1'"
        in out
    )


def test_directories_recurse_into_yaml_files_only(tmp_path: pathlib.Path) -> None:
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "sub" / "b.yml").write_text(RUNTIME.replace("cpu}", "b}"))
    (tmp_path / "sub" / "deeper" / "a.yaml").write_text(RUNTIME)
    (tmp_path / "notes.txt").write_text("not yaml: [")
    (tmp_path / "sub" / "x.json").write_text("{")
    code, out = _run([str(tmp_path)])
    assert (code, out) == (0, "2 document(s) valid (2 InferenceRuntime) in 2 file(s)\n")
    (tmp_path / "empty").mkdir()
    code, out = _run([str(tmp_path / "empty")])
    assert code == 1 and "directory holds no *.yaml or *.yml files" in out


def test_stdin_and_several_inputs(tmp_path: pathlib.Path) -> None:
    (tmp_path / "rt.yaml").write_text(RUNTIME)
    code, out = _run(["-", str(tmp_path / "rt.yaml")], stdin=BROKEN.encode())
    assert code == 1
    assert out.splitlines()[0] == "<stdin>:7: LLMService ai/qwen: spec.scaling: min must not exceed max"
    code, out = _run(["-", "-"], stdin=RUNTIME.encode())
    assert code == 1 and "stdin given more than once" in out


def test_missing_empty_and_garbage_inputs_are_problems(tmp_path: pathlib.Path) -> None:
    code, out = _run([str(tmp_path / "nope.yaml")])
    assert code == 1 and "nope.yaml: no such file or directory" in out
    (tmp_path / "empty.yaml").write_text("# nothing\n")
    code, out = _run([str(tmp_path / "empty.yaml")])
    assert code == 1 and "no documents found" in out
    code, out = _run(["/dev/zero"])
    assert code == 1 and "/dev/zero: not a regular file" in out
    code, out = _run(["-"], stdin=b"\x00" * 100)
    assert code == 1 and "binary data" in out
    code, out = _run(["-"], stdin=b"a: " + b"x" * (9 * 1024 * 1024))
    assert code == 1 and "input larger than 8388608 bytes" in out


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        command.validate_main([])
    assert info.value.code == 2
    assert "FILE" in capsys.readouterr().err


def test_through_the_cli(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(DATA / "valid")]) == 0
    assert "document(s) valid" in capsys.readouterr().out
    assert cli.main(["crds"]) == 0
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(capsys.readouterr().out)] == [
        "llmservices.serving.noctaya.io",
        "inferenceruntimes.serving.noctaya.io",
    ]


def test_as_a_process_with_stdin() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "noctaya", "validate", "-"],
        input=BROKEN.encode(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 1, result.stderr
    assert b"<stdin>:7: LLMService ai/qwen: spec.scaling: min must not exceed max" in result.stdout
    assert result.stderr == b""


def test_crds_prints_and_writes(tmp_path: pathlib.Path) -> None:
    out = io.StringIO()
    assert command.crds_main([], stdout=out) == 0
    assert list(yaml.safe_load_all(out.getvalue())) == crds.crds()
    out = io.StringIO()
    assert command.crds_main(["-o", str(tmp_path / "out")], stdout=out) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["inferenceruntimes.serving.noctaya.io.yaml", "llmservices.serving.noctaya.io.yaml"]
    assert out.getvalue().splitlines() == [
        str(tmp_path / "out" / "llmservices.serving.noctaya.io.yaml"),
        str(tmp_path / "out" / "inferenceruntimes.serving.noctaya.io.yaml"),
    ]
    for crd in crds.crds():
        assert yaml.safe_load((tmp_path / "out" / crds.filename(crd)).read_text()) == crd


def test_crds_unwritable_directory(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    assert command.crds_main(["-o", str(tmp_path / "file" / "sub")]) == 1
    assert "cannot write to" in capsys.readouterr().err


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
def test_fuzz_stdin_never_raises(data: bytes) -> None:
    code, out = _run(["-"], stdin=data)
    assert code in (0, 1)
    assert out.endswith("\n") and out.splitlines()[-1]


GATEWAY_LIMIT = """apiVersion: serving.noctaya.io/v1alpha1
kind: LLMService
metadata: {name: qwen, namespace: ai}
spec:
  model: {source: {uri: "hf://a/b"}}
  runtime: {name: x}
  endpoint:
    maxConnections: 1000
    resources:
      limits: {memory: 256Mi}
"""


def test_a_gateway_memory_limit_is_checked_by_the_rule_synth_and_the_operator_run(
    tmp_path: pathlib.Path,
) -> None:
    """A limit below the default bounds' worst case is valid (the bounds are derived to fit); pinned
    bounds it cannot hold are refused at the limit's line, with every term."""
    source = tmp_path / "a.yaml"
    source.write_text(GATEWAY_LIMIT.replace("    maxConnections: 1000\n", ""))
    assert _run([str(source)])[0] == 0
    source.write_text(GATEWAY_LIMIT)
    code, out = _run([str(source)])
    assert code == 1
    assert out.splitlines()[0].startswith(
        f"{source}:10: LLMService ai/qwen: spec.endpoint.resources.limits.memory: gateway memory limit "
        "256Mi: the gateway needs at least 488 MiB"
    )
    assert "maxConnections 1000 x 384 KiB" in out and "or lower the bounds set in spec.endpoint" in out


PORTS = """apiVersion: serving.noctaya.io/v1alpha1
kind: InferenceRuntime
metadata: {name: llama}
spec:
  family: llamacpp
  vendor: cpu
  container:
    image: img
    args: [--model, "{{ .Model.Path }}", --port, "8081"]
---
apiVersion: serving.noctaya.io/v1alpha1
kind: InferenceRuntime
metadata: {name: vllm}
spec:
  vendor: cpu
  container:
    image: img
    args: ["--port=9000"]
    port: {containerPort: 8000}
"""


def test_a_port_argument_must_agree_with_the_container_port(tmp_path: pathlib.Path) -> None:
    """A family's default port stands for an unset containerPort; a ``--port`` argument naming another
    port is refused (the engine would never be found Ready)."""
    source = tmp_path / "ports.yaml"
    source.write_text(PORTS.replace('"8081"', '"8080"').replace("--port=9000", "--port=8000"))
    assert _run([str(source)])[0] == 0
    source.write_text(PORTS)
    code, out = _run([str(source)])
    assert code == 1
    assert out.splitlines()[:2] == [
        f"{source}:9: InferenceRuntime llama: spec.container.args[3]: --port 8081 disagrees with the "
        "llamacpp family's default container port 8080 (spec.container.port.containerPort unset): the "
        "engine would listen where neither its probes nor its Service look; set containerPort: 8081 or "
        "change --port",
        f"{source}:18: InferenceRuntime vllm: spec.container.args[0]: --port 9000 disagrees with "
        "spec.container.port.containerPort 8000: the engine would listen where neither its probes nor its "
        "Service look; set containerPort: 9000 or change --port",
    ]
