"""A small, typed door to the Kubernetes API for the kinds the operator writes and reads.

The operator handles plain ``dict`` manifests (what the chart synthesizes), so it needs a generic client,
not typed models: this module maps ``(apiVersion, kind)`` to REST paths for the kinds it knows
(:data:`KINDS`), and sends every request through one ``kubernetes_asyncio`` ``ApiClient`` (aiohttp, the
same connection pool, TLS and credentials handling as the rest of the operator). Failures become
:class:`ApiError` with the HTTP status and the server's own message; a missing object on read or delete
is ``None``/``False`` rather than an exception, because the reconciler treats absence as ordinary.
A server that cannot be reached (connection refused or reset, request timeout) is an :class:`ApiError`
too, with status 0 and reason ``Unreachable``: every caller that survives a failed request survives an
outage the same way.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

import aiohttp
from kubernetes_asyncio import client as k8s_client
from kubernetes_asyncio.client import exceptions as k8s_exceptions

from noctaya import __version__

Body = dict[str, Any]
#: sent with every request, so audit logs and API Priority and Fairness can tell the operator apart
USER_AGENT: Final = f"noctaya-operator/{__version__}"


@dataclasses.dataclass(frozen=True)
class Kind:
    """The REST address of one resource kind."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool = True

    def path(self, *, namespace: str | None, name: str | None = None, subresource: str | None = None) -> str:
        root = f"/apis/{self.api_version}" if "/" in self.api_version else f"/api/{self.api_version}"
        parts = [root]
        if self.namespaced:
            if namespace is None:
                raise ValueError(f"{self.kind} is namespaced: a namespace is required")
            parts.append(f"namespaces/{namespace}")
        parts.append(self.plural)
        if name is not None:
            parts.append(name)
            if subresource is not None:
                parts.append(subresource)
        return "/".join(parts)


KINDS: Final[dict[tuple[str, str], Kind]] = {
    (k.api_version, k.kind): k
    for k in (
        Kind("v1", "ConfigMap", "configmaps"),
        Kind("v1", "Secret", "secrets"),
        Kind("v1", "Service", "services"),
        Kind("v1", "ServiceAccount", "serviceaccounts"),
        Kind("v1", "PersistentVolumeClaim", "persistentvolumeclaims"),
        Kind("v1", "Pod", "pods"),
        Kind("v1", "Event", "events"),
        Kind("apps/v1", "Deployment", "deployments"),
        Kind("batch/v1", "Job", "jobs"),
        Kind("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets"),
        Kind("coordination.k8s.io/v1", "Lease", "leases"),
        Kind("keda.sh/v1alpha1", "ScaledObject", "scaledobjects"),
        Kind("keda.sh/v1alpha1", "TriggerAuthentication", "triggerauthentications"),
        Kind("monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors"),
        Kind("serving.noctaya.io/v1alpha1", "LLMService", "llmservices"),
        Kind("serving.noctaya.io/v1alpha1", "InferenceRuntime", "inferenceruntimes", namespaced=False),
    )
}

LEASE: Final = KINDS["coordination.k8s.io/v1", "Lease"]
SECRET: Final = KINDS["v1", "Secret"]
LLMSERVICE: Final = KINDS["serving.noctaya.io/v1alpha1", "LLMService"]
INFERENCERUNTIME: Final = KINDS["serving.noctaya.io/v1alpha1", "InferenceRuntime"]


class UnknownKindError(ValueError):
    """A manifest of a kind the operator does not manage."""


class ApiError(Exception):
    """A failed API request: the HTTP status, the server's reason and message (status 0: unreachable)."""

    def __init__(self, *, status: int, reason: str, message: str) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message


def kind_of(obj: Mapping[str, Any]) -> Kind:
    key = (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))
    try:
        return KINDS[key]
    except KeyError:
        raise UnknownKindError(f"no REST mapping for {key[0]}/{key[1]}") from None


def _error(exc: k8s_exceptions.ApiException) -> ApiError:
    reason, message = str(exc.reason or ""), ""
    try:
        status = json.loads(exc.body or "{}")
        if isinstance(status, dict):
            reason = str(status.get("reason") or reason)
            message = str(status.get("message") or "")
    except (TypeError, ValueError):
        message = str(exc.body or "")[:500]
    return ApiError(status=int(exc.status or 0), reason=reason, message=message)


