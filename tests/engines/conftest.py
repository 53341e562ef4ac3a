"""The real-engine tier: llama.cpp's server, built from source, behind ``noctaya dev``.

- ``llama_server``: the binary ``scripts/llama-server.sh`` builds (and caches by version outside the
  work tree); ``scripts/test.sh`` runs the script before pytest and passes the path in
  ``NOCTAYA_LLAMA_SERVER``. Without it the script is run here (instant when cached). A binary that
  cannot be had fails every test of this tier, loudly: nothing here skips.
- ``tiny_model``: a GGUF file written by :mod:`tests.engines.model` (random weights, two layers).
- ``llama_cmd``: the ``--backend-cmd`` template that serves it, under the model name
  :data:`~tests.engines.model.MODEL_NAME`.
- ``start_dev``: the end-to-end harness of ``tests/e2e`` (``noctaya dev`` as a real process).
"""

from __future__ import annotations

import os
import pathlib
import shlex
import subprocess

import pytest

from tests.e2e.conftest import start_dev  # noqa: F401  (the fixture, shared)
from tests.engines import model

ROOT = pathlib.Path(__file__).resolve().parents[2]
THREADS = 1  # the machine is small and shared: one compute thread per replica


def find_llama_server() -> pathlib.Path:
    """The llama.cpp server binary: ``NOCTAYA_LLAMA_SERVER``, else built (or found) by the script."""
    given = os.environ.get("NOCTAYA_LLAMA_SERVER")
    if given:
        path = pathlib.Path(given)
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"NOCTAYA_LLAMA_SERVER={given} is not an executable")
        return path
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "llama-server.sh")], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(
            "cannot build llama.cpp's server (bash scripts/llama-server.sh):\n" + result.stderr[-4000:]
        )
    return pathlib.Path(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def llama_server() -> pathlib.Path:
    return find_llama_server()


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    return model.write_model(tmp_path_factory.mktemp("model") / "tiny.gguf")


def server_command(
    *, binary: pathlib.Path, model_path: pathlib.Path, port: str = "{port}", extra: str = ""
) -> str:
    """llama.cpp's server on loopback serving ``model_path`` as :data:`model.MODEL_NAME`."""
    argv = [
        str(binary),
        "--model",
        str(model_path),
        "--alias",
        model.MODEL_NAME,
        "--host",
        "127.0.0.1",
        "--port",
        port,
        "--ctx-size",
        "8192",
        "--parallel",
        "4",
        "--threads",
        str(THREADS),
        "--threads-http",
        "2",
    ]
    return " ".join(shlex.quote(a) if a != "{port}" else a for a in argv) + (f" {extra}" if extra else "")


@pytest.fixture
def llama_cmd(llama_server: pathlib.Path, tiny_model: pathlib.Path) -> str:
    return server_command(binary=llama_server, model_path=tiny_model)
