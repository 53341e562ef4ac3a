"""``cdk8s synth`` (the real cdk8s CLI, pinned, from npm) regenerates ``dist/``, and no entry point
prints jsii's Node.js banners.

Aspects: ``cdk8s synth`` through ``cdk8s.yaml`` writes exactly the committed ``dist/``; the CLI, the
example apps run directly (``python examples/.../app.py``, ``python examples/cdk8s-app/main.py``) and
``noctaya synth`` print no Node.js version banner even when the environment does not silence it.
The CLI is installed by ``scripts/cdk8s.sh`` into a cache outside the tree (missing npm fails these).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(300)
BANNER_WORDS = ("end-of-life", "node version", "!!!!!!")


@pytest.fixture(scope="module")
def cdk8s_cli() -> str:
    path = os.environ.get("NOCTAYA_CDK8S")
    if not path:
        result = subprocess.run(
            ["bash", str(ROOT / "scripts" / "cdk8s.sh")], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, f"scripts/cdk8s.sh could not provide the cdk8s CLI:\n{result.stderr}"
        path = result.stdout.strip().splitlines()[-1]
    return path


def _unsilenced() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("JSII_SILENCE_WARNING")}


def _tree(directory: pathlib.Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


def _quiet(text: str) -> None:
    lowered = text.lower()
    assert not any(word in lowered for word in BANNER_WORDS), text


def test_cdk8s_synth_writes_dist(cdk8s_cli: str, tmp_path: pathlib.Path) -> None:
    out = tmp_path / "dist"
    result = subprocess.run(
        [cdk8s_cli, "synth", "--output", str(out), "--check-upgrade", "false"],
        cwd=ROOT,
        env=_unsilenced(),
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    _quiet(result.stdout + result.stderr)
    assert _tree(out) == _tree(ROOT / "dist"), "dist/ is stale: re-render with `cdk8s synth`"


@pytest.mark.parametrize(
    "argv",
    [
        ["examples/security/app.py", "{tmp}/security"],
        ["examples/observability/app.py", "{tmp}/observability"],
        ["examples/cdk8s-app/main.py"],
        ["-m", "noctaya", "synth", "examples", "-o", "{tmp}/synth"],
    ],
    ids=["security-app", "observability-app", "cdk8s-app", "noctaya-synth"],
)
def test_no_node_banner(argv: list[str], tmp_path: pathlib.Path) -> None:
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    args = [str(ROOT / a) if a.startswith("examples/") and a.endswith(".py") else a for a in args]
    result = subprocess.run(
        [sys.executable, *args],
        cwd=tmp_path if "cdk8s-app" in argv[0] else ROOT,
        env=_unsilenced(),
        capture_output=True,
        text=True,
        timeout=280,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    _quiet(result.stdout + result.stderr)
