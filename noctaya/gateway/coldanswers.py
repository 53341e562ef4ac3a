"""Cold answers: what the gateway answers itself on a cold route while the backend is cold.

A cold route (``cold_routes``: ``GET /v1/models`` answering the served models, ``/health``-style
routes answering a status) is answered here while the backend is cold: it takes no queue slot and
opens no lease. Warm, it is proxied like any other path (``handler``).

A ``models`` route answers the model ids the backend itself listed while it was warm
(:class:`ModelIds`: each time the backend turns Ready the gateway reads its model list once, bounded
and validated), or, before it ever was, ``served_model`` or the service's name. With none of these
known the route is proxied (and wakes the backend) like any other.

What the backend lists is hostile input like any other: at most :data:`MAX_MODELS_BODY` bytes within
``probe_timeout``, not encoded (``identity`` is asked for, an encoded answer is not used), at most
:data:`MAX_MODEL_IDS` models, each id 1 to :data:`MAX_MODEL_ID_CHARS` printable ASCII characters (no
space, no control character); an answer that breaks any of these (or is no OpenAI model list, or not
a 200) changes nothing, and is logged once (at INFO: a backend that lists no models is no fault).
Each gateway learns from its own backend only (one :class:`ModelIds` per app).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import Callable

import aiohttp
from aiohttp import web

from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import errors

logger = logging.getLogger(__name__)

METHODS = frozenset({"GET", "HEAD"})
"""The methods a cold route answers (any other method of its path is proxied)."""
ColdAnswer = Callable[[web.Request], web.Response]

MAX_MODELS_BODY = 64 * 1024
"""Most bytes of the backend's model list read; a longer answer is not used."""
MAX_MODEL_IDS = 32
"""Most models a learned list holds; a longer list is not used."""
MAX_MODEL_ID_CHARS = 256
"""Longest model id (and ``owned_by``) kept, as ``servedModel``'s own bound."""
_MODEL_ID = re.compile(rf"[!-~]{{1,{MAX_MODEL_ID_CHARS}}}")
USER_AGENT = "noctaya-gateway"
"""The ``User-Agent`` of the gateway's own read of the model list (a backend's log tells it apart)."""
_HEADERS = {"Cache-Control": "no-store"}
_OWNER = "noctaya"


class InvalidListing(ValueError):
    """The backend's model list is not one the gateway keeps (the message says why, never quotes it)."""


def parse_listing(body: bytes) -> tuple[tuple[str, str], ...]:
    """The ``(id, owned_by)`` of each model in an OpenAI model list (``{"data": [{"id": …}, …]}``),
    duplicates dropped; :class:`InvalidListing` when ``body`` is not one within the bounds."""
    if len(body) > MAX_MODELS_BODY:
        raise InvalidListing(f"over {MAX_MODELS_BODY} bytes")
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        raise InvalidListing("not JSON") from None
    data = document.get("data") if isinstance(document, dict) else None
    if not isinstance(data, list) or not data:
        raise InvalidListing('no "data" list of models')
    if len(data) > MAX_MODEL_IDS:
        raise InvalidListing(f"over {MAX_MODEL_IDS} models")
    models: dict[str, str] = {}
    for entry in data:
        model_id = entry.get("id") if isinstance(entry, dict) else None
        if not isinstance(model_id, str) or not _MODEL_ID.fullmatch(model_id):
            raise InvalidListing(
                f"a model id that is not 1 to {MAX_MODEL_ID_CHARS} printable ASCII characters"
            )
        owner = entry.get("owned_by")
        models.setdefault(
            model_id, owner if isinstance(owner, str) and _MODEL_ID.fullmatch(owner) else _OWNER
        )
    return tuple(models.items())


def listing_body(models: tuple[tuple[str, str], ...], *, created: int) -> bytes:
    """``models`` as the OpenAI model list a client gets."""
    data = [{"id": mid, "object": "model", "created": created, "owned_by": owner} for mid, owner in models]
    return json.dumps({"object": "list", "data": data}).encode()


