"""Which paths the gateway proxies, which it answers itself, and what it passes to the engine.

Aspects: every path but the gateway's own is proxied with the same admission (a cold one is held and
wakes the backend); the gateway's own routes answer other methods with 405 and unknown ``/noctaya/``
paths with its 404; a cold route answers ``GET /v1/models`` with the served model (OpenAI list
shape, through the SDK) and a status route its status, opening no lease and taking no slot, while
warm they are proxied; without a served model the route is proxied like any other until the backend
has listed its models; an unknown ``/v1`` path still wakes the backend; the client's
``Authorization`` is stripped before forwarding unless ``forwardAuthorization`` is set; a 401
carries ``WWW-Authenticate: Bearer``; the backend's own errors (a text/plain 404, a 500) pass
through as they are, never rewrapped.
"""

from __future__ import annotations

import asyncio
import pathlib
from typing import Any

import aiohttp
import yarl
from aiohttp import web

from noctaya.dev import fake_engine
from noctaya.gateway import activation, coldanswers, keys, testing


def recording_backend(*, ready: list[bool]) -> tuple[web.Application, list[dict[str, Any]]]:
    """A backend that records every request it gets but the gateway's own model-list reads (it
    lists ``listed``); ``ready[0]`` decides its ``/health``."""
    seen: list[dict[str, Any]] = []

    async def health(request: web.Request) -> web.Response:
        return web.Response(status=200 if ready[0] else 503)

    async def anything(request: web.Request) -> web.Response:
        if request.headers.get("User-Agent") == coldanswers.USER_AGENT:  # the gateway's own read
            return web.json_response({"data": [{"id": "listed"}]})
        seen.append({"method": request.method, "path": request.path_qs, "headers": dict(request.headers)})
        return web.json_response({"path": request.path_qs, "method": request.method})

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_route("*", "/{tail:.*}", anything)
    return app, seen


async def test_every_path_but_the_gateways_own_is_proxied(
    serve_app: Any, http: aiohttp.ClientSession
) -> None:
    app, seen = recording_backend(ready=[True])
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(wait_ready=True)
        for method, path in (("POST", "/tokenize"), ("GET", "/props?x=1"), ("PUT", "/v2/anything")):
            async with http.request(method, gateway.url + path, json={}) as response:
                assert response.status == 200, path
                assert await response.json() == {"path": path, "method": method}
        async with http.post(gateway.url + "/healthz") as response:
            assert response.status == 405 and response.headers["Allow"] == "GET, HEAD"
            assert (await response.json())["error"]["code"] == "method_not_allowed"
        async with http.get(gateway.url + "/noctaya/nope") as response:
            assert response.status == 404
            assert (await response.json())["error"]["code"] == "not_found"
        async with http.get(yarl.URL(gateway.url + "/a/%2e%2e/b", encoded=True)) as response:
            assert response.status == 400  # the dot-segment guard holds on every path
        assert [s["path"] for s in seen] == ["/tokenize", "/props?x=1", "/v2/anything"]
        await gateway.wait_idle()


async def test_cold_routes_answer_without_waking_and_warm_ones_are_proxied(
    serve_app: Any, http: aiohttp.ClientSession, sdk: Any
) -> None:
    ready = [False]
    app, seen = recording_backend(ready=ready)
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(
            servedModel="qwen-cpu",
            coldRoutes=[{"path": "/v1/models", "answer": "models"}, {"path": "/health", "status": 204}],
        )
        client = sdk(gateway)
        listing = await client.models.list()
        assert [(m.id, m.object, m.owned_by) for m in listing.data] == [("qwen-cpu", "model", "noctaya")]
        async with http.get(gateway.url + "/health") as response:
            assert response.status == 204
        async with http.head(gateway.url + "/v1/models") as response:
            assert response.status == 200
        assert gateway.lease_state.value == activation.LeaseState.CLOSED.value
        assert gateway.demand.demand() == 0 and not seen

        # an unknown /v1 path is no cold route: it is held and wakes the backend
        held = asyncio.create_task(http.get(gateway.url + "/v1/model"))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        assert gateway.lease_state is activation.LeaseState.ACTIVATING
        ready[0] = True
        async with await held as response:
            assert response.status == 200
        await gateway.wait_for(lambda: gateway.app[keys.READINESS].ready)
        # warm: the same routes reach the backend
        async with http.get(gateway.url + "/v1/models") as response:
            assert await response.json() == {"path": "/v1/models", "method": "GET"}
        assert [s["path"] for s in seen] == ["/v1/model", "/v1/models"]


