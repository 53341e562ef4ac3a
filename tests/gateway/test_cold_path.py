"""The cold path made visible: measured Retry-After, cold-start timing, warm holds, the logs.

Aspects: Retry-After is the fixed ``retryAfter`` until the gateway has seen an activation, then the
measured activation time held within ``retryAfterMin``/``retryAfterMax`` (429 and reject-mode 503
alike) and the gauge says the same; an answer that waited for a cold start carries
``Noctaya-Cold-Start`` (read through the openai SDK) and a warm one does not; a held stream's
keepalive comments carry the time waited and a ``: cold start`` comment precedes its events;
``POST /noctaya/warm`` needs the API key when one is configured, refuses a bad or too long duration
with JSON (counted under its rejection reason), opens a lease without a request, is idempotent, ends
on time and is counted; the access log writes one JSON line per request as its mode asks, of fixed
fields only (never a key, a header value or a body), at most so many a second; every activation
writes one log line when it opens and when it succeeds; ``warmUntil`` holds from the start until that
time; every bound of the cold path is exported as a gauge with its configured value.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import pathlib
import re
import time
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import pytest
from openai._legacy_response import LegacyAPIResponse
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

from noctaya.contract import gateway as gateway_contract
from noctaya.dev import fake_engine
from noctaya.gateway import accesslog, keys, testing
from tests.gateway.conftest import SdkFactory

CHAT: dict[str, object] = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}
MESSAGES: list[ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]
KEY = "sk-cold-path-secret"


@pytest.fixture
def cold(engine: fake_engine.RunningEngine) -> fake_engine.RunningEngine:
    engine.state.ready_override = False
    return engine


@pytest.fixture
def key_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "key"
    path.write_text(KEY + "\n")
    return path


async def metric(http: aiohttp.ClientSession, gateway: testing.RunningGateway, name: str) -> float:
    async with http.get(gateway.url + "/metrics") as response:
        text = await response.text()
    found = re.search(rf"^{re.escape(name)} (\S+)$", text, re.MULTILINE)
    assert found is not None, name
    return float(found.group(1))


async def queue(http: aiohttp.ClientSession, gateway: testing.RunningGateway) -> dict[str, object]:
    async with http.get(gateway.url + "/noctaya/queue") as response:
        document: dict[str, object] = await response.json()
        return document


async def test_retry_after_is_fixed_until_an_activation_was_measured_then_measured(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(
        # the floor far above any activation here, however loaded the machine: the measured value is floored
        coldStartMode="reject",
        retryAfter="70s",
        retryAfterMin="30s",
        retryAfterMax="40s",
        retryGrace="0s",
    )
    url = gateway.url + "/v1/chat/completions"
    async with http.post(url, json=CHAT) as first:
        assert first.status == 503 and first.headers["Retry-After"] == "70"  # nothing measured yet
    assert await metric(http, gateway, "noctaya_gateway_retry_after_seconds") == 70
    cold.state.ready_override = True  # the lease the 503 opened sees the backend come up
    await gateway.wait_for(lambda: gateway.app[keys.HISTORY].typical() is not None)
    cold.state.ready_override = False  # the warm-rate readiness probe sees it go cold
    await gateway.wait_for(lambda: not gateway.app[keys.READINESS].ready)
    async with http.post(url, json=CHAT) as second:
        # measured activation (well under the floor) floored at retryAfterMin
        assert second.status == 503 and second.headers["Retry-After"] == "30"
    assert await metric(http, gateway, "noctaya_gateway_retry_after_seconds") == 30
    state = await queue(http, gateway)
    assert state["retryAfterSeconds"] == 30 and isinstance(state["activationSeconds"], float)


async def test_queue_full_429_carries_the_measured_retry_after_too(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(maxQueue=1, retryAfter="90s", retryAfterMin="20s")
    url = gateway.url + "/v1/chat/completions"
    held = asyncio.create_task(http.post(url, json=CHAT))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    async with http.post(url, json=CHAT) as refused:
        assert refused.status == 429 and refused.headers["Retry-After"] == "90"
    cold.state.ready_override = True
    (await held).release()
    cold.state.ready_override = False
    await gateway.wait_for(lambda: not gateway.app[keys.READINESS].ready)
    held = asyncio.create_task(http.post(url, json=CHAT))
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    async with http.post(url, json=CHAT) as refused:
        assert refused.status == 429 and refused.headers["Retry-After"] == "20"
    held.cancel()
    await asyncio.gather(held, return_exceptions=True)
    await gateway.wait_idle()


async def test_an_answer_that_waited_carries_its_cold_start_and_a_warm_one_does_not(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, sdk: SdkFactory
) -> None:
    gateway = await gateways.start()
    client = sdk(gateway)

    async def create() -> LegacyAPIResponse[ChatCompletion]:
        return await client.chat.completions.with_raw_response.create(model="fake-model", messages=MESSAGES)

    waiting = asyncio.create_task(create())
    await gateway.wait_for(lambda: gateway.admission.queued == 1)
    cold.state.ready_override = True
    raw = await waiting
    waited = float(raw.headers["Noctaya-Cold-Start"])
    assert waited >= 0
    assert raw.parse().choices[0].message.content
    warm = await client.chat.completions.with_raw_response.create(model="fake-model", messages=MESSAGES)
    assert "Noctaya-Cold-Start" not in warm.headers
    # the header and the wait histogram tell the same wait (the header to the millisecond)
    async with aiohttp.ClientSession() as http:
        assert await metric(http, gateway, "noctaya_gateway_activation_wait_seconds_count") == 1
        assert (
            abs(await metric(http, gateway, "noctaya_gateway_activation_wait_seconds_sum") - waited) <= 0.0005
        )


async def test_a_held_stream_hears_how_long_it_waited(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start()
    async with http.post(gateway.url + "/v1/chat/completions", json={**CHAT, "stream": True}) as response:
        assert await response.content.readline() == b": keepalive\n"  # with the headers
        await response.content.readline()
        waited: list[float] = []
        while len(waited) < 4:  # 50 ms apart
            line = await asyncio.wait_for(response.content.readline(), 10.0)
            found = re.fullmatch(rb": keepalive ([0-9]+\.[0-9])s\n", line)
            if found:
                waited.append(float(found.group(1)))
        assert waited == sorted(waited) and waited[-1] >= 0.1
        cold.state.ready_override = True
        rest = (await asyncio.wait_for(response.content.read(), 10.0)).decode()
    cold_start = re.search(r"^: cold start ([0-9.]+)s$", rest, re.MULTILINE)
    # the keepalive comments round to a tenth of a second: the wait is at least the last one less 0.05
    assert cold_start is not None and float(cold_start.group(1)) >= waited[-1] - 0.05
    assert rest.index(": cold start") < rest.index("data: ")
    assert rest.rstrip().endswith("data: [DONE]")


async def test_warm_needs_the_key_and_a_valid_bounded_duration(
    cold: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    key_file: pathlib.Path,
) -> None:
    gateway = await gateways.start(apiKeyFile=str(key_file), maxWarmDuration="1m", warmDuration="30s")
    url = gateway.url + "/noctaya/warm"
    async with http.post(url) as response:
        assert response.status == 401
        assert (await response.json())["error"]["code"] == "invalid_api_key"
    auth = {"Authorization": f"Bearer {KEY}"}
    for body, expected in (
        ({"duration": "2m"}, "at most 1m0s"),
        ({"duration": "soon"}, "duration"),
        ({"duration": "0s"}, "above 0"),
        ({"duration": 10**400}, "out of range"),  # an integer too large for a float
        ({"until": "later"}, "one field"),
        ([1], "one field"),
    ):
        async with http.post(url, json=body, headers=auth) as response:
            assert response.status == 400
            error = (await response.json())["error"]
            assert error["code"] == "invalid_warm_request" and expected in error["message"]
    async with http.post(url, data=b"{", headers={**auth, "Content-Type": "application/json"}) as response:
        assert response.status == 400 and (await response.json())["error"]["code"] == "invalid_json"

    async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: the bound is found reading
        for _ in range(5):
            yield b" " * 1000

    for oversized in (b"x" * 5000, chunked()):  # over the 4 KiB bound: 413, like any oversize body
        async with http.post(url, data=oversized, headers=auth) as response:
            assert response.status == 413
            assert (await response.json())["error"]["code"] == "request_too_large"
    assert (await queue(http, gateway))["demand"] == 0  # nothing refused opened anything
    for reason, count in (
        ("invalid_warm_request", 6),
        ("unauthorized", 1),
        ("invalid_json", 1),
        ("too_large", 2),
    ):
        assert await metric(http, gateway, f'noctaya_gateway_rejections_total{{reason="{reason}"}}') == count
    assert await metric(http, gateway, "noctaya_gateway_warm_requests_total") == 0


@pytest.mark.parametrize(
    ("access", "keyed", "status"),
    [
        ("key", False, 403),  # the default: no keys, nobody holds the backend up
        ("open", False, 202),  # opted in: anyone who reaches the gateway
        ("key", True, 202),
        ("open", True, 202),  # a key is still needed when there are keys
        ("off", True, 403),
        ("off", False, 403),
    ],
)
async def test_who_may_warm_is_a_setting_and_nobody_by_default_without_keys(
    cold: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    key_file: pathlib.Path,
    access: str,
    keyed: bool,
    status: int,
) -> None:
    settings: dict[str, Any] = {"apiKeyFile": str(key_file)} if keyed else {}
    if access != "key":
        settings["warmAccess"] = access
    gateway = await gateways.start(**settings)
    url = gateway.url + "/noctaya/warm"
    if keyed:
        async with http.post(url, json={"duration": "1s"}) as response:
            assert response.status == (403 if access == "off" else 401)  # no key given
    headers = {"Authorization": f"Bearer {KEY}"} if keyed else {}
    async with http.post(url, json={"duration": "1s"}, headers=headers) as response:
        assert response.status == status
        document = await response.json()
    if status == 403:
        assert document["error"]["code"] == "warm_forbidden"
        assert "warmAccess" in document["error"]["message"]
        assert (await queue(http, gateway))["demand"] == 0  # nothing held
        reason = 'noctaya_gateway_rejections_total{reason="warm_forbidden"}'
        assert await metric(http, gateway, reason) == (2 if keyed else 1)
    else:
        assert (await queue(http, gateway))["demand"] == 1
    assert await metric(http, gateway, "noctaya_gateway_warm_requests_total") == int(status == 202)


async def test_warm_reads_its_whole_body_however_split_and_within_the_body_timeout(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    """A body sent in pieces is read whole (not just its first piece); one that stops coming is a
    408 request_timeout after bodyTimeout, not a wait without end or a 400 on half a document."""
    gateway = await gateways.start(bodyTimeout="300ms", warmAccess="open")
    parts = urlsplit(gateway.url)
    body = b'{"duration": "45s"}'

    async def exchange(*pieces: bytes) -> tuple[int, dict[str, Any]]:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        try:
            head = (
                b"POST /noctaya/warm HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
            )
            writer.write(head)
            for piece in pieces:
                writer.write(piece)
                await writer.drain()
            async with asyncio.timeout(10):  # the answer, however the connection is then kept
                answer = await reader.readuntil(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length: *([0-9]+)\r$", answer)
                assert length is not None, answer
                document: dict[str, Any] = json.loads(await reader.readexactly(int(length.group(1))))
        finally:
            writer.close()
        return int(answer.split(b" ", 2)[1]), document

    status, document = await exchange(body[:5])  # the rest never comes
    assert status == 408 and document["error"]["code"] == "request_timeout"
    assert gateway.demand.demand() == 0  # nothing was held
    status, document = await exchange(body[:5], body[5:12], body[12:])
    assert status == 202 and 44 < document["remainingSeconds"] <= 45
    async with http.post(  # a body its Content-Encoding does not describe
        gateway.url + "/noctaya/warm", data=b"not gzip at all", headers={"Content-Encoding": "gzip"}
    ) as response:
        assert response.status == 400
        assert (await response.json())["error"]["code"] == "invalid_content_encoding"


async def test_warm_holds_demand_without_a_request_idempotently_and_ends_on_time(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(retryGrace="0s", warmAccess="open")
    url = gateway.url + "/noctaya/warm"
    # long enough to outlive the second call and the activation's end on a loaded machine
    async with http.post(url, json={"duration": "3s"}) as response:
        assert response.status == 202
        first = await response.json()
    assert first["backendReady"] is False and first["lease"] == "activating"
    async with http.post(url, json={"duration": "500ms"}) as response:  # shorter: changes nothing
        second = await response.json()
    assert second["warmUntil"] == first["warmUntil"] and second["remainingSeconds"] > 0.5
    state = await queue(http, gateway)
    assert state["demand"] == 1 and state["queued"] == 0 and state["warmUntil"] == first["warmUntil"]
    assert await metric(http, gateway, "noctaya_gateway_warm_hold") == 1
    cold.state.ready_override = True  # the activation succeeds; the hold outlives its grace
    await gateway.wait_for(lambda: gateway.lease_state.value == "closed")
    assert gateway.demand.demand() == 1
    await gateway.wait_for(lambda: gateway.demand.demand() == 0, within=8.0)  # the hold's end
    assert (await queue(http, gateway))["warmUntil"] is None
    assert await metric(http, gateway, "noctaya_gateway_warm_requests_total") == 2
    assert await metric(http, gateway, "noctaya_gateway_warm_hold") == 0


async def test_the_access_log_writes_one_json_line_per_request_and_never_a_key(
    engine: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    sdk: SdkFactory,
    key_file: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    everything = await gateways.start(wait_ready=True, apiKeyFile=str(key_file), accessLog="on")
    prompt = "the launch code is swordfish-4711"
    answer = await sdk(everything, api_key=KEY).chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": prompt}]
    )
    with pytest.raises(Exception, match="401"):
        await sdk(everything, api_key="sk-wrong-key").models.list()
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "noctaya.gateway.access"]
    assert [(line["status"], line["route"], line["path"]) for line in lines] == [
        (200, "chat/completions", "warm"),
        (401, "models", "warm"),
    ]
    assert lines[0]["bytes"] > 0 and lines[0]["duration"] >= 0 and lines[0]["wait"] is None
    assert lines[1]["code"] == "invalid_api_key"
    assert KEY not in caplog.text and "sk-wrong-key" not in caplog.text
    # only these fields, whatever the request carried: no header value, no body of either side
    assert all(
        set(line) <= {"status", "method", "route", "path", "wait", "duration", "bytes", "code"}
        for line in lines
    )
    reply = answer.choices[0].message.content
    assert "swordfish" not in caplog.text and reply and reply not in caplog.text
    caplog.clear()
    errors_only = await gateways.start(wait_ready=True, apiKeyFile=str(key_file), accessLog="errors")
    await sdk(errors_only, api_key=KEY).models.list()
    with pytest.raises(Exception, match="401"):
        await sdk(errors_only, api_key="sk-wrong-key").models.list()
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "noctaya.gateway.access"]
    assert [line["status"] for line in lines] == [401]


async def test_errors_only_access_log_shows_every_cold_failure_as_cold_with_its_wait(
    cold: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A request that queued and timed out (504), a held stream that did (a 200 whose event is the
    error) and one refused while cold (429) are each one line in the errors-only log, ``cold``, with
    the time actually queued (None for the one that never queued)."""
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    gateway = await gateways.start(activationTimeout="300ms", maxQueue=2, accessLog="errors")
    url = gateway.url + "/v1/chat/completions"
    plain = asyncio.create_task(http.post(url, json=CHAT))
    stream = asyncio.create_task(http.post(url, json={**CHAT, "stream": True}))
    await gateway.wait_for(lambda: gateway.admission.queued == 2)
    async with http.post(url, json=CHAT) as refused:
        assert refused.status == 429
    async with await plain as response:
        assert response.status == 504
    async with await stream as response:
        assert response.status == 200 and "activation_timeout" in await response.text()
    await gateway.wait_idle()
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "noctaya.gateway.access"]
    ended = sorted((line["status"], line["path"], line["code"], line["wait"] is None) for line in lines)
    assert ended == [
        (200, "cold", "activation_timeout", False),
        (429, "cold", "queue_full", True),
        (504, "cold", "activation_timeout", False),
    ]
    waits = {line["status"]: line["wait"] for line in lines}
    # the first request opened the 300 ms lease, whose end fails both: it waited all of it, the
    # stream queued just after it waited all but the moment between their arrivals
    assert waits[504] >= 0.3 and waits[200] >= 0.2


