"""Synthesis inside the operator: every jsii call on one thread, identical inputs rendered once.

cdk8s runs on jsii, whose kernel is one Node.js process per Python process driven over a pipe without
locking, so every chart is synthesized on one process-wide single-worker executor (:func:`jsii_thread`;
never concurrently, never on the event loop), however many renderers exist.
Reconciles triggered by Pods and Jobs changing do not change what is rendered, so the result is cached
by a digest of everything that shapes it — the LLMService's identity, spec and warm-until annotation
(rendered as the gateways' ``warmUntil``), the runtime's spec, the render settings. One entry per
LLMService (the latest render), so memory follows the number of services, not the history of
changes, with :data:`CACHE_SIZE` services at most; :meth:`Renderer.forget` drops a deleted service.
The returned manifests are shared with the cache: callers must not mutate them (the applier works on
copies).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import hashlib
import json
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

from noctaya.api import inferenceruntime, llmservice
from noctaya.constructs import settings as render_settings

CACHE_SIZE: Final = 10_000


class RenderFn(Protocol):
    def __call__(
        self,
        *,
        service: llmservice.LLMService,
        runtime: inferenceruntime.InferenceRuntime,
        settings: render_settings.RenderSettings,
    ) -> list[dict[str, Any]]: ...


_JSII_THREAD: concurrent.futures.ThreadPoolExecutor | None = None


def jsii_thread() -> concurrent.futures.ThreadPoolExecutor:
    """The one thread every jsii call of this process runs on (created on first use, never shut down)."""
    global _JSII_THREAD
    if _JSII_THREAD is None:
        _JSII_THREAD = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="jsii")
    return _JSII_THREAD


def _digest(*parts: object) -> str:
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class Renderer:
    """Renders on the jsii thread, keeping the latest render of each service."""

    def __init__(self, *, render: RenderFn, cache_size: int = CACHE_SIZE, timeout: float = 60.0) -> None:
        self._render = render
        # (namespace, name) -> (digest of the inputs, manifests)
        self._cache: collections.OrderedDict[tuple[str, str], tuple[str, list[dict[str, Any]]]] = (
            collections.OrderedDict()
        )
        self._cache_size = cache_size
        self._timeout = timeout
        self.renders = 0  # actual syntheses (cache misses)

    async def render(
        self,
        *,
        service: llmservice.LLMService,
        runtime: inferenceruntime.InferenceRuntime,
        settings: render_settings.RenderSettings,
    ) -> list[dict[str, Any]]:
        key = _digest(
            service.metadata.uid,
            service.metadata.name,
            service.metadata.namespace,
            service.spec.to_manifest(),
            None if service.warm_until is None else service.warm_until.isoformat(),
            runtime.metadata.name,
            runtime.spec.to_manifest(),
            settings.gateway_image,
            settings.default_gateway_replicas,
            settings.owner_references,
            settings.scaler_token,
        )
        service_key = (str(service.metadata.namespace), str(service.metadata.name))
        cached = self._cache.get(service_key)
        if cached is not None and cached[0] == key:
            self._cache.move_to_end(service_key)
            return cached[1]
        loop = asyncio.get_running_loop()
        call: Callable[[], list[dict[str, Any]]] = lambda: self._render(  # noqa: E731
            service=service, runtime=runtime, settings=settings
        )
        # bounded: a wedged jsii kernel fails the pass (retried with backoff) instead of holding a worker
        objects = await asyncio.wait_for(loop.run_in_executor(jsii_thread(), call), self._timeout)
        self.renders += 1
        self._cache[service_key] = (key, objects)
        self._cache.move_to_end(service_key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return objects

    def forget(self, key: tuple[str, str]) -> None:
        """Drop the cached render of a deleted LLMService."""
        self._cache.pop(key, None)

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        """Drop every cached render (the jsii thread is shared and stays)."""
        self._cache.clear()


def owner_reference(body: Mapping[str, Any]) -> dict[str, Any]:
    meta = body.get("metadata") or {}
    return {
        "apiVersion": body.get("apiVersion"),
        "kind": body.get("kind"),
        "name": meta.get("name"),
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }
