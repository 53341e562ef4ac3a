"""An in-memory Kubernetes API server for operator tests: kmock's emulator plus what real servers do.

kmock's ``KubernetesEmulator`` serves discovery and stores objects, but merges every write like a
merge-patch, never changes ``resourceVersion``, replays every object as ADDED on each watch and 404s an
apply of a missing object. The operator relies on more, so this subclass serves every object request
itself (discovery stays kmock's):

- ``resourceVersion`` from one counter; optimistic concurrency (a stale ``resourceVersion`` in a PUT or a
  patch body is ``409 Conflict``); ``uid``, ``creationTimestamp``, ``generation`` bumped on spec changes;
- PUT (replace), merge/strategic patch, JSON patch (a failed ``test`` is ``422``) and server-side apply
  (``application/apply-patch+yaml``: creates a missing object, removes fields the same field manager
  applied before and no longer applies, conflicts with another manager's fields unless ``force``);
- ``404``/``409``/``422`` Status bodies; invalid names are ``422``, and so is a PVC's malformed
  ``spec.storageClassName``;
- ``labelSelector`` and ``fieldSelector`` (``metadata.name``/``metadata.namespace``) on list and watch;
- watch resumes from a ``resourceVersion`` (``410 Gone`` when too old) and honours ``timeoutSeconds``;
- the ``status`` subresource (writes to the main resource keep status, writes to ``/status`` change
  only status) and finalizers with ``deletionTimestamp``;
- owner-reference garbage collection on delete (background cascade, ``Orphan`` respected);
- Deployment ``spec.replicas`` defaulting to 1, as the real server does;
- an outage switch: while down, every request is ``503`` and open watches end;
- admission refusals (:meth:`ApiServer.refuse`): writes of one resource in one namespace answered with a
  given status and message, as a ResourceQuota, an admission webhook or a terminating namespace does;
- ``accesses``: the distinct ``(verb, group, resource, namespace)`` of every request the operator sent
  (its User-Agent is ``noctaya-operator/…`` or kopf's), for the RBAC tests (``tests/operator/access.py``);
  a server-side apply that creates its object counts as ``patch`` and ``create``, as the real
  authorizer checks both;
  ``secret_requests``: the distinct ``(access, name, labelSelector)`` of its requests on Secrets, for the
  check that it touches only the Secrets it owns; ``secret_calls`` counts them by (verb, name).
"""

from __future__ import annotations

import asyncio
import base64
import collections
import copy
import datetime
import json
import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Final, NamedTuple

import aiohttp.web
import attrs
import jsonpatch
import kmock

Key = tuple[str, str | None, str]  # ("group/version/plural", namespace or None, name)
Listener = Callable[[str, str, dict[str, Any]], None]  # (event type, resource, object)

_NAMESPACES = re.compile(r"^/api/v1/namespaces(?:/([^/]+))?/?$")
_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
_EVENT_LOG = 2000  # watch events kept per resource for resuming watches
_MAX_EVENTS_OBJECTS = 1000  # core Events kept per namespace (the real server expires them after 1h)


#: User-Agents of the operator's two clients: its own (``noctaya.operator.apiclient``) and kopf's
OPERATOR_AGENTS: Final = ("noctaya-operator/", "kopf/")


class Access(NamedTuple):
    """One kind of request as RBAC sees it; ``namespace`` is None for cluster-wide and cluster-scoped."""

    verb: str
    group: str
    resource: str  # plural or plural/subresource
    namespace: str | None


