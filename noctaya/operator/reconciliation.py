"""One reconcile pass of one LLMService: parse, select, synthesize, apply, observe, report.

The pass is level-based — it reads the current state from the :class:`~noctaya.operator.inventory.
Inventory` and makes the cluster match, so it is correct however often and in whatever order it runs:

A pass first converges (:meth:`Reconciler._converge`, which stops at the first step that cannot go
on and says why in a :class:`~noctaya.operator.status.Outcome`), then reports once:

1. parse the body with the API models; a spec that bypassed CRD validation becomes
   ``Reconciled=False/InvalidSpec`` (no retry loop: the next spec change triggers a new pass);
2. select the InferenceRuntime (pinned name or vendor selector); a missing or ambiguous one becomes
   ``Reconciled=False`` with the reason, nothing is changed;
3. when the KEDA ScaledObject CRD is absent, ``AutoscalingReady=False/AutoscalingUnavailable`` and no
   object is created; the pass is retried every ``keda_recheck`` seconds and when the CRD appears;
4. read (or generate once) the aggregate scaler's token, synthesize ``LLMServiceChart`` in-process;
5. apply (see :mod:`noctaya.operator.applying`); refusals of create-once objects become conditions
   naming the object to delete, objects the API server rejects as invalid ``Reconciled=False/InvalidSpec``
   naming the object and the server's message, names taken by objects this LLMService does not
   control ``Reconciled=False/ObjectNotControlled`` (nothing applied);
6. report: derive health from the watched Deployment, Pods and Job, write ``status`` only when it changed (and
   only while this replica may write, as for every apply), post one Event per condition transition,
   and record activation timings.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import pydantic

from noctaya.api import gatewaymemory, inferenceruntime, llmservice, servicestatus
from noctaya.constructs import naming
from noctaya.constructs import settings as render_settings
from noctaya.contract import gateway as gateway_contract
from noctaya.operator import (
    apiclient,
    applying,
    events,
    health,
    metrics,
    rendering,
    schedules,
    status,
)
from noctaya.operator import (
    inventory as inventory_,
)
from noctaya.runtime import selection

logger = logging.getLogger(__name__)
Reason = servicestatus.Reason

KEDA_GROUP_VERSION: Final = "keda.sh/v1alpha1"
KEDA_CRD: Final = "scaledobjects.keda.sh"
TOKEN_KEY: Final = "token"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ReconcileConfig:
    gateway_image: str
    default_gateway_replicas: int
    keda_recheck: float = 30.0
    #: the gateways' memory bounds where an LLMService sets none (``--gateway-*``)
    gateway_bounds: gatewaymemory.Bounds = gatewaymemory.DEFAULTS

    @property
    def gateway_settings(self) -> gateway_contract.GatewaySettings:
        defaults = gateway_contract.GatewaySettings()
        per_peer = min(defaults.max_connections_per_peer, self.gateway_bounds.max_connections)
        return defaults.model_copy(
            update={**dataclasses.asdict(self.gateway_bounds), "max_connections_per_peer": per_peer}
        )


class Discovery:
    """Whether the KEDA ScaledObject API is served; cached, re-read when stale or invalidated."""

    def __init__(
        self,
        *,
        client: apiclient.Client,
        ttl_present: float = 300.0,
        ttl_absent: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._client = client
        self._ttl_present, self._ttl_absent = ttl_present, ttl_absent
        self._clock = clock
        self._known: tuple[bool, float] | None = None

    def invalidate(self) -> None:
        self._known = None

    async def has_scaled_objects(self) -> bool:
        now = self._clock()
        if self._known is not None:
            present, at = self._known
            if now - at < (self._ttl_present if present else self._ttl_absent):
                return present
        served = await self._client.resources_of(KEDA_GROUP_VERSION)
        present = served is not None and "scaledobjects" in served
        self._known = (present, now)
        return present


def problems_of(error: pydantic.ValidationError, *, limit: int = 5) -> str:
    parts = []
    for item in error.errors()[:limit]:
        where = ".".join(str(p) for p in item.get("loc", ()))
        parts.append(f"{where or '<root>'}: {item.get('msg')}")
    more = error.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def scaled_object_problem(scaled_object: Mapping[str, Any] | None) -> health.Finding | None:
    """KEDA's own verdict on the ScaledObject, when it reports one and it is not Ready."""
    for cond in ((scaled_object or {}).get("status") or {}).get("conditions") or []:
        if isinstance(cond, Mapping) and cond.get("type") == "Ready" and cond.get("status") == "False":
            detail = cond.get("message") or cond.get("reason") or "not ready"
            return health.Finding(
                reason=Reason.SCALED_OBJECT_NOT_READY,
                message=f"KEDA reports the ScaledObject is not ready: {detail}",
            )
    return None


