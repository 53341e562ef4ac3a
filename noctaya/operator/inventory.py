"""The operator's in-memory view of the cluster, fed by kopf's watches.

Three maps, all kept current by watch events (and written through after our own applies, so a
reconcile right after an apply does not wait for the watch to echo it):

- LLMServices by ``(namespace, name)``;
- InferenceRuntimes by name (cluster-scoped);
- objects labelled ``serving.noctaya.io/llmservice=<name>`` — everything the operator owns plus the
  Pods the backend and gateway Deployments create — grouped by ``(namespace, service)`` and keyed by
  ``(apiVersion, kind, name)``.

Memory is bounded by what exists in the cluster: a deleted object leaves the maps. Bodies are stored
with ``managedFields`` dropped (the largest part of a body, and never read here).
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import Any, Final

from noctaya.api import meta as api_meta
from noctaya.operator import applying

LABEL: Final = api_meta.LLMSERVICE_LABEL
ServiceKey = tuple[str, str]  # (namespace, name)
Body = dict[str, Any]


def _slim(body: Mapping[str, Any]) -> Body:
    meta = dict(body.get("metadata") or {})
    meta.pop("managedFields", None)
    return {**body, "metadata": meta}


def service_key_of(body: Mapping[str, Any]) -> ServiceKey | None:
    """The LLMService a labelled object belongs to."""
    meta = body.get("metadata") or {}
    name = (meta.get("labels") or {}).get(LABEL)
    namespace = meta.get("namespace")
    if not name or not namespace:
        return None
    return str(namespace), str(name)


class Inventory:
    def __init__(self) -> None:
        self.services: dict[ServiceKey, Body] = {}
        self.runtimes: dict[str, Body] = {}
        self._owned: dict[ServiceKey, dict[applying.ObjectKey, Body]] = collections.defaultdict(dict)

    # -------------------------------------------------------------- LLMServices and runtimes
    def put_service(self, body: Mapping[str, Any]) -> ServiceKey:
        meta = body.get("metadata") or {}
        key = (str(meta.get("namespace")), str(meta.get("name")))
        current = self.services.get(key)
        if current is None or not _newer(current, body):
            self.services[key] = _slim(body)
        return key

    def drop_service(self, key: ServiceKey) -> None:
        self.services.pop(key, None)
        self._owned.pop(key, None)

    def put_runtime(self, body: Mapping[str, Any]) -> None:
        name = str((body.get("metadata") or {}).get("name"))
        current = self.runtimes.get(name)
        if current is None or not _newer(current, body):
            self.runtimes[name] = _slim(body)

    def drop_runtime(self, name: str) -> None:
        self.runtimes.pop(name, None)

    # -------------------------------------------------------------- labelled objects
    def put_owned(self, body: Mapping[str, Any]) -> ServiceKey | None:
        key = service_key_of(body)
        if key is None:
            return None
        obj_key = applying.key_of(body)
        current = self._owned[key].get(obj_key)
        if current is not None and _newer(current, body):
            return key  # an out-of-order echo of an older version (e.g. our write-through came first)
        self._owned[key][obj_key] = _slim(body)
        return key

    def drop_owned(self, body: Mapping[str, Any]) -> ServiceKey | None:
        key = service_key_of(body)
        if key is None:
            return None
        objects = self._owned.get(key)
        if objects is not None:
            current = objects.get(applying.key_of(body))
            uid = (body.get("metadata") or {}).get("uid")
            if current is not None and (current.get("metadata") or {}).get("uid") in (uid, None):
                del objects[applying.key_of(body)]
            if not objects:
                del self._owned[key]
        return key

    def owned(self, key: ServiceKey) -> Mapping[applying.ObjectKey, Body]:
        return self._owned.get(key, {})

    def of_kind(self, key: ServiceKey, api_version: str, kind: str) -> list[Body]:
        return [b for k, b in self.owned(key).items() if k[0] == api_version and k[1] == kind]

    def find(self, key: ServiceKey, api_version: str, kind: str, name: str) -> Body | None:
        return self.owned(key).get((api_version, kind, name))


def _newer(current: Mapping[str, Any], incoming: Mapping[str, Any]) -> bool:
    """Whether ``current`` is a strictly newer version of the same object than ``incoming``."""
    cur, inc = current.get("metadata") or {}, incoming.get("metadata") or {}
    if cur.get("uid") != inc.get("uid"):
        return False
    try:
        return int(cur.get("resourceVersion") or 0) > int(inc.get("resourceVersion") or 0)
    except ValueError:  # resourceVersions are opaque in general; only compare when they are numbers
        return False
