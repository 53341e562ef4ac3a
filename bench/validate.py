"""``noctaya validate`` throughput: the bounded reader and the full check, against PyYAML baselines.

Run: ``.venv/bin/python -m bench.validate [--documents N] [--rounds R]``

One stream of N documents (the valid test documents, renamed and repeated) is read by:
- PyYAML ``CSafeLoader`` (libyaml, unbounded: aliases expanded, no depth or size bounds) — baseline;
- PyYAML pure-Python ``SafeLoader`` (what a bounded loader hooking the composer would run on);
- ``noctaya.api.documents.load_yaml`` (libyaml events + our bounded composer);
- ``noctaya.api.documents.check_stream`` (reading + pydantic models + metadata and reserved checks).
Figures are the best of R rounds, as documents per second and as a ratio to the baseline, measured in
the same run. Then the time to refuse hostile input (billion laughs, 10k-deep nesting, a 10 MB
document) — each must be refused, and quickly.
"""

from __future__ import annotations

import argparse
import pathlib
import time
from collections.abc import Callable

import yaml

from bench import reporting
from noctaya.api import documents

DATA = pathlib.Path(__file__).resolve().parent.parent / "tests" / "api" / "data" / "valid"


def _stream(count: int) -> str:
    docs = [d for f in sorted(DATA.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    out = []
    for i in range(count):
        doc = dict(docs[i % len(docs)])
        doc["metadata"] = {**doc["metadata"], "name": f"{doc['metadata']['name']}-{i}"}
        out.append(doc)
    return yaml.safe_dump_all(out, sort_keys=False)


def _best(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.validate")
    parser.add_argument("--documents", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    options = parser.parse_args(argv)
    text = _stream(options.documents)
    n = options.documents
    limits = documents.Limits(max_documents=max(n, documents.DEFAULT_LIMITS.max_documents))

    def ours_load() -> None:
        docs, problems = documents.load_yaml(text, source="bench", limits=limits)
        assert len(docs) == n and not problems

    def ours_check() -> None:
        checked, problems = documents.check_stream(text, source="bench", limits=limits)
        assert not problems and all(c.ok for c in checked), [str(p) for c in checked for p in c.problems][:3]

    cases: list[tuple[str, Callable[[], object]]] = [
        ("PyYAML CSafeLoader (baseline)", lambda: list(yaml.load_all(text, Loader=yaml.CSafeLoader))),
        ("PyYAML SafeLoader (pure Python)", lambda: list(yaml.load_all(text, Loader=yaml.SafeLoader))),
        ("noctaya load_yaml (bounded)", ours_load),
        ("noctaya check_stream (load + models)", ours_check),
    ]
    timings = [(name, _best(fn, options.rounds)) for name, fn in cases]
    baseline = timings[0][1]
    rows = [
        (name, n / seconds, seconds * 1e6 / n, reporting.ratio(seconds, baseline))
        for name, seconds in timings
    ]
    print(
        reporting.table(
            f"reading {n} documents ({len(text) / 1024:.0f} KiB), best of {options.rounds}",
            ["reader", "docs/s", "us/doc", "time vs baseline"],
            rows,
        )
    )

    bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        bomb.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    hostile = {
        "billion laughs (9^9 expansion)": "\n".join(bomb),
        "10k-deep flow nesting": "[" * 10_000,
        "10 MB document": "a: " + "x" * 10_000_000,
    }
    rows2 = []
    for label, data in hostile.items():
        big = documents.Limits(max_stream_bytes=16 * 1024 * 1024)
        start = time.perf_counter()
        checked, problems = documents.check_stream(data, source="bench", limits=big)
        elapsed = time.perf_counter() - start
        refused = bool(problems) or any(not c.ok for c in checked)
        rows2.append(
            (
                label,
                "refused" if refused else "ACCEPTED",
                elapsed * 1000,
                problems[0].message if problems else "",
            )
        )
    print(reporting.table("hostile input", ["input", "outcome", "ms", "message"], rows2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