def blocked(outcome: status.Outcome, reason: Reason, message: str) -> status.Outcome:
    """``outcome`` of a pass that changed nothing, for ``reason``."""
    return dataclasses.replace(outcome, blocked=health.Finding(reason=reason, message=message))


def applied_outcome(
    outcome: status.Outcome, report: applying.Report, scaled_object: Mapping[str, Any] | None
) -> status.Outcome:
    """``outcome`` after an apply: what was refused, rejected or taken, and KEDA's own verdict."""

    def finding(reason: Reason, messages: list[str]) -> health.Finding | None:
        return health.Finding(reason=reason, message="; ".join(messages)) if messages else None

    refusals = report.refused
    problem = finding(Reason.OBJECT_NOT_CONTROLLED, [c.message for c in report.conflicts]) or finding(
        Reason.INVALID_SPEC, [r.message for r in report.rejected]
    )
    return dataclasses.replace(
        outcome,
        cache_problem=finding(Reason.CACHE_SPEC_CHANGED, [r.message for r in refusals if r.cache]),
        other_problem=finding(Reason.OBJECT_SPEC_CHANGED, [r.message for r in refusals if not r.cache]),
        blocked=problem,
        autoscaling=scaled_object_problem(scaled_object),
    )


def endpoint_url(ident: naming.ServiceIdentity) -> str:
    """The in-cluster base URL of the public gateway Service."""
    return f"http://{ident.service_host(ident.endpoint)}/v1"


