"""A cold ``GET /v1/models`` answers what the backend listed while it was warm, and never wakes it.

Aspects: before the backend was ever Ready the answer is ``servedModel`` (or the service's name);
each time it turns Ready the gateway reads its model list once, and a cold answer after that is
that list (through the openai SDK, no lease, no slot, the backend not asked); each gateway answers
its own backend's list; a list the backend answers that breaks a bound (too large, too many, an id
with a control character or a space, no list at all, not a 200) changes nothing.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from noctaya.gateway import activation, coldanswers, keys, testing

FAST: dict[str, Any] = {"idleProbeInterval": "20ms", "warmProbeInterval": "20ms"}
"""Nobody waits on these gateways: their backend's turns are seen within a few probes."""


def listing(*ids: str) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": i, "object": "model", "created": 1, "owned_by": "engine"} for i in ids],
    }


class Backend:
    """A backend whose readiness and model list the test sets; counts the model-list reads."""

    def __init__(self, models: dict[str, Any]) -> None:
        self.ready = False
        self.models: Any = models
        self.reads = 0
        self.app = web.Application()
        self.app.router.add_get("/health", self._health)
        self.app.router.add_get("/v1/models", self._models)

    async def _health(self, _request: web.Request) -> web.Response:
        return web.Response(status=200 if self.ready else 503)

    async def _models(self, request: web.Request) -> web.StreamResponse:
        self.reads += 1
        if isinstance(self.models, bytes):  # streamed without a length: the reader's own bound holds
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            await response.prepare(request)
            for _ in range(len(self.models) // 4096):
                await response.write(self.models[:4096])
            return response
        if isinstance(self.models, int):
            return web.Response(status=self.models)
        if isinstance(self.models, tuple):  # ("gzip", listing): encoded though identity was asked
            body = gzip.compress(json.dumps(self.models[1]).encode())
            return web.Response(
                body=body, content_type="application/json", headers={"Content-Encoding": "gzip"}
            )
        return web.json_response(self.models)


async def warm_then_cold(gateway: testing.RunningGateway, backend: Backend, *, reads: int) -> None:
    """The backend turns Ready (its list is read), then cold again."""
    backend.ready = True
    await gateway.wait_for(lambda: gateway.app[keys.COLD_ANSWERS].models.reads == reads)
    assert backend.reads == reads
    backend.ready = False
    await gateway.wait_for(lambda: not gateway.app[keys.READINESS].ready)


async def test_a_cold_models_route_answers_the_list_the_backend_gave_while_warm(
    serve_app: Any, sdk: Any
) -> None:
    first = Backend(listing("org/model-a", "b", "org/model-a"))
    other = Backend(listing("other-model"))
    async with (
        testing.GatewayStarter(backend_url=await serve_app(first.app)) as one,
        testing.GatewayStarter(backend_url=await serve_app(other.app)) as two,
    ):
        gateway = await one.start(servedModel="configured", **FAST)
        named = await two.start(service={"name": "qwen", "namespace": "llm"}, **FAST)  # no servedModel
        assert [m.id for m in (await sdk(gateway).models.list()).data] == ["configured"]
        assert [m.id for m in (await sdk(named).models.list()).data] == ["qwen"]

        await warm_then_cold(gateway, first, reads=1)
        listed = (await sdk(gateway).models.list()).data
        assert [(m.id, m.owned_by) for m in listed] == [("org/model-a", "engine"), ("b", "engine")]
        assert gateway.lease_state is activation.LeaseState.CLOSED and gateway.demand.demand() == 0
        assert first.reads == 1  # the cold answer asked nothing of the backend
        # the other gateway learnt nothing from this backend
        assert [m.id for m in (await sdk(named).models.list()).data] == ["qwen"]
        await warm_then_cold(named, other, reads=1)
        assert [m.id for m in (await sdk(named).models.list()).data] == ["other-model"]
        assert [m.id for m in (await sdk(gateway).models.list()).data] == ["org/model-a", "b"]


HOSTILE: dict[str, Any] = {
    "streamed past the bound": b" " * (coldanswers.MAX_MODELS_BODY * 4),
    "a control character": listing("model\x1b[2J"),
    "a server error": 500,
    "gzip-encoded": ("gzip", listing("compressed")),
}


@pytest.mark.parametrize("answer", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_model_list_changes_nothing(
    serve_app: Any, http: aiohttp.ClientSession, answer: Any
) -> None:
    backend = Backend(listing("kept"))
    async with testing.GatewayStarter(backend_url=await serve_app(backend.app)) as starter:
        gateway = await starter.start(servedModel="configured", **FAST)
        await warm_then_cold(gateway, backend, reads=1)
        backend.models = answer
        await warm_then_cold(gateway, backend, reads=2)
        assert gateway.app[keys.COLD_ANSWERS].models.last_problem is not None
        async with http.get(gateway.url + "/v1/models") as response:
            assert [m["id"] for m in (await response.json())["data"]] == ["kept"]
        async with http.get(gateway.url + "/noctaya/queue") as response:
            assert (await response.json())["servedModels"] == ["kept"]


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"[" * 100_000,  # nesting deep enough to exhaust the parser's recursion
        json.dumps({"data": []}).encode(),
        json.dumps({"data": {"id": "x"}}).encode(),
        json.dumps([{"id": "x"}]).encode(),
        json.dumps(listing(*(f"m{i}" for i in range(coldanswers.MAX_MODEL_IDS + 1)))).encode(),
        json.dumps(listing("a" * (coldanswers.MAX_MODEL_ID_CHARS + 1))).encode(),
        json.dumps(listing("two words")).encode(),
        json.dumps(listing("")).encode(),
        json.dumps({"data": [{"id": 7}]}).encode(),
        json.dumps({"data": [{"id": "ok"}, "stray"]}).encode(),
        b'{"data": [{"id": "' + b"x" * coldanswers.MAX_MODELS_BODY + b'"}]}',
    ],
)
def test_a_listing_out_of_bounds_is_refused_whole(body: bytes) -> None:
    with pytest.raises(coldanswers.InvalidListing):
        coldanswers.parse_listing(body)


def test_a_listing_within_bounds_keeps_ids_in_order_once() -> None:
    ids = [f"org/m-{i}:q4" for i in range(coldanswers.MAX_MODEL_IDS - 1)] + ["org/m-0:q4"]
    body = json.dumps({"data": [{"id": i, "owned_by": "bad owner"} for i in ids]}).encode()
    parsed = coldanswers.parse_listing(body)
    assert [m for m, _ in parsed] == ids[:-1] and {o for _, o in parsed} == {"noctaya"}
