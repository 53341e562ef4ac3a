"""Gateway metrics on ``/metrics``.

Aspects: every documented family is exposed with the ``noctaya_gateway_`` prefix; each app has its own
registry (two gateways in one process do not collide); the configured bounds are gauges; state gauges
(queue depth, in-flight, demand, backend ready) are read live; requests are counted by bounded route
label and code; time to first byte is observed.
"""

from __future__ import annotations

import asyncio

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from noctaya.dev import fake_engine
from noctaya.gateway import metrics, testing

FAMILIES = [
    "requests",
    "admitted",
    "rejections",
    "activation_events",
    "activation_wait_seconds",
    "activation_duration_seconds",
    "time_to_first_byte_seconds",
    "pending",
    "in_flight",
    "demand",
    "backend_ready",
    "draining",
    "lease_open",
    "max_queue",
    "max_in_flight",
]


async def scrape_text(session: aiohttp.ClientSession, gateway: testing.RunningGateway) -> str:
    async with session.get(gateway.url + "/metrics") as response:
        assert response.status == 200
        return await response.text()


async def scrape(session: aiohttp.ClientSession, gateway: testing.RunningGateway) -> dict[str, float]:
    text = await scrape_text(session, gateway)
    samples: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
            samples[sample.name + "{" + labels + "}"] = sample.value
    return samples


async def test_families_bounds_and_live_state(
    engine: fake_engine.RunningEngine, gateways: testing.GatewayStarter
) -> None:
    engine.state.ready_override = False
    one = await gateways.start(maxQueue=7, maxInFlight=9)
    two = await gateways.start(maxQueue=3)
    async with aiohttp.ClientSession() as session:
        waiting = asyncio.create_task(session.post(one.url + "/v1/chat/completions", json={"model": "m"}))
        await one.wait_for(lambda: one.admission.queued == 1)
        text = await scrape_text(session, one)
        missing = [f for f in FAMILIES if f"# TYPE {metrics.PREFIX}{f}" not in text]
        assert missing == []
        samples = await scrape(session, one)
        assert samples["noctaya_gateway_max_queue{}"] == 7 and samples["noctaya_gateway_max_in_flight{}"] == 9
        assert samples["noctaya_gateway_pending{}"] == 1 and samples["noctaya_gateway_demand{}"] == 1
        assert samples["noctaya_gateway_backend_ready{}"] == 0
        assert (await scrape(session, two))["noctaya_gateway_max_queue{}"] == 3  # its own registry
        engine.state.ready_override = True
        async with await waiting as response:
            assert response.status == 200
        async with session.get(one.url + "/v1/models/fake-model") as response:
            assert response.status == 404
        samples = await scrape(session, one)
    assert samples["noctaya_gateway_requests_total{code=200,route=chat/completions}"] == 1
    assert samples["noctaya_gateway_requests_total{code=404,route=models}"] == 1
    assert samples["noctaya_gateway_admitted_total{path=cold}"] == 1
    assert samples["noctaya_gateway_time_to_first_byte_seconds_count{}"] == 2
    assert samples["noctaya_gateway_activation_wait_seconds_count{}"] == 1
    assert samples["noctaya_gateway_backend_ready{}"] == 1


def test_route_labels_are_bounded() -> None:
    assert metrics.route_label("/v1/chat/completions") == "chat/completions"
    assert metrics.route_label("/v1/models/abc") == "models"
    assert metrics.route_label("/v1/" + "x" * 1000) == "other"