async def test_each_activation_logs_its_opening_and_its_outcome(
    cold: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="noctaya.gateway")
    gateway = await gateways.start(activationTimeout="300ms", accessLog="off", warmAccess="open")
    async with http.post(gateway.url + "/v1/chat/completions", json=CHAT) as response:
        assert response.status == 504
    async with http.post(gateway.url + "/noctaya/warm", json={"duration": "1s"}) as response:
        assert response.status == 202  # still cold: a new activation, opened without a request
    cold.state.ready_override = True
    await gateway.wait_for(lambda: gateway.lease_state.value != "activating")
    messages = [r.getMessage() for r in caplog.records if r.name == "noctaya.gateway.activation"]
    assert messages[0].startswith("activation opened by a cold request")
    assert messages[1].startswith("activation expired: the backend was not ready within 0.3s")
    assert messages[2] == "activation opened by a warm request (timeout 0.3s)"
    assert re.fullmatch(r"activation succeeded after [0-9.]+s", messages[3])
    assert not [r for r in caplog.records if r.name == "noctaya.gateway.access"]


async def test_warm_until_holds_from_the_start_until_that_time(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    """``warmUntil`` (rendered from the warm-until annotation): demand 1 from the start with no
    request, ending at that time; one in the past holds nothing; a bad one is a config error."""
    # 4 to 5 s ahead in whole seconds: a loaded machine's gateway start stays well inside the hold
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(math.ceil(time.time()) + 4))
    gateway = await gateways.start(warmUntil=until, retryGrace="0s")
    state = await queue(http, gateway)
    assert state["demand"] == 1 and state["queued"] == 0 and state["warmUntil"] == until
    assert await metric(http, gateway, "noctaya_gateway_warm_requests_total") == 1
    await gateway.wait_for(lambda: gateway.demand.demand() == 0, within=15.0)
    past = await gateways.start(warmUntil="2020-01-01T00:00:00+02:00")
    assert (await queue(http, past))["demand"] == 0
    with pytest.raises(gateway_contract.ConfigError, match=r"warmUntil: .*not an RFC 3339 time"):
        gateway_contract.build_config({"backendUrl": "http://127.0.0.1:1", "warmUntil": "tomorrow"})


