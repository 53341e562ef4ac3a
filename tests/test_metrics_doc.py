"""``docs/metrics.md`` lists exactly the metrics the code registers.

Aspects: every family each process registers (gateway, its co-located scaler or demand reporter, the
aggregate scaler, the operator) has one row in the table of that process with its exposed name, type,
label names and its HELP text as the meaning, and no row names a family that does not exist.
"""

from __future__ import annotations

import pathlib
import re

import prometheus_client

from noctaya.gateway import metrics as gateway_metrics
from noctaya.operator import metrics as operator_metrics
from noctaya.scaler import enginemetrics
from noctaya.scaler import metrics as scaler_metrics
from noctaya.serving import connections

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "metrics.md"
ROW = re.compile(r"^\| `(?P<name>[a-z_:]+)` \| (?P<type>\w+) \| (?P<labels>[^|]*) \| (?P<meaning>[^|]+) \|$")

Row = tuple[str, str, tuple[str, ...], str]


def registered(registry: prometheus_client.CollectorRegistry) -> set[Row]:
    rows = set()
    for family in registry.collect():
        labels = tuple(sorted({k for s in family.samples for k in s.labels if k != "le"}))
        name = family.name + ("_total" if family.type == "counter" else "")
        rows.add((name, family.type, labels, family.documentation))
    return rows


def documented() -> dict[str, set[Row]]:
    tables: dict[str, set[Row]] = {}
    section = ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line.removeprefix("## ").strip()
            continue
        match = ROW.match(line)
        if match is None:
            continue
        labels = tuple(sorted(x.strip().strip("`") for x in match["labels"].split(",") if "`" in x))
        row = (match["name"], match["type"], labels, match["meaning"].strip())
        tables.setdefault(section, set()).add(row)
    return tables


def test_every_registered_metric_is_documented_and_nothing_else() -> None:
    gateway = gateway_metrics.Metrics(max_queue=1, max_in_flight=1).registry
    reporter = prometheus_client.CollectorRegistry()
    scaler_metrics.ReporterMetrics(registry=reporter)
    scaler = prometheus_client.CollectorRegistry()
    scaler_metrics.ScalerMetrics(registry=scaler)
    report_port = prometheus_client.CollectorRegistry()
    scaler_metrics.ConnectionMetrics(
        registry=report_port, table=connections.ConnectionTable(limits=connections.Limits())
    )
    engine = prometheus_client.CollectorRegistry()
    enginemetrics.EngineMetrics(registry=engine)
    operator = operator_metrics.Metrics().registry
    expected = {
        "Gateway": registered(gateway),
        "Gateway: demand reporter": registered(reporter),
        "ExternalScaler (co-located or aggregate)": registered(scaler),
        "ExternalScaler: engine signal": registered(engine),
        "Aggregate scaler: report port": registered(report_port),
        "Operator": registered(operator),
    }
    tables = documented()
    assert set(tables) == set(expected)
    for section, rows in expected.items():
        assert tables[section] == rows, section


def test_alerts_and_dashboard_read_only_documented_metrics() -> None:
    """Every family the shipped alert rules and dashboard query is one the code registers."""
    from noctaya.constructs import observability

    names = {name for rows in documented().values() for name, *_ in rows}
    exposed = set(names)
    for name in names:  # a histogram is queried through its series
        exposed |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
    dashboard = (DOC.parent.parent / "examples" / "observability" / "dashboard.json").read_text()
    rules = " ".join(r.expr for r in observability.alert_rules(observability.ObservabilityProps()))
    queried = set(re.findall(r"\bnoctaya_[a-z_]+", dashboard + " " + rules))
    assert queried and queried <= exposed, sorted(queried - exposed)
