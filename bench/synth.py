"""Synth cost: one LLMService chart in-process (warm), and ``noctaya synth examples/`` end to end.

Baselines measured in the same run:

- in-process: a bare cdk8s chart with one typed Deployment and one Service (``cdk8s_plus_28.k8s``),
  built and turned into dicts exactly like an LLMService chart (fresh ``App`` each time);
- end to end: a Python process that imports cdk8s and cdk8s-plus and synthesizes that bare chart.

jsii's generated classes type-check every struct argument at run time unless Python runs with ``-O``
(``if __debug__:``); the in-process table is printed for both, the second from a child process.

Run: ``.venv/bin/python -m bench.synth [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")

import cdk8s
from cdk8s_plus_28 import k8s

from bench import reporting
from noctaya.constructs import command, settings, synthesis
from noctaya.runtime import selection

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


BARE_CHART = """
def bare_chart():
    chart = cdk8s.Chart(cdk8s.App(), "bare", disable_resource_name_hashes=True)
    labels = {"app": "bare"}
    k8s.KubeDeployment(chart, "Deployment", metadata=k8s.ObjectMeta(name="bare", namespace="ns"),
        spec=k8s.DeploymentSpec(selector=k8s.LabelSelector(match_labels=labels),
            template=k8s.PodTemplateSpec(metadata=k8s.ObjectMeta(labels=labels),
                spec=k8s.PodSpec(containers=[k8s.Container(name="server", image="engine:1",
                    ports=[k8s.ContainerPort(name="http", container_port=8000)])]))))
    k8s.KubeService(chart, "Service", metadata=k8s.ObjectMeta(name="bare", namespace="ns"),
        spec=k8s.ServiceSpec(selector=labels, ports=[k8s.ServicePort(name="http", port=8000)]))
    return chart.to_json()
"""
_namespace: dict[str, Any] = {"cdk8s": cdk8s, "k8s": k8s}
exec(BARE_CHART, _namespace)
#: The baseline: one typed Deployment + one Service in a fresh App, turned into dicts.
bare_chart: Callable[[], list[dict[str, object]]] = _namespace["bare_chart"]


def _time(fn: Callable[[], object], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def in_process(rounds: int) -> str:
    loaded = command.load([str(EXAMPLES)])
    if loaded.problems:
        raise SystemExit("\n".join(loaded.problems))
    runtimes = [r for _, r in loaded.runtimes]
    render = settings.RenderSettings()
    pairs = [(s, selection.select_runtime(service=s, runtimes=runtimes)) for _, s in loaded.services]
    for service, runtime in pairs * 3:  # warm: imports, jsii type registry, memoised quantities
        synthesis.render_llmservice(service=service, runtime=runtime, settings=render)
    for _ in range(3):
        bare_chart()
    baseline = _time(bare_chart, rounds * len(pairs))
    rows: list[list[object]] = []
    base50 = reporting.percentile(baseline, 50)
    rows.append(
        ["bare Deployment+Service (baseline)", 2, base50, reporting.percentile(baseline, 99), "1.00x"]
    )
    every: list[float] = []
    for service, runtime in pairs:
        objects = len(synthesis.render_llmservice(service=service, runtime=runtime, settings=render))
        samples = _time(
            lambda s=service, r=runtime: synthesis.render_llmservice(  # type: ignore[misc]
                service=s, runtime=r, settings=render
            ),
            rounds,
        )
        every += samples
        p50 = reporting.percentile(samples, 50)
        rows.append(
            [service.name, objects, p50, reporting.percentile(samples, 99), reporting.ratio(p50, base50)]
        )
    p50 = reporting.percentile(every, 50)
    rows.append(
        ["all LLMService charts", "-", p50, reporting.percentile(every, 99), reporting.ratio(p50, base50)]
    )
    mode = (
        "python -O (no jsii run-time type checks)"
        if not __debug__
        else "python (jsii run-time type checks on)"
    )
    return reporting.table(
        f"warm in-process synth per chart, ms — {mode}, {rounds} rounds",
        ["chart", "objects", "p50 ms", "p99 ms", "p50 vs baseline"],
        rows,
    )


def end_to_end(repeats: int) -> str:
    python = sys.executable
    baseline_code = "import cdk8s\nfrom cdk8s_plus_28 import k8s\n" + BARE_CHART + "bare_chart()\n"
    with tempfile.TemporaryDirectory() as tmp:
        runs = {
            "python: import cdk8s + bare chart (baseline)": [python, "-c", baseline_code],
            "noctaya synth examples/ -o DIR": [python, "-m", "noctaya", "synth", str(EXAMPLES), "-o", tmp],
            "python -m noctaya.constructs (cdk8s app: all of dist/)": [
                python,
                "-m",
                "noctaya.constructs",
                str(EXAMPLES),
            ],
        }
        env = {**os.environ, "CDK8S_OUTDIR": str(pathlib.Path(tmp) / "app")}
        results: dict[str, list[float]] = {}
        for name, argv in runs.items():
            samples = []
            for _ in range(repeats):
                started = time.perf_counter()
                done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
                if done.returncode != 0:
                    raise SystemExit(f"{name} failed ({done.returncode}):\n{done.stderr}")
                samples.append(time.perf_counter() - started)
            results[name] = samples
    base = reporting.percentile(next(iter(results.values())), 50)
    rows: list[list[object]] = [
        [name, reporting.percentile(s, 50), min(s), reporting.ratio(reporting.percentile(s, 50), base)]
        for name, s in results.items()
    ]
    return reporting.table(
        f"end to end (fresh process, {repeats} runs)", ["run", "median s", "best s", "vs baseline"], rows
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.synth", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="renders per chart (default: %(default)s)")
    parser.add_argument("--repeats", type=int, default=3, help="end-to-end runs each (default: %(default)s)")
    parser.add_argument("--in-process-only", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args(argv)
    print(in_process(options.rounds), flush=True)
    if options.in_process_only:
        return 0
    optimized = subprocess.run(
        [sys.executable, "-O", "-m", "bench.synth", "--rounds", str(options.rounds), "--in-process-only"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    print()
    print(optimized.stdout.strip())
    print()
    print(end_to_end(options.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
