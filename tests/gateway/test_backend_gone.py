"""A request whose connect is refused reached no backend: it is held like a cold one, not failed.

Aspects: in front of a Service with no ready endpoint (it refuses, as a ClusterIP Service does), a
request the gateway still routes as warm marks the backend cold at once, is held in the queue with
the lease open, and is served once an endpoint is back; in reject mode it gets 503 + Retry-After
(safe to retry), never a 502.
"""

from __future__ import annotations

import asyncio

import aiohttp

from noctaya.gateway import activation, keys
from tests.gateway.conftest import behind_a_service


async def test_a_refused_connect_is_held_and_served_when_an_endpoint_is_back(
    http: aiohttp.ClientSession,
) -> None:
    async with behind_a_service() as (svc, gateway, port):
        svc.remove("e")
        assert gateway.app[keys.READINESS].ready  # it has not noticed yet
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        held = asyncio.create_task(http.post(gateway.url + "/v1/chat/completions", json=body))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        assert not gateway.app[keys.READINESS].ready
        assert gateway.lease_state is activation.LeaseState.ACTIVATING
        svc.add(name="e", port=port)
        async with await held as response:
            assert response.status == 200
            assert (await response.json())["choices"][0]["message"]["content"] == "tok tok"
        await gateway.wait_idle()


async def test_in_reject_mode_a_refused_connect_is_a_503_to_retry(http: aiohttp.ClientSession) -> None:
    async with behind_a_service(coldStartMode="reject") as (svc, gateway, _):
        svc.remove("e")
        async with http.post(gateway.url + "/v1/completions", json={"prompt": "x"}) as response:
            assert response.status == 503 and response.headers["Retry-After"] == "2"
            assert (await response.json())["error"]["code"] == "model_starting"
        await gateway.wait_idle()
