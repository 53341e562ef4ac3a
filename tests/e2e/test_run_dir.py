"""``noctaya dev`` leaves no run directory behind unless asked to keep it, and then says where it is.

Aspects: without ``--run-dir`` the temporary directory it announces exists while it runs and is gone
after a clean stop; with ``--keep-run-dir`` it is kept, holds the logs, and its path is printed last.
"""

from __future__ import annotations

import pathlib
import re
import shutil

import pytest

from tests.e2e.conftest import StartDev

pytestmark = pytest.mark.e2e


def _announced(output: str) -> pathlib.Path:
    match = re.search(r"logs and configs: (\S+)", output)
    assert match, output
    return pathlib.Path(match.group(1))


async def test_the_temporary_run_dir_is_removed(start_dev: StartDev) -> None:
    dev = await start_dev(run_dir=False)
    directory = _announced(dev.output())
    assert (directory / "gateway-0.json").is_file()
    assert await dev.stop() == 0
    assert not directory.exists(), dev.output()


async def test_keep_run_dir_keeps_it_and_says_where(start_dev: StartDev) -> None:
    dev = await start_dev("--keep-run-dir", run_dir=False)
    directory = _announced(dev.output())
    try:
        assert await dev.stop() == 0
        assert (directory / "gateway-0.log").is_file()
        assert dev.output().rstrip().splitlines()[-1].endswith(f"logs and configs kept in {directory}")
    finally:
        shutil.rmtree(directory, ignore_errors=True)