class Client:
    """Generic object reads and writes through one ``kubernetes_asyncio`` ``ApiClient``.

    Every write names ``field_manager`` (creates, patches and replaces too, not only applies): without
    it the API server records the fields under the client library's user agent ("OpenAPI-Generator").
    """

    def __init__(
        self,
        *,
        api: k8s_client.ApiClient,
        request_timeout: float = 30.0,
        field_manager: str = "noctaya-operator",
    ) -> None:
        self._api = api
        self._api.user_agent = USER_AGENT
        self._timeout = request_timeout
        self._manager = field_manager

    def _managed(self, query: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
        return [("fieldManager", self._manager), *query]

    @property
    def api(self) -> k8s_client.ApiClient:
        return self._api

    async def request(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        query: Sequence[tuple[str, str]] = (),
        content_type: str = "application/json",
    ) -> Body:
        try:
            result = await self._api.call_api(
                path,
                method,
                query_params=list(query),
                header_params={"Content-Type": content_type, "Accept": "application/json"},
                body=body,
                response_types_map={200: "object", 201: "object", 202: "object"},
                auth_settings=["BearerToken"],
                _return_http_data_only=True,
                _request_timeout=self._timeout,
            )
        except k8s_exceptions.ApiException as exc:
            raise _error(exc) from None
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            raise ApiError(status=0, reason="Unreachable", message=f"{method} {path}: {exc!r}") from None
        return result if isinstance(result, dict) else {}

    async def get(self, kind: Kind, *, namespace: str | None, name: str) -> Body | None:
        try:
            return await self.request("GET", kind.path(namespace=namespace, name=name))
        except ApiError as e:
            if e.status == 404:
                return None
            raise

    async def list(self, kind: Kind, *, namespace: str | None = None) -> list[Body]:
        """Every object of ``kind`` (of ``namespace``, for a namespaced kind), each with its
        ``apiVersion`` and ``kind`` (a list response leaves them out of its items)."""
        result = await self.request("GET", kind.path(namespace=namespace))
        items = result.get("items") or []
        return [
            {"apiVersion": kind.api_version, "kind": kind.kind, **item}
            for item in items
            if isinstance(item, dict)
        ]

    async def create(self, obj: Body) -> Body:
        kind = kind_of(obj)
        namespace = obj.get("metadata", {}).get("namespace")
        return await self.request("POST", kind.path(namespace=namespace), body=obj, query=self._managed())

    async def apply(self, obj: Body, *, field_manager: str, force: bool = True) -> Body:
        """Server-side apply: the server merges our intent and owns the fields under ``field_manager``."""
        kind = kind_of(obj)
        meta = obj.get("metadata", {})
        query = [("fieldManager", field_manager), ("force", "true" if force else "false")]
        return await self.request(
            "PATCH",
            kind.path(namespace=meta.get("namespace"), name=meta["name"]),
            body=obj,
            query=query,
            content_type="application/apply-patch+yaml",
        )

    async def patch(
        self, kind: Kind, *, namespace: str | None, name: str, patch: Body, subresource: str | None = None
    ) -> Body:
        return await self.request(
            "PATCH",
            kind.path(namespace=namespace, name=name, subresource=subresource),
            body=patch,
            query=self._managed(),
            content_type="application/merge-patch+json",
        )

    async def replace(self, obj: Body) -> Body:
        kind = kind_of(obj)
        meta = obj.get("metadata", {})
        return await self.request(
            "PUT",
            kind.path(namespace=meta.get("namespace"), name=meta["name"]),
            body=obj,
            query=self._managed(),
        )

    async def delete(self, kind: Kind, *, namespace: str | None, name: str, uid: str | None = None) -> bool:
        """Delete with background propagation; with ``uid``, only that incarnation. False if absent."""
        body: Body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": "Background"}
        if uid is not None:
            body["preconditions"] = {"uid": uid}
        try:
            await self.request("DELETE", kind.path(namespace=namespace, name=name), body=body)
        except ApiError as e:
            if e.status in {404, 409}:  # gone, or replaced by a new incarnation (uid precondition)
                return False
            raise
        return True

    async def resources_of(self, group_version: str) -> set[str] | None:
        """Discovery: the plural names served under ``group_version``; None when it is not served."""
        path = f"/apis/{group_version}" if "/" in group_version else f"/api/{group_version}"
        try:
            result = await self.request("GET", path)
        except ApiError as e:
            if e.status in {404, 503}:  # absent, or an aggregated API that is not available
                return None
            raise
        names = {r.get("name") for r in result.get("resources") or [] if isinstance(r, dict)}
        return {str(n) for n in names if n and "/" not in str(n)}
