"""Client API-key authentication.

Aspects: no key file means no auth; with a key file, a missing, malformed, non-Bearer or wrong key is a
401 with an OpenAI-shaped body (the SDK raises AuthenticationError) and the right key passes; the
file is reread per request, so rotating it in place (atomic replace, as a Secret volume does) takes
effect at once; several lines are several accepted keys; an empty, missing or oversized file denies
everything; a refused request takes no queue slot and opens no lease; probe and monitoring endpoints
stay open; refusals are counted.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pathlib
from collections.abc import Callable

import aiohttp
import openai
import pytest

from noctaya.dev import fake_engine
from noctaya.gateway import auth, keys, testing
from noctaya.serving import connections

SdkFactory = Callable[..., openai.AsyncOpenAI]


@pytest.fixture
def key_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "token"
    path.write_text("sk-first\n")
    return path


def rotate(path: pathlib.Path, content: str) -> None:
    """Replace the file atomically, the way the kubelet swaps a Secret volume's data."""
    staging = path.with_suffix(".new")
    staging.write_text(content)
    os.replace(staging, path)


async def models(client: openai.AsyncOpenAI) -> list[str]:
    return [m.id for m in (await client.models.list()).data]


async def test_no_key_file_means_no_auth(gateways: testing.GatewayStarter, sdk: SdkFactory) -> None:
    gateway = await gateways.start(wait_ready=True)
    assert await models(sdk(gateway, api_key="anything")) == ["fake-model"]


async def test_right_key_passes_and_wrong_keys_get_401(
    gateways: testing.GatewayStarter, sdk: SdkFactory, http: aiohttp.ClientSession, key_file: pathlib.Path
) -> None:
    gateway = await gateways.start(wait_ready=True, apiKeyFile=str(key_file))
    assert await models(sdk(gateway, api_key="sk-first")) == ["fake-model"]
    with pytest.raises(openai.AuthenticationError) as caught:
        await models(sdk(gateway, api_key="sk-wrong"))
    assert caught.value.code == "invalid_api_key"
    for header in (
        None,
        "sk-first",
        "Basic sk-first",
        "Bearer",
        "Bearer ",
        "bearer sk-firs",
        "Bearer " + "x" * 5000,
    ):
        headers = {} if header is None else {"Authorization": header}
        async with http.get(gateway.url + "/v1/models", headers=headers) as response:
            assert response.status == 401, header
            body = await response.json()
            assert body["error"]["type"] == "invalid_request_error"
    async with http.get(gateway.url + "/v1/models", headers={"Authorization": "bEaReR sk-first"}) as response:
        assert response.status == 200  # the scheme is case-insensitive
    assert (
        gateway.app[keys.METRICS].registry.get_sample_value(
            "noctaya_gateway_rejections_total", {"reason": "unauthorized"}
        )
        == 1 + 7
    )


async def test_rotation_in_place_needs_no_restart(
    gateways: testing.GatewayStarter, sdk: SdkFactory, key_file: pathlib.Path
) -> None:
    gateway = await gateways.start(wait_ready=True, apiKeyFile=str(key_file))
    assert await models(sdk(gateway, api_key="sk-first"))
    rotate(key_file, "sk-first\nsk-second\n")  # overlap: both accepted
    assert await models(sdk(gateway, api_key="sk-first"))
    assert await models(sdk(gateway, api_key="sk-second"))
    rotate(key_file, "sk-second\n")
    with pytest.raises(openai.AuthenticationError):
        await models(sdk(gateway, api_key="sk-first"))
    assert await models(sdk(gateway, api_key="sk-second"))


def spoil(path: pathlib.Path, problem: str) -> None:
    if problem == "empty":
        path.write_text("")
    elif problem == "blank":
        path.write_text("\n  \n")
    elif problem == "missing":
        path.unlink()
    elif problem == "oversized":
        path.write_text("sk-first\n" + "x" * (auth.MAX_KEY_FILE_BYTES + 1))
    else:
        path.unlink()
        path.mkdir()


@pytest.mark.parametrize("problem", ["empty", "blank", "missing", "oversized", "directory"])
async def test_unusable_key_file_denies(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession, key_file: pathlib.Path, problem: str
) -> None:
    spoil(key_file, problem)
    gateway = await gateways.start(wait_ready=True, apiKeyFile=str(key_file))
    for token in ("", "sk-first"):
        async with http.get(
            gateway.url + "/v1/models", headers={"Authorization": f"Bearer {token}"}
        ) as response:
            assert response.status == 401