async def test_every_bound_of_the_cold_path_is_in_the_metrics(
    cold: fake_engine.RunningEngine, gateways: testing.GatewayStarter, http: aiohttp.ClientSession
) -> None:
    gateway = await gateways.start(
        maxTenants=7,
        accessLogMaxPerSecond=33,
        activationSamples=5,
        retryAfterMin="2s",
        retryAfterMax="1m30s",
        maxWarmDuration="20m",
        warmProbeTimeouts=4,
    )
    for name, value in (
        ("noctaya_gateway_max_tenants", 7),
        ("noctaya_gateway_access_log_max_per_second", 33),
        ("noctaya_gateway_activation_samples_max", 5),
        ("noctaya_gateway_retry_after_min_seconds", 2),
        ("noctaya_gateway_retry_after_max_seconds", 90),
        ("noctaya_gateway_max_warm_duration_seconds", 1200),
        ("noctaya_gateway_warm_probe_timeouts", 4),
        ("noctaya_gateway_readiness_late_probes_total", 0),
    ):
        assert await metric(http, gateway, name) == value, name


@pytest.mark.looptime(start=100.0)
async def test_the_access_log_is_bounded_per_second_and_says_what_it_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """On a fake loop clock: at most ``max_per_second`` lines in one second; the rest are dropped and
    counted, and the first line of the next second carries how many."""
    caplog.set_level(logging.INFO, logger="noctaya.gateway.access")
    dropped: list[int] = []
    log = accesslog.AccessLog(mode="errors", max_per_second=2, on_drop=lambda: dropped.append(1))
    for _ in range(5):
        log.record(
            status=429, method="POST", route="chat/completions", cold=False, wait=None, duration=0, sent=0
        )
    log.record(
        status=200, method="GET", route="models", cold=False, wait=None, duration=0, sent=0
    )  # not an error
    await asyncio.sleep(1.0)  # the next second of the loop clock
    log.record(status=503, method="POST", route="chat/completions", cold=True, wait=1.5, duration=1.5, sent=0)
    lines = [json.loads(r.getMessage()) for r in caplog.records]
    assert [line["status"] for line in lines] == [429, 429, 503]
    assert "dropped" not in lines[0] and lines[2]["dropped"] == 3 and len(dropped) == 3
    assert lines[2]["path"] == "cold" and lines[2]["wait"] == 1.5
