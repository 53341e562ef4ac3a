"""The documentation follows the code: generated parts are fresh, hand-written parts name what exists.

Aspects: ``docs/api-reference.md`` is what ``noctaya docs`` generates; the troubleshooting guide has a
section for every condition type and every reason the operator can write; README links every page of
``docs/``; every Noctaya metric a page or README names is one the gateway or the scalers expose; every
``python -m bench.<name>`` a page cites is a benchmark that exists.
"""

from __future__ import annotations

import pathlib
import re

from noctaya.api import reference, servicestatus

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


def _declared() -> set[str]:
    """Every metric family the code declares: ``"noctaya_..."`` literals and ``f"{PREFIX}..."`` names."""
    names: set[str] = set()
    for path in (ROOT / "noctaya").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r"[\"'](noctaya_[a-z0-9_]+)[\"']", text))
        prefix = re.search(r"^PREFIX(?::[^=]+)? = [\"'](noctaya_[a-z_]+)[\"']", text, re.M)
        if prefix:
            names |= {prefix.group(1) + n for n in re.findall(r"\{PREFIX\}([a-z0-9_]+)", text)}
    return names


def test_every_metric_named_in_the_docs_exists() -> None:
    declared = _declared()
    assert {"noctaya_gateway_demand", "noctaya_scaler_streams", "noctaya_reconciles"} <= declared
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        named = set(re.findall(r"\bnoctaya_[a-z0-9_]*[a-z0-9]\b", page.read_text(encoding="utf-8")))
        unknown = sorted(
            n
            for n in named
            if n not in declared and re.sub(r"_(total|bucket|count|sum)$", "", n) not in declared
        )
        assert not unknown, f"{page.name} names metrics nothing declares: {unknown}"


def test_every_cited_benchmark_exists() -> None:
    for page in [ROOT / "README.md", *DOCS.glob("*.md")]:
        for name in re.findall(r"python -m bench\.(\w+)", page.read_text(encoding="utf-8")):
            assert (ROOT / "bench" / f"{name}.py").is_file(), f"{page.name} cites bench.{name}"