class Reconciler:
    """Runs passes for any LLMService; one instance per operator, shared by the queue's workers."""

    def __init__(
        self,
        *,
        client: apiclient.Client,
        inventory: inventory_.Inventory,
        applier: applying.Applier,
        renderer: rendering.Renderer,
        recorder: events.EventRecorder,
        discovery: Discovery,
        metrics: metrics.Metrics,
        config: ReconcileConfig,
    ) -> None:
        self._client = client
        self._inv = inventory
        self._applier = applier
        self._renderer = renderer
        self._events = recorder
        self._discovery = discovery
        self._metrics = metrics
        self._config = config
        self.passes: list[tuple[inventory_.ServiceKey, float, float]] = []  # (key, start, end): last 1000
        self._passes_cap = 1000
        # parsed models by resourceVersion (bounded by the objects that exist)
        self._services: dict[inventory_.ServiceKey, tuple[object, llmservice.LLMService]] = {}
        self._runtime_cache: dict[str, tuple[object, inferenceruntime.InferenceRuntime | None]] = {}

    async def __call__(self, key: inventory_.ServiceKey) -> float | None:
        started = time.monotonic()
        result = "error"
        try:
            again = await self._pass(key)
            result = "ok"
            return again
        finally:
            ended = time.monotonic()
            self._metrics.reconciles.labels(result=result).inc()
            self._metrics.reconcile_seconds.observe(ended - started)
            self.passes.append((key, started, ended))
            if len(self.passes) > self._passes_cap:
                del self.passes[: len(self.passes) - self._passes_cap]

    async def _pass(self, key: inventory_.ServiceKey) -> float | None:
        body = self._inv.services.get(key)
        if body is None:
            self._renderer.forget(key)
            self._applier.forget(namespace=key[0], service=key[1])
            self._services.pop(key, None)
            return None  # gone: owner references make the garbage collector clean up
        if (body.get("metadata") or {}).get("deletionTimestamp"):
            return None  # going (another controller's finalizer holds it): nothing to change
        generation = int((body.get("metadata") or {}).get("generation") or 0)
        outcome, again = await self._converge(key, body)
        await self._report(key, body, generation=generation, outcome=outcome)
        return again

    async def _converge(
        self, key: inventory_.ServiceKey, body: Mapping[str, Any]
    ) -> tuple[status.Outcome, float | None]:
        """Make the cluster match the spec as far as it can; what was achieved, and when to retry."""
        ident = naming.ServiceIdentity(name=key[1], namespace=key[0])
        outcome = status.Outcome(endpoint_url=endpoint_url(ident))
        try:
            service = self._parse_service(key, body)
        except pydantic.ValidationError as e:
            return blocked(outcome, Reason.INVALID_SPEC, f"the spec is invalid: {problems_of(e)}"), None
        try:
            runtime = selection.select_runtime(service=service, runtimes=self._runtimes())
        except selection.SelectionError as e:
            return blocked(outcome, e.reason, str(e)), None
        outcome = dataclasses.replace(outcome, resolved_runtime=runtime.metadata.name)

        if not await self._discovery.has_scaled_objects():
            missing = health.Finding(
                reason=Reason.AUTOSCALING_UNAVAILABLE,
                message=f"the KEDA ScaledObject CRD ({KEDA_CRD}) is not installed; no backend is created "
                "until KEDA is installed",
            )
            return dataclasses.replace(outcome, autoscaling=missing), self._config.keda_recheck

        settings = render_settings.RenderSettings(
            gateway_image=self._config.gateway_image,
            default_gateway_replicas=self._config.default_gateway_replicas,
            owner_references=[rendering.owner_reference(body)],
            scaler_token=await self._scaler_token(key, ident, service),
            gateway_settings=self._config.gateway_settings,
        )
        try:
            desired = await self._renderer.render(service=service, runtime=runtime, settings=settings)
        except (ValueError, TypeError) as e:  # the constructs reject a combination the CRD could not
            return blocked(outcome, Reason.INVALID_SPEC, f"cannot render the service: {e}"), None

        report = await self._applier.sync(
            namespace=key[0],
            service=key[1],
            owner_uid=str((body.get("metadata") or {}).get("uid")),
            desired=desired,
            live=self._inv.owned(key),
        )
        for obj in report.live.values():
            self._inv.put_owned(obj)
        self._count(report)
        warm, recheck = schedules.next_warm_window(
            service.spec.scaling.schedules, now=datetime.datetime.now(datetime.UTC)
        )
        outcome = dataclasses.replace(outcome, warm_window=warm)
        scaled_object = self._inv.find(key, KEDA_GROUP_VERSION, "ScaledObject", ident.scaled_object)
        # the window opens or closes at ``recheck``: the status moves on time
        return applied_outcome(outcome, report, scaled_object), recheck

    def _parse_service(self, key: inventory_.ServiceKey, body: Mapping[str, Any]) -> llmservice.LLMService:
        """The parsed LLMService, parsed once per resourceVersion."""
        version = (body.get("metadata") or {}).get("resourceVersion")
        cached = self._services.get(key)
        if cached is not None and version is not None and cached[0] == version:
            return cached[1]
        service = llmservice.LLMService.model_validate({k: v for k, v in body.items() if k != "status"})
        self._services[key] = (version, service)
        return service

    def _runtimes(self) -> list[inferenceruntime.InferenceRuntime]:
        """Every valid InferenceRuntime, each parsed once per resourceVersion; invalid ones are logged."""
        parsed = []
        for name in [n for n in self._runtime_cache if n not in self._inv.runtimes]:
            del self._runtime_cache[name]
        for name, body in self._inv.runtimes.items():
            version = (body.get("metadata") or {}).get("resourceVersion")
            cached = self._runtime_cache.get(name)
            if cached is None or version is None or cached[0] != version:
                try:
                    runtime: inferenceruntime.InferenceRuntime | None = (
                        inferenceruntime.InferenceRuntime.model_validate(
                            {k: v for k, v in body.items() if k != "status"}
                        )
                    )
                except pydantic.ValidationError as e:
                    logger.warning("ignoring invalid InferenceRuntime %s: %s", name, problems_of(e))
                    runtime = None
                cached = (version, runtime)
                self._runtime_cache[name] = cached
            if cached[1] is not None:
                parsed.append(cached[1])
        return parsed

    async def _scaler_token(
        self, key: inventory_.ServiceKey, ident: naming.ServiceIdentity, service: llmservice.LLMService
    ) -> str | None:
        replicas = service.spec.endpoint.replicas or self._config.default_gateway_replicas
        if replicas <= 1:
            return None
        secret = self._inv.find(key, "v1", "Secret", ident.scaler_token)
        if secret is None:
            secret = await self._client.get(apiclient.SECRET, namespace=key[0], name=ident.scaler_token)
        if secret is not None:
            raw = (secret.get("data") or {}).get(TOKEN_KEY)
            if isinstance(raw, str):
                try:
                    token = base64.b64decode(raw, validate=True).decode()
                except (binascii.Error, UnicodeDecodeError):
                    token = ""
                if token:
                    return token
            plain = (secret.get("stringData") or {}).get(TOKEN_KEY)
            if isinstance(plain, str) and plain:
                return plain
        return secrets.token_urlsafe(32)

    def _count(self, report: applying.Report) -> None:
        for action, n in (
            ("created", len(report.created)),
            ("applied", len(report.applied)),
            ("skipped", len(report.skipped)),
            ("pruned", len(report.pruned)),
            ("refused", len(report.refused)),
            ("rejected", len(report.rejected)),
        ):
            if n:
                self._metrics.objects.labels(action=action).inc(n)

    async def _report(
        self,
        key: inventory_.ServiceKey,
        body: Mapping[str, Any],
        *,
        generation: int,
        outcome: status.Outcome,
    ) -> None:
        ident = naming.ServiceIdentity(name=key[1], namespace=key[0])
        observed = health.assess(
            deployment=self._inv.find(key, "apps/v1", "Deployment", ident.backend),
            pods=self._inv.of_kind(key, "v1", "Pod"),
            prewarm_job=self._inv.find(key, "batch/v1", "Job", ident.prewarm),
        )
        previous: Mapping[str, Any] = body.get("status") or {}
        activation = None
        last = previous.get("lastActivation") or {}
        if (
            observed.activation is not None
            and not int(previous.get("replicas") or 0)
            and last.get("startedAt") != observed.activation.created_at
        ):
            activation = observed.activation
        new = status.compose(
            previous=previous,
            generation=generation,
            health=observed,
            outcome=outcome,
            activation=activation,
            warm_window=outcome.warm_window,
        )
        if status.same_status(previous, new):
            return
        self._applier.fence()
        updated = await self._client.patch(
            apiclient.LLMSERVICE, namespace=key[0], name=key[1], patch={"status": new}, subresource="status"
        )
        if activation is not None:
            self._metrics.observe_activation(
                scheduled=activation.scheduled, started=activation.started, ready=activation.ready
            )
        if updated:
            current = self._inv.services.get(key)
            if current is not None and (current.get("metadata") or {}).get("uid") == (
                updated.get("metadata") or {}
            ).get("uid"):
                self._inv.put_service(updated)
        for change in status.transitions(previous, new):
            await self._events.post(involved=updated or body, transition=change)