class ModelIds:
    """The model ids the backend lists, read once each time it turns Ready (:meth:`backend_ready`,
    then :meth:`run` reads). ``url`` None: nothing to learn (no ``models`` route)."""

    def __init__(self, *, url: str | None, timeout: float) -> None:
        self.url = url
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self.models: tuple[tuple[str, str], ...] = ()
        self.body: bytes | None = None  # the listing clients get, built once per change
        self.last_problem: str | None = None
        self.reads = 0  # model-list reads done, used or not
        self._wanted = asyncio.Event()

    @property
    def ids(self) -> list[str]:
        return [model_id for model_id, _ in self.models]

    def backend_ready(self) -> None:
        """The backend turned Ready: read its model list (once, in :meth:`run`)."""
        if self.url is not None:
            self._wanted.set()

    async def learn(self, session: aiohttp.ClientSession) -> None:
        """Read the backend's model list once; keep it when valid, else keep what was known."""
        assert self.url is not None
        try:
            async with session.get(
                self.url,
                timeout=self.timeout,
                allow_redirects=False,
                headers={"Accept": errors.JSON_TYPE, "Accept-Encoding": "identity", "User-Agent": USER_AGENT},
            ) as response:
                if response.status != 200:
                    raise InvalidListing(f"answered {response.status}")
                encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
                if encoding not in ("", "identity"):  # asked for identity: nothing is decompressed
                    raise InvalidListing("an encoded answer (asked for identity)")
                if response.content_length is not None and response.content_length > MAX_MODELS_BODY:
                    raise InvalidListing(f"over {MAX_MODELS_BODY} bytes")
                body = b""
                while len(body) <= MAX_MODELS_BODY and (
                    chunk := await response.content.read(MAX_MODELS_BODY + 1 - len(body))
                ):
                    body += chunk
            models = parse_listing(body)
        except InvalidListing as exc:
            self._problem(str(exc))
            return
        except (aiohttp.ClientError, TimeoutError, OSError, ValueError) as exc:
            self._problem(f"failed: {type(exc).__name__}")
            return
        self.last_problem = None
        if models != self.models:
            self.models = models
            self.body = listing_body(models, created=int(time.time()))
            shown = ", ".join(self.ids[:4]) + (", …" if len(models) > 4 else "")
            logger.info("the backend serves %d model(s): %s", len(models), shown)

    def _problem(self, problem: str) -> None:
        if problem != self.last_problem:
            logger.info("the backend's model list is not used (%s); cold answers stay as they were", problem)
        self.last_problem = problem

    async def run(self, session: aiohttp.ClientSession) -> None:
        """Read the model list each time the backend turns Ready (until cancelled)."""
        while True:
            await self._wanted.wait()
            self._wanted.clear()
            try:
                await self.learn(session)
            finally:
                self.reads += 1


class ColdAnswers:
    """The cold routes by path (:meth:`get`): what the gateway answers itself while the backend is
    cold; ``models`` holds what a ``models`` route learnt from the backend."""

    def __init__(self, config: gateway_contract.GatewayConfig) -> None:
        self._answers: dict[str, ColdAnswer] = {}
        self._models_paths: set[str] = set()
        fallback = config.served_model or (config.service.name if config.service is not None else None)
        self._fallback = (
            None if fallback is None else listing_body(((fallback, _OWNER),), created=int(time.time()))
        )
        models_path: str | None = None
        for route in config.cold_routes:
            if route.answer == "models":
                self._models_paths.add(route.path)
                models_path = models_path or route.path
            else:

                def status(_request: web.Request, code: int = route.status) -> web.Response:
                    return web.Response(status=code, headers=_HEADERS)

                self._answers[route.path] = status
        self.models = ModelIds(
            url=None if models_path is None else config.backend_url + models_path,
            timeout=config.probe_timeout,
        )

    def _listing(self, _request: web.Request) -> web.Response:
        body = self.models.body or self._fallback
        assert body is not None
        return web.Response(body=body, content_type=errors.JSON_TYPE, headers=_HEADERS)

    def get(self, path: str) -> ColdAnswer | None:
        """The answer of ``path`` while cold, or None: proxied (a ``models`` route with no model
        known yet is)."""
        if path in self._models_paths:
            return self._listing if (self.models.body or self._fallback) is not None else None
        return self._answers.get(path)


def cold_answers(config: gateway_contract.GatewayConfig) -> ColdAnswers:
    """The cold routes of ``config`` (see :class:`ColdAnswers`)."""
    return ColdAnswers(config)