async def test_refused_request_takes_no_slot_and_opens_no_lease(
    engine: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    key_file: pathlib.Path,
) -> None:
    engine.state.ready_override = False
    gateway = await gateways.start(apiKeyFile=str(key_file), maxQueue=1)
    for _ in range(5):
        async with http.post(
            gateway.url + "/v1/chat/completions",
            json={"stream": True},
            headers={"Authorization": "Bearer nope"},
        ) as response:
            assert response.status == 401
    assert gateway.admission.queued == 0 and gateway.demand.demand() == 0
    assert (
        gateway.app[keys.METRICS].registry.get_sample_value(
            "noctaya_gateway_activation_events_total", {"event": "started"}
        )
        == 0
    )


async def test_probe_and_monitoring_endpoints_stay_open(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession, key_file: pathlib.Path
) -> None:
    gateway = await gateways.start(wait_ready=True, apiKeyFile=str(key_file))
    for path in ("/healthz", "/metrics", "/noctaya/queue"):
        async with http.get(gateway.url + path) as response:
            assert response.status == 200, path


async def test_key_file_unit(key_file: pathlib.Path) -> None:
    keys_ = auth.KeyFile(path=str(key_file), max_key_bytes=64)
    assert keys_.enabled and await keys_.keys() == [b"sk-first"]
    assert await keys_.allows("Bearer sk-first") and await keys_.allows("Bearer   sk-first ")
    for header in ("Bearer sk-first2", "Token sk-first", None):
        assert not await keys_.allows(header)
    assert await auth.KeyFile(path=None, max_key_bytes=64).allows(None)


async def test_a_fifo_in_place_of_the_key_file_freezes_nothing(
    gateways: testing.GatewayStarter, http: aiohttp.ClientSession, tmp_path: pathlib.Path
) -> None:
    """A FIFO opened for reading waits for a writer; the key file is never read that way, and the
    other endpoints answer meanwhile."""
    fifo = tmp_path / "key"
    os.mkfifo(fifo)
    gateway = await gateways.start(wait_ready=True, apiKeyFile=str(fifo))
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with http.get(gateway.url + "/v1/models", headers={"Authorization": "Bearer x"}) as response:
        assert response.status == 401
    async with http.get(gateway.url + "/healthz") as response:
        assert response.status == 200
    assert loop.time() - started < auth.READ_TIMEOUT  # refused at once: not a regular file


async def test_a_key_longer_than_a_header_can_carry_is_reported(
    engine: fake_engine.RunningEngine,
    gateways: testing.GatewayStarter,
    http: aiohttp.ClientSession,
    tmp_path: pathlib.Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The longest key a header can carry is accepted; a longer one could never match and is said so.
    (The backend is cold in reject mode, so an accepted key is a 503 ``model_starting`` from the
    gateway itself: the engine's own header bound is not what is tested.)"""
    engine.state.ready_override = False
    limit = connections.max_header_value(connections.Limits(), "Bearer ")
    fits, too_long = "k" * limit, "l" * (limit + 1)
    path = tmp_path / "key"
    path.write_text(f"{fits}\n{too_long}\n")
    gateway = await gateways.start(apiKeyFile=str(path), coldStartMode="reject")
    with caplog.at_level(logging.WARNING, logger="noctaya.gateway.auth"):
        async with http.get(
            gateway.url + "/v1/models", headers={"Authorization": f"Bearer {fits}"}
        ) as response:
            assert response.status == 503
            assert (await response.json())["error"]["code"] == "model_starting"
    assert any("longer than" in r.getMessage() and "never match" in r.getMessage() for r in caplog.records)
    async with http.get(
        gateway.url + "/v1/models", headers={"Authorization": f"Bearer {too_long}"}
    ) as response:
        assert response.status == 400  # beyond the header bound: the parser's refusal, still JSON
        assert (await response.json())["error"]["code"] == "malformed_request"


async def test_a_key_is_told_at_once_only_while_the_file_is_unchanged(key_file: pathlib.Path) -> None:
    keys_ = auth.KeyFile(path=str(key_file), max_key_bytes=64)
    assert keys_.allows_now("Bearer sk-first") is None  # never read: the caller awaits allows()
    assert keys_.allows_now(None) is False and keys_.allows_now("Basic x") is False
    assert await keys_.allows("Bearer sk-first")
    assert keys_.allows_now("Bearer sk-first") is True
    assert keys_.allows_now("Bearer sk-other") is False
    rotate(key_file, "sk-second\n")
    assert keys_.allows_now("Bearer sk-second") is None  # changed: read again first
    assert await keys_.allows("Bearer sk-second")
    assert keys_.allows_now("Bearer sk-second") is True
    os.unlink(key_file)
    assert keys_.allows_now("Bearer sk-second") is None
    assert auth.KeyFile(path=None, max_key_bytes=64).allows_now(None) is True
