"""The kopf side of the operator: watches that keep the inventory current and mark work.

kopf does what it is best at — listing and watching the resources, reconnecting, indexing, liveness —
and every handler here is a few lines: record the body in the
:class:`~noctaya.operator.inventory.Inventory`, then mark the affected LLMService(s) in the
:class:`~noctaya.operator.queueing.WorkQueue`. The reconciles themselves run on the queue's workers,
so a burst of Pod events costs one reconcile per service, and no reconcile ever runs twice at once for
the same service.

What marks an LLMService: its own creation, spec change (generation), a change of its warm-until
annotation (which renders into the gateways' config), resume after a restart, or deletion; a change
of any object labelled with its name (Deployments, Pods, Jobs, ScaledObjects and the other owned
kinds); a change of an InferenceRuntime it names, selects by vendor, or resolved to before
(kopf index ``llmservices_by_runtime``); the KEDA ScaledObject CRD appearing or disappearing.

A fresh :class:`kopf.OperatorRegistry` is made per operator instance (:func:`make_registry`), and the
instance's state reaches the handlers through kopf's ``memo``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any, Final

import kopf
from kopf._cogs.structs import references  # Selector: the public key type of label_selectors

from noctaya.api import llmservice
from noctaya.api import meta as api_meta
from noctaya.operator import discovery as discovery_
from noctaya.operator import inventory as inventory_
from noctaya.operator import queueing, reconciliation

logger = logging.getLogger(__name__)

GROUP: Final = api_meta.GROUP
VERSION: Final = api_meta.VERSION
LABEL: Final = inventory_.LABEL
#: (group, version, plural) of every labelled kind the operator watches; Secrets are not watched (the
#: operator reads its one Secret per service, the scaler token, by name: no cluster-wide Secret list)
OWNED_RESOURCES: Final = (
    ("", "v1", "pods"),
    ("", "v1", "services"),
    ("", "v1", "configmaps"),
    ("", "v1", "persistentvolumeclaims"),
    ("apps", "v1", "deployments"),
    ("batch", "v1", "jobs"),
    ("policy", "v1", "poddisruptionbudgets"),
    ("keda.sh", "v1alpha1", "scaledobjects"),
)


@dataclasses.dataclass(kw_only=True)
class Context:
    """What the handlers of one operator instance share (passed to kopf as ``memo``)."""

    inventory: inventory_.Inventory
    queue: queueing.WorkQueue[inventory_.ServiceKey]
    discovery: discovery_.Discovery
    #: each runtime's spec as the runtime handler last saw it: which change is a change of spec
    runtime_specs: dict[str, Any] = dataclasses.field(default_factory=dict)
    login: kopf.ConnectionInfo | None = None  # explicit server (tests, local runs); None: kopf's defaults


def _ctx(memo: Any) -> Context:
    ctx = memo.get("ctx") if isinstance(memo, Mapping) else getattr(memo, "ctx", None)
    if not isinstance(ctx, Context):
        raise RuntimeError("operator context missing from kopf memo")
    return ctx


def runtime_keys(spec: Mapping[str, Any], status: Mapping[str, Any]) -> set[tuple[str, str]]:
    """Index keys of the runtimes an LLMService uses or may select."""
    keys: set[tuple[str, str]] = set()
    runtime = spec.get("runtime") if isinstance(spec.get("runtime"), Mapping) else {}
    if isinstance(runtime, Mapping):
        if isinstance(runtime.get("name"), str):
            keys.add(("name", runtime["name"]))
        selector = runtime.get("selector")
        if isinstance(selector, Mapping):
            for vendor in selector.get("vendor") or []:
                if isinstance(vendor, str):
                    keys.add(("vendor", vendor))
    resolved = status.get("resolvedRuntime")
    if isinstance(resolved, str) and resolved:
        keys.add(("name", resolved))
    return keys


def _warm_until(meta: Mapping[str, Any]) -> object:
    annotations = meta.get("annotations")
    return annotations.get(llmservice.WARM_UNTIL_ANNOTATION) if isinstance(annotations, Mapping) else None


def _selection(meta: Mapping[str, Any]) -> object:
    annotations = meta.get("annotations")
    return (
        annotations.get(reconciliation.RUNTIME_SELECTION_ANNOTATION)
        if isinstance(annotations, Mapping)
        else None
    )


def make_registry() -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()

    @kopf.on.login(registry=registry)
    async def login(*, memo: Any, **kwargs: Any) -> kopf.ConnectionInfo | None:
        ctx = _ctx(memo)
        if ctx.login is not None:
            return ctx.login
        return kopf.login_with_service_account(**kwargs) or kopf.login_with_kubeconfig(**kwargs)

    @kopf.index(GROUP, VERSION, "llmservices", registry=registry, id="llmservices_by_runtime")
    async def llmservices_by_runtime(
        *, namespace: str | None, name: str, spec: Mapping[str, Any], status: Mapping[str, Any], **_: Any
    ) -> dict[tuple[str, str], tuple[str, str]]:
        return {key: (str(namespace), name) for key in runtime_keys(spec, status)}

    # The inventory is fed from kopf's indexing step: kopf runs no other handler of any resource until
    # every indexed resource is listed and indexed, so no LLMService is reconciled before the runtimes
    # and its owned objects are in the inventory (nothing is reported absent that is only unlisted).
    @kopf.index(GROUP, VERSION, "inferenceruntimes", registry=registry, id="runtimes_listed")
    async def runtimes_listed(*, body: Mapping[str, Any], memo: Any, **_: Any) -> None:
        _ctx(memo).inventory.put_runtime(dict(body))

    async def owned_listed(*, body: Mapping[str, Any], memo: Any, **_: Any) -> None:
        _ctx(memo).inventory.put_owned(dict(body))

    for group, version, plural in OWNED_RESOURCES:
        kopf.index(
            group, version, plural, labels={LABEL: kopf.PRESENT}, registry=registry, id=f"listed-{plural}"
        )(owned_listed)

    @kopf.on.event(GROUP, VERSION, "llmservices", registry=registry, id="llmservice")
    async def llmservice_event(*, type: str | None, body: Mapping[str, Any], memo: Any, **_: Any) -> None:
        ctx = _ctx(memo)
        raw = dict(body)
        meta = raw.get("metadata") or {}
        key = (str(meta.get("namespace")), str(meta.get("name")))
        if type == "DELETED":
            ctx.inventory.drop_service(key)
            ctx.queue.forget(key)
            ctx.queue.add(key)  # one last pass drops what the reconciler keeps for it
            return
        before = ctx.inventory.services.get(key)
        ctx.inventory.put_service(raw)
        bmeta = (before or {}).get("metadata") or {}
        changed = (
            before is None
            or bmeta.get("generation") != meta.get("generation")
            or bmeta.get("uid") != meta.get("uid")
        )
        if (
            changed
            or bool(meta.get("deletionTimestamp"))
            or _warm_until(bmeta) != _warm_until(meta)  # an annotation: no new generation
            or _selection(bmeta) != _selection(meta)
        ):
            ctx.queue.add(key, reset=changed)  # a new spec is worth a pass at once, backoff or not

    @kopf.on.event(GROUP, VERSION, "inferenceruntimes", registry=registry, id="inferenceruntime")
    async def runtime_event(
        *,
        type: str | None,
        body: Mapping[str, Any],
        memo: Any,
        llmservices_by_runtime: kopf.Index[tuple[str, str], tuple[str, str]] | None = None,
        **_: Any,
    ) -> None:
        ctx = _ctx(memo)
        raw = dict(body)
        name = str((raw.get("metadata") or {}).get("name"))
        before = ctx.runtime_specs.get(name)  # as this handler last saw it (the index stored it already)
        if type == "DELETED":
            ctx.inventory.drop_runtime(name)
            ctx.runtime_specs.pop(name, None)
        else:
            ctx.inventory.put_runtime(raw)
            ctx.runtime_specs[name] = raw.get("spec")
            if before is not None and before == raw.get("spec"):
                return  # metadata/status only: nothing to render differently
        vendors = {str((spec or {}).get("vendor")) for spec in (before, raw.get("spec")) if spec is not None}
        users: set[tuple[str, str]] = set()
        for index_key in [("name", name)] + [("vendor", v) for v in vendors]:
            if llmservices_by_runtime is not None and index_key in llmservices_by_runtime:
                users.update(llmservices_by_runtime[index_key])
        for key in users:
            ctx.queue.add(key)

    async def owned_event(*, type: str | None, body: Mapping[str, Any], memo: Any, **_: Any) -> None:
        ctx = _ctx(memo)
        raw = dict(body)
        key = ctx.inventory.drop_owned(raw) if type == "DELETED" else ctx.inventory.put_owned(raw)
        if key is not None and key in ctx.inventory.services:
            ctx.queue.add(key)

    for group, version, plural in OWNED_RESOURCES:
        kopf.on.event(
            group, version, plural, labels={LABEL: kopf.PRESENT}, registry=registry, id=f"owned-{plural}"
        )(owned_event)

    @kopf.on.event(
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        field="metadata.name",
        value=discovery_.KEDA_CRD,
        registry=registry,
        id="keda-crd",
    )
    async def keda_crd_event(*, memo: Any, **_: Any) -> None:
        ctx = _ctx(memo)
        ctx.discovery.invalidate()
        for key in list(ctx.inventory.services):
            ctx.queue.add(key)

    return registry


def kopf_settings(*, fast: bool = False) -> kopf.OperatorSettings:
    """kopf settings for this operator; ``fast`` shortens waits for tests and benchmarks."""
    settings = kopf.OperatorSettings()
    settings.posting.enabled = False  # our own Events, one per condition transition
    settings.peering.standalone = True  # leadership is a Lease (noctaya.operator.leadership)
    settings.process.ultimate_exiting_timeout = None
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.watching.connect_timeout = 10
    settings.networking.request_timeout = 60
    settings.scanning.disabled = False
    for group, version, plural in OWNED_RESOURCES:  # server-side filtering: only labelled objects
        settings.watching.label_selectors[
            references.Selector(group=group, version=version, plural=plural)
        ] = LABEL
    if fast:
        settings.queueing.idle_timeout = 1.0
        settings.queueing.exit_timeout = 0.5
        settings.watching.reconnect_backoff = 0.05
        settings.watching.server_timeout = 10
        settings.watching.client_timeout = 15
        settings.queueing.error_delays = [0.05, 0.1, 0.2]
        settings.networking.error_backoffs = [0.05, 0.1, 0.2, 0.5]
    return settings
