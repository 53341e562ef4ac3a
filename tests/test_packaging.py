"""The sdist and the wheel, built and installed the way a platform team consumes Noctaya.

Aspects: ``python -m build`` makes an sdist and, from it, a wheel (so the sdist is complete); the wheel
carries the generated gRPC stubs, the typed bindings and ``py.typed`` and no tests; installed into a
clean virtualenv (no access to this checkout) without extras, at the versions of ``constraints.txt``, it
holds none of the in-cluster roles' packages (kopf, grpcio, aiohttp …; ``noctaya gateway`` names the
extra it needs), ``noctaya synth`` renders the examples exactly as the committed ``dist/examples``
holds them, and a fresh cdk8s app imports ``LLMServiceChart`` and synthesizes a chart with it.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap
import zipfile

import pytest
import yaml

from noctaya import __version__

ROOT = pathlib.Path(__file__).resolve().parents[1]
# one worker builds once: a second build at the same time would race on the checkout's egg-info
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200), pytest.mark.xdist_group("packaging")]

APP = textwrap.dedent(
    """
    import sys

    import cdk8s

    from noctaya.api import inferenceruntime, llmservice
    from noctaya.constructs import LLMServiceChart, RenderSettings

    runtime = inferenceruntime.InferenceRuntime.model_validate(
        {"metadata": {"name": "cpu"}, "spec": {"vendor": "cpu", "container": {"image": "engine:1"}}}
    )
    service = llmservice.LLMService.model_validate(
        {
            "metadata": {"name": "assistant", "namespace": "team-a"},
            "spec": {"model": {"source": {"uri": "hf://Qwen/Qwen2.5-0.5B"}}, "runtime": {"name": "cpu"}},
        }
    )
    app = cdk8s.App(outdir=sys.argv[1])
    LLMServiceChart(app, "assistant", service=service, runtime=runtime, settings=RenderSettings())
    app.synth()
    """
)


def _run(argv: list[str], *, cwd: pathlib.Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, f"{argv}:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    out = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], cwd=ROOT)
    sdist = out / f"noctaya-{__version__}.tar.gz"
    wheel = out / f"noctaya-{__version__}-py3-none-any.whl"
    assert sdist.is_file() and wheel.is_file(), sorted(p.name for p in out.iterdir())
    return {"sdist": sdist, "wheel": wheel}


def test_the_wheel_carries_what_it_needs(built: dict[str, pathlib.Path]) -> None:
    names = zipfile.ZipFile(built["wheel"]).namelist()
    assert "noctaya/py.typed" in names
    assert "noctaya/scaler/_pb/externalscaler_pb2.py" in names
    assert any(n.startswith("noctaya/imports/") and n.endswith(".jsii.tgz") for n in names)
    assert not any(n.startswith(("tests/", "bench/", "dist/", "charts/")) for n in names)


def test_installed_in_a_clean_venv(built: dict[str, pathlib.Path], tmp_path: pathlib.Path) -> None:
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python = venv / "bin" / "python"
    # the base install, at the tested versions: what a platform team's cdk8s app depends on
    constraints = str(ROOT / "constraints.txt")
    _run([str(python), "-m", "pip", "install", "-q", "-c", constraints, str(built["wheel"])], cwd=tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    installed = _run([str(python), "-m", "pip", "list", "--format=freeze"], cwd=tmp_path, env=env).lower()
    for role in ("kopf", "grpcio", "aiohttp", "uvloop", "kubernetes-asyncio", "prometheus-client"):
        assert f"\n{role}==" not in f"\n{installed}", f"{role} is not needed by the constructs"
    refused = subprocess.run(
        [str(venv / "bin" / "noctaya"), "gateway", "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert refused.returncode == 2
    assert "needs the 'dataplane' extra (pip install 'noctaya[dataplane]')" in refused.stderr
    where = _run([str(python), "-c", "import noctaya; print(noctaya.__file__)"], cwd=tmp_path, env=env)
    assert str(venv) in where and str(ROOT) not in where
    assert _run([str(venv / "bin" / "noctaya"), "--version"], cwd=tmp_path, env=env).strip() == __version__

    out = tmp_path / "rendered"
    _run(
        [str(venv / "bin" / "noctaya"), "synth", str(ROOT / "examples"), "-o", str(out)],
        cwd=tmp_path,
        env=env,
    )
    committed = ROOT / "dist" / "examples" / "llm"
    for path in committed.iterdir():
        assert (out / "llm" / path.name).read_bytes() == path.read_bytes(), path.name

    (tmp_path / "app.py").write_text(APP)
    _run([str(python), "app.py", str(tmp_path / "app-out")], cwd=tmp_path, env=env)
    kinds = [
        d["kind"]
        for p in sorted((tmp_path / "app-out").glob("*.yaml"))
        for d in yaml.safe_load_all(p.read_text())
    ]
    assert "Deployment" in kinds and "ScaledObject" in kinds
