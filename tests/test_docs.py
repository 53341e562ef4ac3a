"""The documentation follows the code: generated parts are fresh, hand-written parts name what exists.

Aspects: ``docs/api-reference.md`` is what ``noctaya docs`` generates; the troubleshooting guide has a
section for every condition type and every reason the operator can write; README links every page of
``docs/``; every Noctaya metric a page or README names is one the gateway or the scalers expose; every
``python -m bench.<name>`` a page cites is a benchmark that exists.
"""

from __future__ import annotations

import pathlib
import re

import prometheus_client

from noctaya.api import reference, servicestatus
from noctaya.gateway import metrics as gateway_metrics
from noctaya.scaler import metrics as scaler_metrics

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_the_api_reference_is_fresh() -> None:
    assert (DOCS / "api-reference.md").read_text(encoding="utf-8") == reference.render(), (
        "docs/api-reference.md is stale: `noctaya docs -o docs/api-reference.md`"
    )


def test_troubleshooting_has_every_condition_and_reason() -> None:
    text = (DOCS / "troubleshooting.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#{2,3} (\S+)$", text, re.M))
    missing = [t.value for t in servicestatus.ConditionType if t.value not in headings]
    missing += [r.value for r in servicestatus.Reason if r.value not in headings]
    assert not missing, f"docs/troubleshooting.md has no section for: {missing}"
    stray = {h for h in headings if re.fullmatch(r"[A-Z][A-Za-z]+", h)} - {
        *(t.value for t in servicestatus.ConditionType),
        *(r.value for r in servicestatus.Reason),
        "Symptoms",
    }
    assert not stray, f"sections for reasons the operator does not write: {sorted(stray)}"


def test_readme_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pages = sorted(p.name for p in DOCS.glob("*.md"))
    assert {
        "api-reference.md",
        "troubleshooting.md",
        "alongside.md",
        "architecture.md",
        "performance.md",
    } <= set(pages)
    assert [p for p in pages if f"](docs/{p})" not in readme] == []


def _exposed() -> set[str]:
    registry = prometheus_client.CollectorRegistry()
    scaler_metrics.ScalerMetrics(registry=registry)
    names = {s.name for m in registry.collect() for s in m.samples}
    reporter = prometheus_client.CollectorRegistry()
    scaler_metrics.ReporterMetrics(registry=reporter)
    names |= {s.name for m in reporter.collect() for s in m.samples}
    gateway = gateway_metrics.Metrics(max_queue=1, max_in_flight=1)
    names |= {s.name for m in gateway.registry.collect() for s in m.samples}
    return names


def test_every_metric_named_in_the_docs_exists() -> None:
    exposed = _exposed()
    families = {re.sub(r"_(total|bucket|count|sum|created)$", "", n) for n in exposed}
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        named = set(re.findall(r"\bnoctaya_[a-z0-9_]*[a-z0-9]\b", page.read_text(encoding="utf-8")))
        unknown = sorted(n for n in named if n not in exposed and n not in families)
        assert not unknown, f"{page.name} names metrics nothing exposes: {unknown}"


def test_every_cited_benchmark_exists() -> None:
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for name in re.findall(r"python -m bench\.(\w+)", page.read_text(encoding="utf-8")):
            assert (ROOT / "bench" / f"{name}.py").is_file(), f"{page.name} cites bench.{name}"