async def test_a_models_route_without_a_served_model_is_proxied(
    serve_app: Any, http: aiohttp.ClientSession
) -> None:
    ready = [False]
    app, seen = recording_backend(ready=ready)
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start()  # default cold routes, no servedModel
        held = asyncio.create_task(http.get(gateway.url + "/v1/models"))
        await gateway.wait_for(lambda: gateway.admission.queued == 1)
        ready[0] = True
        async with await held as response:
            assert response.status == 200
        assert [s["path"] for s in seen] == ["/v1/models"]
        # once the backend has listed its models, a cold GET answers them without waking it
        await gateway.wait_for(lambda: gateway.app[keys.COLD_ANSWERS].models.ids == ["listed"])
        ready[0] = False
        await gateway.wait_for(lambda: not gateway.app[keys.READINESS].ready)
        async with http.get(gateway.url + "/v1/models") as response:
            assert [m["id"] for m in (await response.json())["data"]] == ["listed"]
        assert len(seen) == 1 and gateway.lease_state is activation.LeaseState.CLOSED


async def test_the_clients_key_stays_at_the_gateway_unless_forwarding_is_asked(
    serve_app: Any, http: aiohttp.ClientSession, tmp_path: pathlib.Path
) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("sk-client\n")
    app, seen = recording_backend(ready=[True])
    url = await serve_app(app)
    headers = {"Authorization": "Bearer sk-client"}
    async with testing.GatewayStarter(backend_url=url) as starter:
        strip = await starter.start(wait_ready=True, apiKeyFile=str(key_file))
        keep = await starter.start(wait_ready=True, apiKeyFile=str(key_file), forwardAuthorization=True)
        for gateway in (strip, keep):
            async with http.post(gateway.url + "/v1/completions", json={}, headers=headers) as response:
                assert response.status == 200
        assert "Authorization" not in seen[0]["headers"]
        assert seen[1]["headers"]["Authorization"] == "Bearer sk-client"
        async with http.post(strip.url + "/v1/completions", json={}) as response:
            assert response.status == 401
            assert response.headers["WWW-Authenticate"].startswith("Bearer")
            assert (await response.json())["error"]["code"] == "invalid_api_key"
        assert len(seen) == 2


async def test_fake_engine_answers_through_any_path(http: aiohttp.ClientSession) -> None:
    async with (
        fake_engine.running(fake_engine.FakeEngine()) as engine,
        testing.GatewayStarter(backend_url=engine.url) as starter,
    ):
        gateway = await starter.start(wait_ready=True)
        async with http.get(gateway.url + "/health") as response:
            assert response.status == 200  # the engine's own /health, proxied
        async with http.get(gateway.url + "/nope") as response:
            assert response.status == 404  # the engine's 404, passed through


async def test_the_backends_own_errors_pass_through_untouched(
    serve_app: Any, http: aiohttp.ClientSession
) -> None:
    async def health(request: web.Request) -> web.Response:
        return web.Response()

    async def missing(request: web.Request) -> web.Response:
        return web.Response(status=404, text="File Not Found", headers={"X-Engine": "llama"})

    async def broken(request: web.Request) -> web.Response:
        return web.json_response({"detail": "engine error"}, status=500)

    app = web.Application()
    app.router.add_get("/health", health)
    app.router.add_post("/completion", missing)
    app.router.add_post("/v1/chat/completions", broken)
    async with testing.GatewayStarter(backend_url=await serve_app(app)) as starter:
        gateway = await starter.start(wait_ready=True)
        async with http.post(gateway.url + "/completion", json={"prompt": "x"}) as response:
            assert response.status == 404 and response.content_type == "text/plain"
            assert response.headers["X-Engine"] == "llama"
            assert await response.text() == "File Not Found"
        async with http.post(gateway.url + "/v1/chat/completions", json={"model": "m"}) as response:
            assert response.status == 500 and await response.json() == {"detail": "engine error"}
        async with http.get(gateway.url + "/metrics") as response:
            assert 'noctaya_gateway_rejections_total{reason="not_found"} 0.0' in await response.text()
