"""Make the owned objects of one LLMService match the synthesized chart.

- **Server-side apply** under one field manager (``force``: the operator is the authority for the
  fields it renders; fields it does not render, e.g. the backend's ``replicas`` owned by KEDA, stay with
  their owners).
- **Hash-skip**: each applied object carries ``serving.noctaya.io/applied-hash``, the hash of what was
  rendered; when the live object (from the watch cache) already carries the desired hash and is what
  our last apply produced, no request is sent. A missing or drifted object has no or another hash and
  is applied again; so is an object someone edited while keeping the annotation (its generation, or
  resourceVersion for kinds without one, differs from what our last apply produced), and so is every
  object this replica has not applied yet (after a start or a leadership handover): the hash alone
  cannot tell that nobody edited it since.
- **Create-once** objects (annotated ``serving.noctaya.io/spec-hash`` by the constructs: cache PVC,
  prewarm Job, scaler token Secret; PVCs and Jobs are create-once even without the annotation, hashed
  here) are created when absent and never patched; when the live object
  was created from another spec hash the object is *refused*: reported by name with the command that
  replaces it, left untouched — except a Job that has failed terminally, which holds nothing worth
  keeping: it is deleted (uid precondition) and created again from the new spec, so fixing the spec
  of a failed prewarm is enough to run it again.
- **Prune**: owned objects (controller reference to this LLMService's uid) of the kinds the operator
  renders that are no longer desired are deleted, with a uid precondition.
- **Rejection**: an object the API server refuses as invalid (``400``/``422``: a spec that passed CRD
  validation but not the server's validation of what it renders, e.g. a malformed StorageClass name) is
  *rejected*: reported by name with the server's message instead of failing the pass, and nothing that
  depends on it (the next wave, pruning) is applied. Retrying cannot help until the spec changes.
- **Denial**: any other refusal (``403`` from a ResourceQuota, an admission plugin or webhook, RBAC or
  a terminating namespace; ``409``; ``429``; ``5xx`` such as a full ClusterIP range) is *denied*:
  reported by name with the server's status and message, and, as for a rejection, nothing that depends
  on it is applied or pruned; the pass is retried with backoff. Only an unreachable server raises.
- **Ownership**: before anything is written, every desired object that already exists must be
  controlled by this LLMService (a controller owner reference to its uid). An object of the same name
  that is not (someone else's Service ``<name>``, a leftover of a deleted LLMService, an object applied
  by hand from offline synth) is a *conflict*: reported by name, left untouched, and nothing of the
  pass is applied or pruned — a backend Deployment or public Service that is not ours must never be
  scaled, selected or replaced by us. Objects missing from the watch cache are read once (a create
  is rare), so the check costs nothing on a resync.
- **Initial replicas**: a Deployment rendered without ``replicas`` but annotated
  ``serving.noctaya.io/initial-replicas`` (the backend: KEDA owns its replicas) is created with that
  many, so a service with ``min: 0`` starts no Pod before its first request. The field is then handed to
  a field manager of its own (:data:`INITIAL_REPLICAS_MANAGER`, which applies only ``spec.replicas``,
  never forced) and the object applied without it: the operator's field manager never owns
  ``replicas`` after the creating apply, so its applies never reset what KEDA or the HPA scale to. On
  this replica's first apply of an existing Deployment the object is read once (the watch cache keeps
  no managedFields): if an operator stopped between the creating apply and the hand-over, so that our
  manager still applies ``replicas``, the hand-over is made then, with the value read; a conflict
  there means another manager (KEDA, the HPA) holds the field already.
- **Fencing**: before every write ``may_write()`` is asked; when leadership is lost the pass stops.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

from noctaya.constructs import naming
from noctaya.operator import apiclient

SPEC_HASH: Final = naming.SPEC_HASH_ANNOTATION
APPLIED_HASH: Final = "serving.noctaya.io/applied-hash"
CACHE_KINDS: Final = frozenset({("v1", "PersistentVolumeClaim"), ("batch/v1", "Job")})
#: kinds whose spec Kubernetes will not change after creation: always create-once, hashed here when the
#: rendered object carries no spec hash of its own
CREATE_ONCE_KINDS: Final = CACHE_KINDS
JOB: Final = ("batch/v1", "Job")
DEPLOYMENT: Final = ("apps/v1", "Deployment")
INITIAL_REPLICAS: Final = naming.INITIAL_REPLICAS_ANNOTATION
#: the field manager holding a Deployment's ``replicas`` from its creation until KEDA or the HPA scale it
INITIAL_REPLICAS_MANAGER: Final = "noctaya-initial-replicas"
PRUNABLE: Final = frozenset(
    {
        ("v1", "ConfigMap"),
        ("v1", "Secret"),
        ("v1", "Service"),
        ("v1", "ServiceAccount"),
        ("v1", "PersistentVolumeClaim"),
        ("apps/v1", "Deployment"),
        ("batch/v1", "Job"),
        ("policy/v1", "PodDisruptionBudget"),
        ("keda.sh/v1alpha1", "ScaledObject"),
        ("keda.sh/v1alpha1", "TriggerAuthentication"),
        ("monitoring.coreos.com/v1", "ServiceMonitor"),
    }
)
#: applied (and answered) before everything else: a Deployment rolled for a new configuration must not
#: start Pods that still mount the previous ConfigMap or miss a new Secret or claim
_FIRST_WAVE: Final = frozenset(
    {("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "ServiceAccount"), ("v1", "PersistentVolumeClaim")}
)

#: API answers that refuse the object itself: retrying the same object cannot succeed
REJECTING_STATUSES: Final = frozenset({400, 422})
#: how much of the server's message a refusal keeps
MAX_DETAIL: Final = 400

ObjectKey = tuple[str, str, str]  # (apiVersion, kind, name)
Body = dict[str, Any]


class NotLeaderError(Exception):
    """A write was about to happen after leadership was lost."""


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    return (str(obj.get("apiVersion")), str(obj.get("kind")), str((obj.get("metadata") or {}).get("name")))


def digest(obj: Mapping[str, Any]) -> str:
    """The hash of a rendered manifest (the constructs' spec hash: canonical JSON, sha256)."""
    return naming.spec_hash(obj)


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def fingerprint(obj: Mapping[str, Any]) -> tuple[str, str]:
    """What changes when someone changes the object: its ``generation`` where the kind has one (status
    writes leave it alone), else its ``resourceVersion``; with the uid, so a re-created object differs."""
    meta = obj.get("metadata") or {}
    version = meta.get("generation") if meta.get("generation") is not None else meta.get("resourceVersion")
    return str(meta.get("uid")), str(version)


def owned_by(obj: Mapping[str, Any], uid: str) -> bool:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return any(isinstance(r, Mapping) and r.get("uid") == uid and r.get("controller") for r in refs)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Refusal:
    """A create-once object that exists but was created from another spec."""

    key: ObjectKey
    namespace: str

    @property
    def cache(self) -> bool:
        return self.key[:2] in CACHE_KINDS

    @property
    def message(self) -> str:
        kind, name = self.key[1], self.key[2]
        return (
            f"{kind} {self.namespace}/{name} was created from a different spec and is never replaced "
            f"automatically; delete it to apply the change: kubectl -n {self.namespace} delete "
            f"{kind.lower()} {name}"
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Rejection:
    """A desired object the API server refused as invalid."""

    key: ObjectKey
    namespace: str
    detail: str  # the server's message

    @property
    def message(self) -> str:
        return f"the API server rejected {self.key[1]} {self.namespace}/{self.key[2]}: {self.detail}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class Conflict:
    """A desired object whose name is taken by an object this LLMService does not control."""

    key: ObjectKey
    namespace: str
    service: str

    @property
    def message(self) -> str:
        kind, name = self.key[1], self.key[2]
        return (
            f"{kind} {self.namespace}/{name} already exists and is not controlled by LLMService "
            f"{self.service}; it is left untouched and nothing is applied until it is deleted or renamed"
        )


@dataclasses.dataclass(frozen=True, kw_only=True)
class Denial:
    """A write (or read) of an owned object the API server refused for another reason than
    validation: quota, an admission plugin or webhook, RBAC, a terminating namespace, a server error.
    Unlike a :class:`Rejection`, waiting can help: the pass is retried with backoff."""

    key: ObjectKey
    namespace: str
    status: int
    reason: str
    detail: str  # the server's message

    @property
    def message(self) -> str:
        return (
            f"the API server refused {self.key[1]} {self.namespace}/{self.key[2]} "
            f"({self.status} {self.reason}): {self.detail}"
        )


@dataclasses.dataclass(kw_only=True)
class Report:
    created: list[ObjectKey] = dataclasses.field(default_factory=list)
    applied: list[ObjectKey] = dataclasses.field(default_factory=list)
    skipped: list[ObjectKey] = dataclasses.field(default_factory=list)
    pruned: list[ObjectKey] = dataclasses.field(default_factory=list)
    #: pruned, or found gone (or replaced) when it was to be pruned: no longer live as the caller knew it
    gone: list[ObjectKey] = dataclasses.field(default_factory=list)
    refused: list[Refusal] = dataclasses.field(default_factory=list)
    rejected: list[Rejection] = dataclasses.field(default_factory=list)
    conflicts: list[Conflict] = dataclasses.field(default_factory=list)
    denied: list[Denial] = dataclasses.field(default_factory=list)
    live: dict[ObjectKey, Body] = dataclasses.field(default_factory=dict)  # server responses (write-through)

    @property
    def stopped(self) -> bool:
        """Whether the server refused something: what depends on it waits."""
        return bool(self.rejected or self.denied)

    @property
    def in_place(self) -> set[ObjectKey]:
        """What matches the spec after this pass: applied, created, or found as the last apply left it."""
        return {*self.created, *self.applied, *self.skipped}


class Applier:
    def __init__(
        self, *, client: apiclient.Client, field_manager: str, may_write: Callable[[], bool] = lambda: True
    ) -> None:
        self._client = client
        self._manager = field_manager
        self._may_write = may_write
        # (namespace, service) -> key -> fingerprint of the object our last apply produced: a live object
        # with the desired hash but another fingerprint was edited by someone else and is applied again
        self._applied: dict[tuple[str, str], dict[ObjectKey, tuple[str, str]]] = {}

    def fence(self) -> None:
        """Raise :class:`NotLeaderError` unless this replica may write (every write of a pass asks)."""
        if not self._may_write():
            raise NotLeaderError("leadership lost: refusing to write")

    def forget(self, *, namespace: str, service: str) -> None:
        """Drop what is remembered about a deleted LLMService's objects."""
        self._applied.pop((namespace, service), None)

    async def sync(
        self,
        *,
        namespace: str,
        service: str,
        owner_uid: str,
        desired: Iterable[Mapping[str, Any]],
        live: Mapping[ObjectKey, Mapping[str, Any]],
    ) -> Report:
        report = Report()
        applied = self._applied.setdefault((namespace, service), {})
        wanted = _copies(desired)
        current = await self._current(namespace, wanted, live, owner_uid=owner_uid, report=report)
        report.conflicts = [
            Conflict(key=k, namespace=namespace, service=service)
            for k in wanted
            if k in current and not owned_by(current[k], owner_uid)
        ]
        if report.conflicts or report.denied:  # nothing is written while a name is taken or unreadable
            return report
        for wave in _waves(wanted):
            await asyncio.gather(
                *(self._one(namespace, wanted[k], current.get(k), applied, report) for k in wave)
            )
            if report.stopped:  # what may depend on a refused object is neither applied nor pruned
                return report
        stale = [(k, obj) for k, obj in live.items() if k not in wanted and _prunable(obj, owner_uid)]
        await asyncio.gather(*(self._prune(namespace, k, obj, report) for k, obj in stale))
        for key in [k for k in applied if k not in wanted]:
            del applied[key]
        return report

    async def _current(
        self,
        namespace: str,
        wanted: Mapping[ObjectKey, Body],
        live: Mapping[ObjectKey, Mapping[str, Any]],
        *,
        owner_uid: str,
        report: Report,
    ) -> dict[ObjectKey, Mapping[str, Any]]:
        """``live`` and every wanted object the watch cache does not hold, read from the server."""
        current = dict(live)
        missing = [k for k in wanted if k not in current]
        found = await asyncio.gather(*(self._read(namespace, wanted[k], report) for k in missing))
        for existing in found:
            if existing is not None:
                current[key_of(existing)] = existing
                if owned_by(existing, owner_uid):  # ours, not in the watch cache yet: write it through
                    report.live[key_of(existing)] = dict(existing)
        return current

    async def _read(self, namespace: str, obj: Mapping[str, Any], report: Report) -> Mapping[str, Any] | None:
        """The object of ``obj``'s name as the server has it (absent from the watch cache)."""
        key = key_of(obj)
        kind = apiclient.KINDS.get(key[:2])
        if kind is None:
            return None
        try:
            return await self._client.get(kind, namespace=namespace, name=key[2])
        except apiclient.ApiError as e:
            _refused(e, key=key, namespace=namespace, report=report)
            return None

    async def _one(
        self,
        namespace: str,
        obj: Body,
        live: Mapping[str, Any] | None,
        applied: dict[ObjectKey, tuple[str, str]],
        report: Report,
    ) -> None:
        key = key_of(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("namespace", namespace)
        once = annotations_of(obj).get(SPEC_HASH)
        if once is None and key[:2] in CREATE_ONCE_KINDS:
            once = digest({"spec": obj.get("spec")})
            meta.setdefault("annotations", {})[SPEC_HASH] = once
        if once is not None:
            await self._create_once(namespace, key, obj, once, live, report)
            return
        wanted_hash = digest(obj)
        known = applied.get(key)
        if (
            live is not None
            and annotations_of(live).get(APPLIED_HASH) == wanted_hash
            and known is not None
            and known == fingerprint(live)
        ):
            report.skipped.append(key)
            return
        meta.setdefault("annotations", {})[APPLIED_HASH] = wanted_hash
        initial = annotations_of(obj).get(INITIAL_REPLICAS) if key[:2] == DEPLOYMENT else None
        handed = initial is None or (live is not None and known is not None)
        if not handed and not await self._hand_over_replicas(
            namespace, key, obj, live, initial or "0", report
        ):
            return
        self.fence()
        try:
            result = await self._client.apply(obj, field_manager=self._manager)
        except apiclient.ApiError as e:
            _refused(e, key=key, namespace=namespace, report=report)
            return
        report.live[key] = result
        applied[key] = fingerprint(result)
        (report.created if live is None else report.applied).append(key)

    async def _hand_over_replicas(
        self,
        namespace: str,
        key: ObjectKey,
        obj: Body,
        live: Mapping[str, Any] | None,
        initial: str,
        report: Report,
    ) -> bool:
        """Create an absent Deployment with its initial replicas, then give ``replicas`` to
        :data:`INITIAL_REPLICAS_MANAGER` (see the module docstring); False when the object was refused."""
        if live is None:
            replicas = int(initial) if initial.isdecimal() else 0
            self.fence()
            try:
                live = await self._client.apply(
                    {**obj, "spec": {**(obj.get("spec") or {}), "replicas": replicas}},
                    field_manager=self._manager,
                )
            except apiclient.ApiError as e:
                _refused(e, key=key, namespace=namespace, report=report)
                return False
        else:
            # read fresh (the watch cache drops managedFields): only a creating apply that was not
            # followed by the hand-over leaves the field with our manager
            live = await self._client.get(apiclient.kind_of(obj), namespace=namespace, name=key[2])
            if live is None or not _applies_replicas(live, self._manager):
                return True
        current = (live.get("spec") or {}).get("replicas")
        if not isinstance(current, int):
            return True
        only_replicas = {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "metadata": {"name": key[2], "namespace": namespace},
            "spec": {"replicas": current},
        }
        self.fence()
        try:
            await self._client.apply(only_replicas, field_manager=INITIAL_REPLICAS_MANAGER, force=False)
        except apiclient.ApiError as e:
            if e.status != 409:  # 409: another manager (KEDA, the HPA) holds the field: nothing to hand over
                _refused(e, key=key, namespace=namespace, report=report)
                return False
        return True

    async def _create_once(
        self,
        namespace: str,
        key: ObjectKey,
        obj: Body,
        spec_hash: str,
        live: Mapping[str, Any] | None,
        report: Report,
    ) -> None:
        if live is None:
            self.fence()
            try:
                report.live[key] = await self._client.create(obj)
                report.created.append(key)
                return
            except apiclient.ApiError as e:
                if e.status != 409:
                    _refused(e, key=key, namespace=namespace, report=report)
                    return
            live = await self._read(namespace, obj, report)
            if live is None:  # deleted in between (the next pass creates it), or unreadable
                return
            report.live[key] = dict(live)
        if annotations_of(live).get(SPEC_HASH) == spec_hash:
            report.skipped.append(key)
        elif key[:2] == JOB and _failed(live):
            # a Job that failed for good from another spec holds nothing worth keeping: it is replaced
            # (deleted here, created again by the pass its deletion starts)
            self.fence()
            await self._delete(namespace, key, live, report)
        else:
            report.refused.append(Refusal(key=key, namespace=namespace))

    async def _prune(self, namespace: str, key: ObjectKey, obj: Mapping[str, Any], report: Report) -> None:
        self.fence()
        if await self._delete(namespace, key, obj, report):
            report.gone.append(key)

    async def _delete(self, namespace: str, key: ObjectKey, obj: Mapping[str, Any], report: Report) -> bool:
        """Delete this incarnation of ``obj`` (uid precondition); a refusal is reported, not raised.
        Whether this incarnation is gone (deleted now, or found gone or replaced)."""
        kind = apiclient.KINDS.get(key[:2])
        if kind is None:
            return False
        uid = (obj.get("metadata") or {}).get("uid")
        try:
            if await self._client.delete(kind, namespace=namespace, name=key[2], uid=uid):
                report.pruned.append(key)
        except apiclient.ApiError as e:
            _refused(e, key=key, namespace=namespace, report=report)
            return False
        return True


def _applies_replicas(obj: Mapping[str, Any], manager: str) -> bool:
    """Does ``manager``'s apply own ``spec.replicas`` of ``obj`` (its managedFields)?"""
    for entry in (obj.get("metadata") or {}).get("managedFields") or []:
        if (
            not isinstance(entry, Mapping)
            or entry.get("manager") != manager
            or entry.get("operation") != "Apply"
        ):
            continue
        spec = (entry.get("fieldsV1") or {}).get("f:spec")
        if isinstance(spec, Mapping) and "f:replicas" in spec:
            return True
    return False


def _failed(job: Mapping[str, Any]) -> bool:
    """Has the Job failed terminally (its ``Failed`` condition is True)?"""
    conditions = (job.get("status") or {}).get("conditions") or []
    return any(
        isinstance(c, Mapping) and c.get("type") == "Failed" and c.get("status") == "True" for c in conditions
    )


def _copies(desired: Iterable[Mapping[str, Any]]) -> dict[ObjectKey, Body]:
    """The desired objects by key, with the two levels this module writes to (``metadata``,
    ``metadata.annotations``) copied so the renderer's cached objects stay as they were."""
    wanted: dict[ObjectKey, Body] = {}
    for obj in desired:
        meta = dict(obj.get("metadata") or {})
        if "annotations" in meta:
            meta["annotations"] = dict(meta["annotations"] or {})
        wanted[key_of(obj)] = {**obj, "metadata": meta}
    return wanted


def _waves(wanted: Mapping[ObjectKey, Body]) -> tuple[list[ObjectKey], list[ObjectKey]]:
    first = [k for k in wanted if k[:2] in _FIRST_WAVE]
    return first, [k for k in wanted if k[:2] not in _FIRST_WAVE]


def _prunable(obj: Mapping[str, Any], owner_uid: str) -> bool:
    """A live object no longer desired that this LLMService controls and pruning may delete."""
    return (
        key_of(obj)[:2] in PRUNABLE
        and owned_by(obj, owner_uid)
        and not (obj.get("metadata") or {}).get("deletionTimestamp")
    )


def _refused(error: apiclient.ApiError, *, key: ObjectKey, namespace: str, report: Report) -> None:
    """Record the server's refusal of ``key``: invalid (rejected), or refused for another reason
    (denied); an unreachable server is no answer about the object and is raised."""
    if error.status == 0:
        raise error
    detail = printable(error.message or error.reason)
    if error.status in REJECTING_STATUSES:
        report.rejected.append(Rejection(key=key, namespace=namespace, detail=detail))
    else:
        report.denied.append(
            Denial(key=key, namespace=namespace, status=error.status, reason=error.reason, detail=detail)
        )


def printable(text: str, *, limit: int = MAX_DETAIL) -> str:
    """The server's message for a status or a log line: no control characters, at most ``limit``."""
    clean = "".join(c if c.isprintable() else " " for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"
