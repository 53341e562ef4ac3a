"""The package layout: the names the design card uses must not shadow the libraries we depend on.

Aspects: stdlib ``operator`` and jsii ``constructs`` still import from the repository root; every
subpackage opens with a docstring saying what it owns and what it must not import; the CLI lists
every role.
"""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUBPACKAGES = [
    "api",
    "runtime",
    "constructs",
    "operator",
    "contract",
    "gateway",
    "scaler",
    "serving",
    "process",
    "dev",
]


def test_stdlib_and_jsii_names_are_not_shadowed_from_the_repository_root() -> None:
    code = (
        "import operator, constructs, collections, sys;"
        "assert hasattr(operator, 'itemgetter'), operator.__file__;"
        "assert hasattr(constructs, 'Construct'), constructs.__file__;"
        "print(operator.__file__); print(constructs.__file__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr
    op_file, constructs_file = out.stdout.split()
    assert not op_file.startswith(str(ROOT / "operator"))
    assert "site-packages" in constructs_file


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_every_subpackage_documents_what_it_owns_and_must_not_import(name: str) -> None:
    module = importlib.import_module(f"noctaya.{name}")
    doc = module.__doc__ or ""
    assert "Owns" in doc
    assert "ust not import" in doc


def test_cli_lists_every_role(capsys: pytest.CaptureFixture[str]) -> None:
    from noctaya import cli

    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ["validate", "crds", "synth", "operator", "gateway", "scaler", "dev"]:
        assert f"  {command}" in out
    assert cli.main(["no-such-command"]) == 2
