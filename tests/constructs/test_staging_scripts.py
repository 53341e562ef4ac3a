"""The shell scripts the Pods run, executed here with ``sh`` on a temporary directory.

Aspects of the oci:// stage step: a clean artifact is copied into ``<dir>`` and the marker is written
last, leaving no ``.partial``; leftovers of an interrupted attempt (a ``.partial`` directory, a
directory without marker) are removed first; a finished directory is kept untouched; symbolic links,
special files and an empty artifact are refused without touching the cache. Aspects of the marker
wait: it returns at once when the marker exists and fails after its bound when it never appears. The
hub download script is valid Python.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import time

import pytest

from noctaya.constructs import prewarm, volumes


def _stage(tmp_path: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path, subprocess.CompletedProcess[str]]:
    stage = tmp_path / "stage"
    target = tmp_path / "cache" / "models" / "oci" / "sha256-abc"
    env = {
        "PATH": os.environ["PATH"],
        "STAGE": str(stage),
        "MODEL_DIR": str(target),
        "ARTIFACT": "r/m@sha256:abc",
    }
    result = subprocess.run(
        ["sh", "-c", prewarm._STAGE_SCRIPT], env=env, capture_output=True, text=True, timeout=30, check=False
    )
    return stage, target, result


def _artifact(tmp_path: pathlib.Path) -> pathlib.Path:
    stage = tmp_path / "stage"
    (stage / "sub").mkdir(parents=True)
    (stage / "config.json").write_text("{}")
    (stage / "sub" / "model.safetensors").write_bytes(b"\x00" * 1024)
    return stage


def test_clean_copy(tmp_path: pathlib.Path) -> None:
    _artifact(tmp_path)
    _, target, result = _stage(tmp_path)
    assert result.returncode == 0, result.stderr
    assert (target / "config.json").read_text() == "{}"
    assert (target / "sub" / "model.safetensors").stat().st_size == 1024
    assert (target / ".noctaya-ready").read_text() == "r/m@sha256:abc\n"
    assert not target.with_name(target.name + ".partial").exists()


def test_leftovers_are_removed(tmp_path: pathlib.Path) -> None:
    _artifact(tmp_path)
    target = tmp_path / "cache" / "models" / "oci" / "sha256-abc"
    partial = target.with_name(target.name + ".partial")
    partial.mkdir(parents=True)
    (partial / "stale").write_text("x")
    target.mkdir()
    (target / "half-written").write_text("x")
    _, _, result = _stage(tmp_path)
    assert result.returncode == 0, result.stderr
    assert not partial.exists()
    assert not (target / "half-written").exists() and (target / ".noctaya-ready").exists()


def test_finished_directory_is_kept(tmp_path: pathlib.Path) -> None:
    _artifact(tmp_path)
    target = tmp_path / "cache" / "models" / "oci" / "sha256-abc"
    target.mkdir(parents=True)
    (target / ".noctaya-ready").write_text("done\n")
    (target / "weights").write_text("old")
    _, _, result = _stage(tmp_path)
    assert result.returncode == 0 and "already staged" in result.stdout
    assert (target / "weights").read_text() == "old"


@pytest.mark.parametrize("bad", ["symlink", "escaping-symlink", "fifo", "empty"])
def test_refusals(tmp_path: pathlib.Path, bad: str) -> None:
    stage = tmp_path / "stage"
    if bad == "empty":
        stage.mkdir()
    else:
        _artifact(tmp_path)
        if bad == "symlink":
            (stage / "link").symlink_to(stage / "config.json")
        elif bad == "escaping-symlink":
            (stage / "sub" / "passwd").symlink_to("/etc/passwd")
        else:
            os.mkfifo(stage / "pipe")
    _, target, result = _stage(tmp_path)
    assert result.returncode != 0
    assert "stage:" in result.stderr
    assert not target.exists() and not target.with_name(target.name + ".partial").exists()


def test_marker_wait(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "m" / ".noctaya-ready"
    marker.parent.mkdir()
    marker.write_text("x")
    script = volumes.marker_wait_script(marker=str(marker), timeout_seconds=1)
    assert subprocess.run(["sh", "-c", script], capture_output=True, timeout=10, check=False).returncode == 0
    missing = volumes.marker_wait_script(marker=str(tmp_path / "never"), timeout_seconds=1)
    started = time.monotonic()
    result = subprocess.run(["sh", "-c", missing], capture_output=True, text=True, timeout=20, check=False)
    assert result.returncode == 1 and "not staged after 1s" in result.stderr
    assert time.monotonic() - started < 10


def test_hub_script_compiles() -> None:
    compile(prewarm._HUB_SCRIPT, "<prewarm>", "exec")