def access_of(request: aiohttp.web.BaseRequest) -> Access | None:
    """The RBAC view of a request; None for a non-resource URL (discovery, /version)."""
    parts = [p for p in request.path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    if not rest:
        return None
    namespace: str | None = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    plural, name, sub = rest[0], (rest[1] if len(rest) > 1 else None), (rest[2] if len(rest) > 2 else None)
    method = request.method.upper()
    if method == "GET":
        verb = "get" if name else ("watch" if request.query.get("watch") in {"true", "1"} else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}.get(method, method)
        if verb == "delete" and name is None:
            verb = "deletecollection"
    return Access(verb=verb, group=group, resource=f"{plural}/{sub}" if sub else plural, namespace=namespace)


def now_iso() -> str:
    return datetime.datetime.now(tz=datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def resource_of(group: str, version: str, plural: str) -> str:
    return f"{group}/{version}/{plural}" if group else f"{version}/{plural}"


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


def _status(code: int, reason: str, message: str) -> aiohttp.web.Response:
    body = {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
    }
    return aiohttp.web.json_response(body, status=code)


def _json_or_none(text: str) -> Any:
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def _merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _prune_unapplied(
    target: dict[str, Any], old: dict[str, Any], new: dict[str, Any], others: list[dict[str, Any]]
) -> None:
    """Drop what a manager applied before and no longer applies, unless another manager applied it too
    (as the real server keeps a field another manager still owns)."""
    for key, old_value in old.items():
        held = [o[key] for o in others if isinstance(o, dict) and key in o]
        if key not in new:
            if not held:
                target.pop(key, None)
        elif isinstance(old_value, dict) and isinstance(new[key], dict) and isinstance(target.get(key), dict):
            _prune_unapplied(target[key], old_value, new[key], held)


def _leaves(obj: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if isinstance(obj, dict) and obj:
        out: dict[tuple[str, ...], Any] = {}
        for key, value in obj.items():
            out.update(_leaves(value, (*prefix, key)))
        return out
    return {prefix: obj}


def _same(a: dict[str, Any], b: dict[str, Any]) -> bool:
    def strip(obj: dict[str, Any]) -> dict[str, Any]:
        meta = {k: v for k, v in obj.get("metadata", {}).items() if k != "resourceVersion"}
        return obj | {"metadata": meta}

    return strip(a) == strip(b)


class Selector:
    """A parsed ``labelSelector`` (equality and set-based requirements)."""

    _TERM = re.compile(r"\s*([^,()]+?(?:\s+(?:in|notin)\s+\([^)]*\))?)\s*(?:,|$)")

    def __init__(self, text: str) -> None:
        self.checks: list[Callable[[dict[str, str]], bool]] = []
        for term in (m.group(1) for m in self._TERM.finditer(text or "") if m.group(1)):
            self.checks.append(self._parse(term.strip()))

    @staticmethod
    def _parse(term: str) -> Callable[[dict[str, str]], bool]:
        if m := re.fullmatch(r"(\S+)\s+(in|notin)\s+\(([^)]*)\)", term):
            key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            if op == "in":
                return lambda labels: labels.get(key) in values
            return lambda labels: labels.get(key) not in values
        if "!=" in term:
            key, value = (s.strip() for s in term.split("!=", 1))
            return lambda labels: labels.get(key) != value
        if "=" in term:
            key, value = (s.strip() for s in term.replace("==", "=").split("=", 1))
            return lambda labels: labels.get(key) == value
        if term.startswith("!"):
            return lambda labels: term[1:] not in labels
        return lambda labels: term in labels

    def matches(self, obj: dict[str, Any]) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(check(labels) for check in self.checks)


@attrs.define(kw_only=True)
class ApiServer(kmock.KubernetesEmulator):
    """kmock's emulator serving every object request with the semantics listed in the module docstring."""

    store: dict[Key, dict[str, Any]] = attrs.field(factory=dict, init=False)
    available: bool = attrs.field(default=True, init=False)
    writes: int = attrs.field(default=0, init=False)  # successful writes, for assertions and benchmarks
    _rv: int = attrs.field(default=1000, init=False)
    _log: dict[str, collections.deque[tuple[int, dict[str, Any]]]] = attrs.field(
        factory=lambda: collections.defaultdict(lambda: collections.deque(maxlen=_EVENT_LOG)), init=False
    )
    _watchers: dict[str, set[asyncio.Queue[dict[str, Any] | None]]] = attrs.field(
        factory=lambda: collections.defaultdict(set), init=False
    )
    _applied: dict[tuple[Key, str], dict[str, Any]] = attrs.field(factory=dict, init=False)
    _listeners: list[Listener] = attrs.field(factory=list, init=False)
    #: distinct requests of the operator (a set: it stays small however long a benchmark runs)
    accesses: set[Access] = attrs.field(factory=set, init=False)
    #: distinct (access, object name or "", labelSelector or "") of the operator's requests on Secrets
    secret_requests: set[tuple[Access, str, str]] = attrs.field(factory=set, init=False)
    #: (verb, object name or "") -> how many requests of the operator on Secrets (a few names only)
    secret_calls: collections.Counter[tuple[str, str]] = attrs.field(factory=collections.Counter, init=False)
    #: (resource, namespace) -> (status, reason, message) every create/update/patch of it is refused with
    refusals: dict[tuple[str, str | None], tuple[int, str, str]] = attrs.field(factory=dict, init=False)

    # ------------------------------------------------------------------ helpers for tests
    def declare(self, resource: str, *, kind: str, namespaced: bool = True, status: bool = True) -> None:
        self.resources[resource] = kmock.ResourceInfo(
            kind=kind,
            singular=kind.lower(),
            namespaced=namespaced,
            verbs={"list", "watch", "get", "patch", "create", "delete", "update"},
            subresources={"status"} if status else set(),
        )

    def undeclare(self, resource: str) -> None:
        del self.resources[resource]

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def obj(self, resource: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        return self.store.get((resource, namespace, name))

    def must(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        obj = self.store.get((resource, namespace, name))
        assert obj is not None, f"{resource} {namespace}/{name} does not exist"
        return obj

    def items(self, resource: str, namespace: str | None = None, *, labels: str = "") -> list[dict[str, Any]]:
        selector = Selector(labels)
        return [
            obj
            for (res, ns, _), obj in self.store.items()
            if res == resource and (namespace is None or ns == namespace) and selector.matches(obj)
        ]

    def upsert(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace an object directly (as another controller would), with events."""
        meta = obj.setdefault("metadata", {})
        key = (resource, meta.get("namespace"), meta["name"])
        existing = self.store.get(key)
        if existing is None:
            return self._create(resource, key, obj, keep_status=True)
        meta["resourceVersion"] = existing["metadata"]["resourceVersion"]
        return self._replace(key, obj, subresource=None, keep_status=True)

    def patch_status(
        self, resource: str, namespace: str | None, name: str, status: dict[str, Any]
    ) -> dict[str, Any] | None:
        key = (resource, namespace, name)
        if key not in self.store:
            return None
        new = copy.deepcopy(self.store[key])
        new["status"] = status
        return self._commit(key, new, "MODIFIED")

    def mark_deleting(self, resource: str, namespace: str | None, name: str) -> None:
        """Start a graceful deletion (as a DELETE with a grace period does for Pods)."""
        key = (resource, namespace, name)
        if key in self.store and not self.store[key]["metadata"].get("deletionTimestamp"):
            new = copy.deepcopy(self.store[key])
            new["metadata"]["deletionTimestamp"] = now_iso()
            self._commit(key, new, "MODIFIED")

    def remove(self, resource: str, namespace: str | None, name: str) -> None:
        key = (resource, namespace, name)
        if key in self.store:
            self._delete(key, propagation="Background")

    async def outage(self) -> None:
        """Take the server down: every request gets 503 and every open watch ends."""
        self.available = False
        for queues in self._watchers.values():
            for queue in queues:
                queue.put_nowait(None)

    def recover(self) -> None:
        self.available = True

    def refuse(self, resource: str, namespace: str | None, *, status: int, reason: str, message: str) -> None:
        """Refuse every create, update and patch of ``resource`` in ``namespace`` (not its status) with
        this answer, as admission does, until :meth:`admit` is called."""
        self.refusals[resource, namespace] = (status, reason, message)

    def admit(self, resource: str, namespace: str | None) -> None:
        self.refusals.pop((resource, namespace), None)

    # ------------------------------------------------------------------ request dispatch
    async def __call__(self, raw_request: aiohttp.web.BaseRequest) -> aiohttp.web.StreamResponse:
        """Parse and serve one request; requests are not recorded (memory stays flat in benchmarks)."""
        await raw_request.read()
        agent = raw_request.headers.get("User-Agent", "")
        if agent.startswith(OPERATOR_AGENTS) and (access := access_of(raw_request)) is not None:
            self.accesses.add(access)
            if access.group == "" and access.resource == "secrets":
                parts = [p for p in raw_request.path.split("/") if p]
                name = parts[parts.index("secrets") + 1] if parts[-1] != "secrets" else ""
                self.secret_requests.add((access, name, raw_request.query.get("labelSelector", "")))
                self.secret_calls[(access.verb, name)] += 1
        if not self.available:
            return _status(503, "ServiceUnavailable", "the server is currently unable to handle the request")
        try:
            if (m := _NAMESPACES.match(raw_request.path)) is not None:  # kmock cannot parse these paths
                body = await raw_request.read()
                text = body.decode(errors="replace")
                request = kmock.Request(
                    raw_request=raw_request,
                    url=raw_request.url,
                    method=raw_request.method,
                    params=dict(raw_request.query),
                    headers=dict(raw_request.headers),
                    body=body,
                    text=text,
                    data=_json_or_none(text),
                    resource=kmock.resource("", "v1", "namespaces"),
                    namespace=None,
                    name=m.group(1),
                )
            else:
                request = await kmock.Request._parse(raw_request)
            return await self._handle(request)
        except kmock.KubernetesError as e:
            return _status(e.status, e.reason or type(e).__name__, e.message or "")
        except Exception as e:  # a bug in the emulator: say so in the response, like a real 500
            return _status(500, "InternalError", repr(e))

    async def _handle(self, request: kmock.Request) -> aiohttp.web.StreamResponse:
        if not self.available:
            return _status(503, "ServiceUnavailable", "the server is currently unable to handle the request")
        res = request.resource
        if res is None or res.plural is None or res.group is None or res.version is None:
            # Discovery is kmock's own; its matching finds requests in the request log, so the request
            # is logged only while it is served (the log would otherwise grow with every request).
            self._requests.append(request)
            try:
                return await kmock.RawHandler._handle(self, request)
            finally:
                self._requests.remove(request)
        resource = resource_of(res.group, res.version, res.plural)
        if resource not in {
            resource_of(r.group or "", r.version or "", r.plural or "") for r in self.resources
        }:
            return _status(404, "NotFound", f"the server could not find the requested resource ({resource})")
        try:
            return await self._dispatch(request, resource)
        except ApiError as e:
            return _status(e.code, e.reason, e.message)

    async def _dispatch(self, request: kmock.Request, resource: str) -> aiohttp.web.StreamResponse:
        method, name, ns = request.method.value.upper(), request.name, request.namespace
        info = self.resources[resource]
        if not info.namespaced:
            ns = None
        params = dict(request.params)
        refusal = self.refusals.get((resource, ns))
        if refusal is not None and method in {"POST", "PUT", "PATCH"} and request.subresource is None:
            raise ApiError(*refusal)
        if method == "GET" and params.get("watch") in {"true", "1"}:
            return await self._watch(request, resource, ns, params)
        if name is None:
            if method == "GET":
                return aiohttp.web.json_response(self._list(resource, ns, params))
            if method == "POST":
                body = self._body(request)
                meta = body.setdefault("metadata", {})
                if ns is not None:
                    meta["namespace"] = ns
                if not meta.get("name") and meta.get("generateName"):
                    meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
                new_key: Key = (resource, ns, meta.get("name") or "")
                if new_key in self.store:
                    raise ApiError(409, "AlreadyExists", f'{resource} "{new_key[2]}" already exists')
                return aiohttp.web.json_response(self._create(resource, new_key, body), status=201)
            raise ApiError(405, "MethodNotAllowed", f"{method} on a collection")
        key: Key = (resource, ns, name)
        if method == "GET":
            return aiohttp.web.json_response(self._existing(key))
        if method == "DELETE":
            obj = self._existing(key)
            body = request.data if isinstance(request.data, dict) else {}
            wanted_uid = (body.get("preconditions") or {}).get("uid")
            if wanted_uid and wanted_uid != obj["metadata"].get("uid"):
                raise ApiError(
                    409,
                    "Conflict",
                    f"Precondition failed: UID in precondition: {wanted_uid}, "
                    f"UID in object meta: {obj['metadata'].get('uid')}",
                )
            propagation = params.get("propagationPolicy") or body.get("propagationPolicy") or "Background"
            return aiohttp.web.json_response(self._delete(key, propagation=propagation) or obj)
        if method == "PUT":
            body = self._body(request)
            self._existing(key)
            return aiohttp.web.json_response(self._replace(key, body, subresource=request.subresource))
        if method == "PATCH":
            return await self._patch(request, key, params)
        raise ApiError(405, "MethodNotAllowed", method)

    @staticmethod
    def _body(request: kmock.Request) -> dict[str, Any]:
        data = request.data
        if not isinstance(data, dict):
            try:
                data = json.loads(request.text)
            except ValueError:
                data = None
        if not isinstance(data, dict):
            raise ApiError(400, "BadRequest", "the request body is not a JSON object")
        return copy.deepcopy(data)

    def _existing(self, key: Key) -> dict[str, Any]:
        obj = self.store.get(key)
        if obj is None:
            raise ApiError(404, "NotFound", f'{key[0]} "{key[2]}" not found')
        return obj

    # ------------------------------------------------------------------ reads
    def _select(self, resource: str, ns: str | None, params: dict[str, str]) -> list[dict[str, Any]]:
        selector = Selector(params.get("labelSelector", ""))
        fields = self._fields(params.get("fieldSelector", ""))
        return [
            obj
            for (res, ons, _), obj in self.store.items()
            if res == resource and (ns is None or ons == ns) and selector.matches(obj) and fields(obj)
        ]

    @staticmethod
    def _fields(text: str) -> Callable[[dict[str, Any]], bool]:
        wanted: list[tuple[str, str]] = []
        for term in filter(None, (t.strip() for t in text.split(","))):
            field, _, value = term.replace("==", "=").partition("=")
            if field not in {"metadata.name", "metadata.namespace"}:
                raise ApiError(400, "BadRequest", f'field label not supported: "{field}"')
            wanted.append((field.split(".")[1], value))
        return lambda obj: all(obj.get("metadata", {}).get(f) == v for f, v in wanted)

    def _list(self, resource: str, ns: str | None, params: dict[str, str]) -> dict[str, Any]:
        kind = self.resources[resource].kind or "Object"
        return {
            "apiVersion": "v1",
            "kind": f"{kind}List",
            "metadata": {"resourceVersion": str(self._rv)},
            "items": self._select(resource, ns, params),
        }

    async def _watch(
        self, request: kmock.Request, resource: str, ns: str | None, params: dict[str, str]
    ) -> aiohttp.web.StreamResponse:
        selector = Selector(params.get("labelSelector", ""))
        fields = self._fields(params.get("fieldSelector", ""))
        since = params.get("resourceVersion", "")
        timeout = float(params["timeoutSeconds"]) if params.get("timeoutSeconds") else None

        def wanted(obj: dict[str, Any]) -> bool:
            return (
                (ns is None or obj.get("metadata", {}).get("namespace") == ns)
                and selector.matches(obj)
                and fields(obj)
            )

        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=10_000)
        backlog: list[dict[str, Any]] = []
        if since in {"", "0"}:
            backlog = [{"type": "ADDED", "object": obj} for obj in self._select(resource, ns, {})]
        else:
            log = self._log[resource]
            oldest = log[0][0] if log else self._rv
            if int(since) < oldest - 1 and int(since) < self._rv:
                backlog = [
                    {
                        "type": "ERROR",
                        "object": {
                            "kind": "Status",
                            "apiVersion": "v1",
                            "code": 410,
                            "reason": "Expired",
                            "status": "Failure",
                            "message": f"too old resource version: {since}",
                        },
                    }
                ]
            else:
                backlog = [event for rv, event in log if rv > int(since)]
        response = aiohttp.web.StreamResponse(headers={"Content-Type": "application/json"})
        assert request._raw_request is not None
        await response.prepare(request._raw_request)
        self._watchers[resource].add(queue)
        try:
            for event in backlog:
                if event["type"] == "ERROR" or wanted(event["object"]):
                    await response.write(json.dumps(event).encode() + b"\n")
            if backlog and backlog[0]["type"] == "ERROR":
                return response
            async with asyncio.timeout(timeout):
                while (item := await queue.get()) is not None:
                    if wanted(item["object"]):
                        await response.write(json.dumps(item).encode() + b"\n")
        except (TimeoutError, ConnectionError):
            pass
        finally:
            self._watchers[resource].discard(queue)
        return response

    # ------------------------------------------------------------------ writes
    def _commit(self, key: Key, obj: dict[str, Any], event_type: str) -> dict[str, Any]:
        self._rv += 1
        self.writes += 1
        obj["metadata"]["resourceVersion"] = str(self._rv)
        resource = key[0]
        if event_type == "DELETED":
            self.store.pop(key, None)
            for manager_key in [k for k in self._applied if k[0] == key]:
                del self._applied[manager_key]
        else:
            self.store[key] = obj
        event = {"type": event_type, "object": obj}
        self._log[resource].append((self._rv, event))
        for queue in list(self._watchers[resource]):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:  # a watcher too slow to keep up is disconnected, as on a real server
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait(None)
                self._watchers[resource].discard(queue)
        for listener in list(self._listeners):
            listener(event_type, resource, obj)
        return obj

    def _validate(self, resource: str, key: Key, obj: dict[str, Any]) -> None:
        name = key[2]
        if not name or not _NAME.match(name):
            raise ApiError(422, "Invalid", f'{resource} "{name}" is invalid: metadata.name: Invalid value')
        info = self.resources[resource]
        kind = obj.get("kind")
        if kind is not None and info.kind is not None and kind != info.kind:
            raise ApiError(400, "BadRequest", f"kind {kind} does not match the resource {resource}")
        for label_key, value in (obj["metadata"].get("labels") or {}).items():
            if not isinstance(value, str) or len(value) > 63:
                raise ApiError(422, "Invalid", f"metadata.labels: Invalid value for {label_key!r}")
        if resource == "v1/persistentvolumeclaims":
            storage_class = (obj.get("spec") or {}).get("storageClassName")
            if storage_class and not (isinstance(storage_class, str) and _NAME.match(storage_class)):
                raise ApiError(
                    422,
                    "Invalid",
                    f'PersistentVolumeClaim "{name}" is invalid: spec.storageClassName: '
                    f'Invalid value: "{storage_class}"',
                )

    @staticmethod
    def _secret_data(resource: str, obj: dict[str, Any]) -> None:
        """``stringData`` is write-only: the server folds it into base64 ``data``."""
        if resource == "v1/secrets" and obj.get("stringData"):
            data = obj.setdefault("data", {})
            for key, value in obj.pop("stringData").items():
                data[key] = base64.b64encode(str(value).encode()).decode()

    def _has_status(self, resource: str) -> bool:
        return "status" in self.resources[resource].subresources

    def _create(
        self,
        resource: str,
        key: Key,
        body: dict[str, Any],
        *,
        keep_status: bool = False,
        manager: str | None = None,
    ) -> dict[str, Any]:
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        meta["name"] = key[2]
        if key[1] is not None:
            meta["namespace"] = key[1]
        self._validate(resource, key, obj)
        info = self.resources[resource]
        obj.setdefault("apiVersion", resource.rsplit("/", 1)[0])
        obj.setdefault("kind", info.kind)
        self._secret_data(resource, obj)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_iso()
        meta["generation"] = 1
        meta.pop("resourceVersion", None)
        meta.pop("deletionTimestamp", None)
        if self._has_status(resource) and not keep_status:
            obj.pop("status", None)
        if resource == "apps/v1/deployments":
            obj.setdefault("spec", {}).setdefault("replicas", 1)
        if manager is not None:
            self._applied[(key, manager)] = copy.deepcopy(body)
        if resource == "v1/events" and key[1] is not None:
            self._expire_events(key[1])
        return self._commit(key, obj, "ADDED")

    def _expire_events(self, namespace: str) -> None:
        events = [k for k in self.store if k[0] == "v1/events" and k[1] == namespace]
        for old in events[: max(0, len(events) - _MAX_EVENTS_OBJECTS + 1)]:
            self._commit(old, self.store[old], "DELETED")

    def _replace(
        self, key: Key, body: dict[str, Any], *, subresource: str | None, keep_status: bool = False
    ) -> dict[str, Any]:
        live = self._existing(key)
        sent_rv = body.get("metadata", {}).get("resourceVersion")
        if sent_rv not in (None, "") and sent_rv != live["metadata"]["resourceVersion"]:
            raise ApiError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {key[0]} "{key[2]}": '
                "the object has been modified; please apply your changes "
                "to the latest version and try again",
            )
        return self._update(key, live, copy.deepcopy(body), subresource=subresource, keep_status=keep_status)

    def _update(
        self,
        key: Key,
        live: dict[str, Any],
        new: dict[str, Any],
        *,
        subresource: str | None,
        keep_status: bool = False,
    ) -> dict[str, Any]:
        resource = key[0]
        new.setdefault("metadata", {})
        if subresource == "status":
            merged = copy.deepcopy(live)
            merged["status"] = new.get("status")
            if merged["status"] is None:
                merged.pop("status")
            new = merged
        elif self._has_status(resource) and not keep_status:
            if "status" in live:
                new["status"] = live["status"]
            else:
                new.pop("status", None)
        meta, old_meta = new["metadata"], live["metadata"]
        for fixed in ("uid", "creationTimestamp", "name", "namespace", "deletionTimestamp"):
            if fixed in old_meta:
                meta[fixed] = old_meta[fixed]
            else:
                meta.pop(fixed, None)
        self._validate(resource, key, new)
        self._secret_data(resource, new)
        if resource == "apps/v1/deployments":
            new.setdefault("spec", {}).setdefault("replicas", 1)
        body_of = {k: v for k, v in new.items() if k not in {"metadata", "status"}}
        old_body = {k: v for k, v in live.items() if k not in {"metadata", "status"}}
        meta["generation"] = old_meta.get("generation", 1) + (1 if body_of != old_body else 0)
        if _same(new, live):  # a no-op write changes nothing, not even resourceVersion
            return live
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._commit(key, new, "DELETED")
            self._collect(new["metadata"]["uid"])
            return new
        return self._commit(key, new, "MODIFIED")

    async def _patch(self, request: kmock.Request, key: Key, params: dict[str, str]) -> aiohttp.web.Response:
        content_type = request.headers.get("Content-Type", "").split(";")[0].strip()
        resource = key[0]
        if content_type == "application/apply-patch+yaml":
            body = self._body(request)
            manager = params.get("fieldManager")
            if not manager:
                raise ApiError(422, "Invalid", "PatchOptions.meta.k8s.io: fieldManager is required for apply")
            if key not in self.store:
                # the real server authorizes an apply that creates its object as a create, too
                if request.headers.get("User-Agent", "").startswith(OPERATOR_AGENTS) and request.resource:
                    group, plural = request.resource.group or "", request.resource.plural or ""
                    self.accesses.add(
                        Access(verb="create", group=group, resource=plural, namespace=request.namespace)
                    )
                return aiohttp.web.json_response(
                    self._create(resource, key, body, manager=manager), status=201
                )
            live = self.store[key]
            force = params.get("force") in {"true", "1"}
            if not force:
                mine = _leaves(body)
                for (other_key, other), applied in self._applied.items():
                    if other_key == key and other != manager:
                        clash = [p for p, v in _leaves(applied).items() if p in mine and mine[p] != v]
                        if clash:
                            raise ApiError(
                                409,
                                "Conflict",
                                f"Apply failed with 1 conflict: conflict with "
                                f'"{other}": .{".".join(clash[0])}',
                            )
            new = copy.deepcopy(live)
            others = [body for (k, m), body in self._applied.items() if k == key and m != manager]
            _prune_unapplied(new, self._applied.get((key, manager), {}), body, others)
            new = _merge_patch(new, body)
            self._applied[(key, manager)] = copy.deepcopy(body)
            return aiohttp.web.json_response(self._update(key, live, new, subresource=request.subresource))
        live = self._existing(key)
        data = request.data if request.data is not None else json.loads(request.text or "null")
        if content_type == "application/json-patch+json" or isinstance(data, list):
            try:
                new = jsonpatch.apply_patch(live, data)
            except jsonpatch.JsonPatchTestFailed as e:
                raise ApiError(422, "Invalid", f"the server rejected our request: {e}") from e
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as e:
                raise ApiError(422, "Invalid", str(e)) from e
        elif isinstance(data, dict):
            sent_rv = data.get("metadata", {}).get("resourceVersion")
            if sent_rv not in (None, "") and sent_rv != live["metadata"]["resourceVersion"]:
                raise ApiError(
                    409,
                    "Conflict",
                    f'Operation cannot be fulfilled on {resource} "{key[2]}": the object has been modified',
                )
            new = _merge_patch(live, data)
        else:
            raise ApiError(400, "BadRequest", "the patch body is neither an object nor a list")
        return aiohttp.web.json_response(self._update(key, live, new, subresource=request.subresource))

    def _delete(self, key: Key, *, propagation: str) -> dict[str, Any] | None:
        live = self.store[key]
        meta = live["metadata"]
        if meta.get("finalizers"):
            if not meta.get("deletionTimestamp"):
                new = copy.deepcopy(live)
                new["metadata"]["deletionTimestamp"] = now_iso()
                return self._commit(key, new, "MODIFIED")
            return live
        gone = self._commit(key, copy.deepcopy(live), "DELETED")
        if propagation != "Orphan":
            self._collect(meta["uid"])
        return gone

    def _collect(self, owner_uid: str) -> None:
        """Garbage-collect dependents whose every owner is gone (cascading)."""
        alive = {obj["metadata"].get("uid") for obj in self.store.values()}
        for key, obj in list(self.store.items()):
            refs: Iterable[dict[str, Any]] = obj["metadata"].get("ownerReferences") or []
            uids = {ref.get("uid") for ref in refs}
            if owner_uid in uids and not (uids & alive) and key in self.store:
                self._delete(key, propagation="Background")
