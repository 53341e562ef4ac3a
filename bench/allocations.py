"""Allocation tracing in a benchmark's child process, driven by signals: which tracebacks grew.

A benchmark that wants to know where a child's memory goes sets ``NOCTAYA_BENCH_TRACEMALLOC`` to a
directory and puts a generated ``sitecustomize.py`` (see ``sitecustomize_dir``) first on the child's
``PYTHONPATH``. Every Python process started from there then installs a ``SIGUSR1`` handler: the first
signal starts ``tracemalloc`` (so warm-up allocations are not traced and tracing costs nothing until
asked for), and every signal, the first included, collects garbage and dumps a snapshot to
``<dir>/<pid>-<n>.snapshot``. ``growth`` compares two such snapshots by traceback. Only the
benchmarks use this; nothing in ``noctaya`` imports it.
"""

from __future__ import annotations

import gc
import os
import pathlib
import signal
import tracemalloc
import types

ENV = "NOCTAYA_BENCH_TRACEMALLOC"
FRAMES = 12


def install() -> None:
    """Install the ``SIGUSR1`` handler when ``NOCTAYA_BENCH_TRACEMALLOC`` names a directory."""
    directory = os.environ.get(ENV)
    if not directory:
        return
    dumped = [0]

    def dump(signum: int, frame: types.FrameType | None) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(FRAMES)
        gc.collect()
        path = pathlib.Path(directory) / f"{os.getpid()}-{dumped[0]}.snapshot"
        tracemalloc.take_snapshot().dump(str(path) + ".part")
        os.replace(str(path) + ".part", path)
        dumped[0] += 1

    signal.signal(signal.SIGUSR1, dump)


def sitecustomize_dir(directory: pathlib.Path) -> pathlib.Path:
    """A directory holding a ``sitecustomize.py`` that calls ``install``, for a child's PYTHONPATH."""
    path = directory / "site"
    path.mkdir(exist_ok=True)
    (path / "sitecustomize.py").write_text("import bench.allocations\n\nbench.allocations.install()\n")
    return path


def snapshot_path(directory: pathlib.Path, *, pid: int, index: int) -> pathlib.Path:
    return directory / f"{pid}-{index}.snapshot"


def _site(traceback: tracemalloc.Traceback, *, depth: int) -> str:
    names = []
    for frame in list(reversed(traceback))[:depth]:  # iteration runs oldest call first
        short = frame.filename
        for anchor in ("site-packages", "python3.11", "python3.12", "soakleak", "main"):
            short = short.rsplit(os.sep + anchor + os.sep, 1)[-1]
        names.append(f"{short}:{frame.lineno}")
    return " < ".join(names)


def growth(before: pathlib.Path, after: pathlib.Path, *, top: int, depth: int = 5) -> list[str]:
    """The ``top`` allocation sites (innermost ``depth`` frames) that grew most from one snapshot to
    the other, with the total traced growth first."""
    noise = (
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
    )
    old = tracemalloc.Snapshot.load(str(before)).filter_traces(noise)
    new = tracemalloc.Snapshot.load(str(after)).filter_traces(noise)
    sites: dict[str, list[int]] = {}
    for stat in new.compare_to(old, "traceback"):
        entry = sites.setdefault(_site(stat.traceback, depth=depth), [0, 0])
        entry[0] += stat.size_diff
        entry[1] += stat.count_diff
    total = sum(size for size, _ in sites.values())
    blocks = sum(count for _, count in sites.values())
    lines = [f"traced growth: {total / 1024:+.1f} KiB in {blocks:+d} blocks"]
    for site, (size, count) in sorted(sites.items(), key=lambda item: -item[1][0])[:top]:
        lines.append(f"{size / 1024:>+9.1f} KiB {count:>+7d} blocks  {site}")
    return lines
