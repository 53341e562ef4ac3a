"""``status.nextWarmWindow``: the window open now or the next to open, and when to look again.

Aspects (pure, on a fixed clock): no schedules, no window; a window open now wins over one that opens
later, and of two open ones the one open longer; the next to open otherwise; the recheck is the
boundary (bounded); the ISO 8601 interval of the printer column; through the real operator: the
status of a service carries the window, valid per the API model; a malformed warm-until annotation
is an ``InvalidSpec`` condition naming the annotation, a valid one reaches the gateways' config, and
a later change of it reaches the config too without changing the gateways' config hash (no rollout).
"""

from __future__ import annotations

import copy
import datetime
from typing import Any

import yaml

from noctaya.api import llmservice
from noctaya.constructs import process
from noctaya.operator import schedules
from tests.operator.apiserver import ApiServer
from tests.operator.cluster import SimulatedCluster
from tests.operator.conftest import StartOperator, WaitFor, ready_service
from tests.operator.scenario import (
    LLMSERVICES,
    NS,
    RUNTIMES,
    condition,
    runtime_body,
    service_body,
    status_of,
)

NOW = datetime.datetime(2026, 12, 1, 12, 0, 30, tzinfo=datetime.UTC)  # a Tuesday


def parse(*entries: dict[str, Any]) -> list[llmservice.Schedule]:
    return llmservice.Scaling.model_validate({"max": 4, "schedules": list(entries)}).schedules


def test_no_schedule_no_window() -> None:
    assert schedules.next_warm_window([], now=NOW) == (None, None)


def test_the_open_window_that_stays_open_longest() -> None:
    window, recheck = schedules.next_warm_window(
        parse(
            {"name": "later", "start": "0 14 * * *", "duration": "1h"},
            {"name": "short", "start": "0 11 * * *", "end": "30 12 * * *"},
            {"name": "long", "start": "0 8 * * 1-5", "end": "0 18 * * 1-5", "minReplicas": 2},
        ),
        now=NOW,
    )
    assert window == {
        "name": "long",
        "active": True,
        "end": "2026-12-01T18:00:00Z",
        "minReplicas": 2,
        "window": "now/2026-12-01T18:00:00Z",
    }
    assert recheck == schedules.MAX_RECHECK  # closes in 6 h: looked at again within the hour


def test_the_next_window_to_open_in_its_zone() -> None:
    window, recheck = schedules.next_warm_window(
        parse(
            {"name": "tokyo", "start": "0 9 * * *", "duration": "8h", "timezone": "Asia/Tokyo"},
            {"name": "soon", "start": "1 12 * * *", "duration": "10m"},
        ),
        now=NOW,
    )
    assert window is not None and window["name"] == "soon" and window["active"] is False
    assert window["window"] == "2026-12-01T12:01:00Z/2026-12-01T12:11:00Z"
    assert recheck == 30.0  # the moment it opens
    tokyo, _ = schedules.next_warm_window(
        parse({"name": "t", "start": "0 9 * * *", "duration": "8h", "timezone": "Asia/Tokyo"}), now=NOW
    )
    assert tokyo is not None and tokyo["start"] == "2026-12-02T00:00:00Z"  # 09:00 JST


def test_the_status_model_accepts_it() -> None:
    window, _ = schedules.next_warm_window(
        parse({"name": "s", "start": "1 12 * * *", "duration": "10m"}), now=NOW
    )
    assert window is not None
    status = llmservice.LLMServiceStatus.model_validate({"nextWarmWindow": window})
    assert status.next_warm_window is not None and status.next_warm_window.min_replicas == 1


async def test_the_operator_reports_the_open_window(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    now = datetime.datetime.now(datetime.UTC)
    opened = (now - datetime.timedelta(hours=1)).hour
    closes = (now + datetime.timedelta(hours=2)).hour
    schedule = {"name": "open-now", "start": f"0 {opened} * * *", "end": f"0 {closes} * * *"}
    await ready_service(server, operators, wait_for, spec={"scaling": {"max": 2, "schedules": [schedule]}})
    await wait_for(lambda: "nextWarmWindow" in status_of(server), message="nextWarmWindow in status")
    window = status_of(server)["nextWarmWindow"]
    assert window["name"] == "open-now" and window["active"] is True
    assert window["window"] == f"now/{window['end']}" and window["end"].endswith(f"T{closes:02d}:00:00Z")
    llmservice.LLMServiceStatus.model_validate(status_of(server))


async def test_a_malformed_warm_until_annotation_is_a_condition_and_a_valid_one_reaches_the_gateways(
    server: ApiServer, cluster: SimulatedCluster, operators: StartOperator, wait_for: WaitFor
) -> None:
    body = service_body()
    body["metadata"]["annotations"] = {llmservice.WARM_UNTIL_ANNOTATION: "tomorrow morning"}
    server.upsert(RUNTIMES, runtime_body())
    server.upsert(LLMSERVICES, body)
    await operators()
    await wait_for(lambda: condition(server, "Reconciled").get("reason") == "InvalidSpec")
    assert llmservice.WARM_UNTIL_ANNOTATION in condition(server, "Reconciled")["message"]
    assert server.obj("v1/configmaps", NS, "qwen-gateway") is None  # nothing rendered from it
    fixed = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    fixed["metadata"]["annotations"] = {llmservice.WARM_UNTIL_ANNOTATION: "2026-12-01T19:30:00+01:00"}
    server.upsert(LLMSERVICES, fixed)

    def warm_until() -> object:
        cm = server.obj("v1/configmaps", NS, "qwen-gateway") or {}
        return yaml.safe_load((cm.get("data") or {}).get("config.yaml") or "{}").get("warmUntil")

    await wait_for(lambda: warm_until() == "2026-12-01T18:30:00Z", message="warmUntil in the gateway config")

    def config_hash() -> object:
        deployment = server.obj("apps/v1/deployments", NS, "qwen-gateway") or {}
        template = deployment.get("spec", {}).get("template", {})
        return (template.get("metadata") or {}).get("annotations", {}).get(process.CONFIG_HASH_ANNOTATION)

    await wait_for(lambda: config_hash() is not None, message="the gateway Deployment")
    rolled_by = config_hash()
    later = copy.deepcopy(server.must(LLMSERVICES, NS, "qwen"))
    later["metadata"]["annotations"] = {llmservice.WARM_UNTIL_ANNOTATION: "2026-12-01T20:00:00Z"}
    server.upsert(LLMSERVICES, later)
    await wait_for(
        lambda: warm_until() == "2026-12-01T20:00:00Z", message="the later warmUntil in the config"
    )
    assert config_hash() == rolled_by  # warmUntil is live: the gateways take it from the file, no rollout
