"""One reconcile pass of one LLMService: parse, select, synthesize, apply, observe, report.

The pass is level-based — it reads the current state from the :class:`~noctaya.operator.inventory.
Inventory` and makes the cluster match, so it is correct however often and in whatever order it runs:

A pass first converges (:meth:`Reconciler._converge`, which stops at the first step that cannot go
on and says why in a :class:`~noctaya.operator.status.Outcome`), then reports once:

1. parse the body with the API models; a spec that bypassed CRD validation becomes
   ``Reconciled=False/InvalidSpec``, a reserved feature ``NotImplemented`` (no retry loop: the next
   spec change triggers a new pass);
2. select the InferenceRuntime (pinned name or vendor selector); a missing or ambiguous one becomes
   ``Reconciled=False`` with the reason, nothing is changed. A runtime the watch has not shown yet is
   not taken for a missing one: before ``RuntimeNotFound`` is reported the runtimes are listed from
   the API server once. A service whose spec has not changed since it was last reconciled stays on
   the runtime it runs (``status.resolvedRuntime``) when another one now ranks first
   (``Reconciled=True/RuntimeKept`` names both), unless it is annotated
   ``serving.noctaya.io/runtime-selection: follow``;
3. when the KEDA ScaledObject CRD is absent, ``AutoscalingReady=False/AutoscalingUnavailable`` and no
   object is created; the pass is retried every ``keda_recheck`` seconds and when the CRD appears;
4. read (or generate once, :mod:`~noctaya.operator.tokens`) the aggregate scaler's token, synthesize
   ``LLMServiceChart`` in-process;
5. apply (see :mod:`noctaya.operator.applying`); refusals of create-once objects become conditions
   naming the object to delete, objects the API server rejects as invalid ``Reconciled=False/InvalidSpec``
   naming the object and the server's message, names taken by objects this LLMService does not
   control ``Reconciled=False/ObjectNotControlled`` (nothing applied), any other refusal of the server
   ``Reconciled=False/ApplyRefused`` quoting it — that pass then fails (:class:`~noctaya.operator.
   queueing.Failed`) and is retried with the queue's backoff;
6. report: derive health from the watched Deployment, Pods, claims and Job, write ``status`` only when
   it changed (and only while this replica may write, as for every apply), post one Event per
   condition transition, record activation timings, and log one INFO line when the outcome differs
   from the previous pass's (what was applied, which runtime, what was refused and why).

Every finished pass is handed to the ``observers`` as a :class:`PassRecord` (and counted in the
``noctaya_reconciles`` metric).
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import pydantic

from noctaya.api import gatewaymemory, inferenceruntime, llmservice, servicestatus
from noctaya.constructs import naming
from noctaya.constructs import settings as render_settings
from noctaya.contract import gateway as gateway_contract
from noctaya.operator import (
    apiclient,
    applying,
    discovery,
    events,
    health,
    metrics,
    queueing,
    rendering,
    schedules,
    status,
    tokens,
    triggers,
)
from noctaya.operator import (
    inventory as inventory_,
)
from noctaya.runtime import selection

logger = logging.getLogger(__name__)
Reason = servicestatus.Reason

KEDA_GROUP_VERSION: Final = discovery.KEDA_GROUP_VERSION
KEDA_CRD: Final = discovery.KEDA_CRD
#: ``follow``: the service moves to whichever runtime ranks first at once, spec change or not
RUNTIME_SELECTION_ANNOTATION: Final = "serving.noctaya.io/runtime-selection"
FOLLOW: Final = "follow"


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class PassRecord:
    """One finished pass, for observers (tests, benchmarks): when it ran and how it ended."""

    key: inventory_.ServiceKey
    started: float  # time.monotonic()
    ended: float
    result: str  # ok | refused | error (the ``result`` label of noctaya_reconciles)
    summary: str  # the pass's outcome line ("" when the pass did not get as far as a report)


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
    outcome: status.Outcome,
    report: applying.Report,
    scaled_object: Mapping[str, Any] | None,
    *,
    scaled_object_key: applying.ObjectKey,
) -> status.Outcome:
    """``outcome`` after an apply: what was refused, rejected, denied or taken, and KEDA's verdict."""

    def finding(reason: Reason, messages: list[str]) -> health.Finding | None:
        # sorted: the applies of a wave end in any order, and the same refusals must read the same
        return health.Finding(reason=reason, message="; ".join(sorted(messages))) if messages else None

    refusals = report.refused
    problem = (
        finding(Reason.OBJECT_NOT_CONTROLLED, [c.message for c in report.conflicts])
        or finding(Reason.INVALID_SPEC, [r.message for r in report.rejected])
        or finding(Reason.APPLY_REFUSED, [d.message for d in report.denied])
    )
    if scaled_object_key in report.in_place:
        placed = status.ScaledObject.APPLIED
    else:
        placed = status.ScaledObject.ABSENT if scaled_object is None else status.ScaledObject.EARLIER
    return dataclasses.replace(
        outcome,
        cache_problem=finding(Reason.CACHE_SPEC_CHANGED, [r.message for r in refusals if r.cache]),
        other_problem=finding(Reason.OBJECT_SPEC_CHANGED, [r.message for r in refusals if not r.cache]),
        blocked=problem,
        scaled_object=placed,
        autoscaling=scaled_object_problem(scaled_object),
    )


def endpoint_url(ident: naming.ServiceIdentity) -> str:
    """The in-cluster base URL of the public gateway Service."""
    return f"http://{ident.service_host(ident.endpoint)}/v1"


def summary_of(outcome: status.Outcome, report: applying.Report | None, new: Mapping[str, Any]) -> str:
    """The pass in one line: phase, runtime, what was written, what blocks it and why."""
    parts = [f"phase {new.get('phase')}"]
    if outcome.resolved_runtime:
        parts.append(f"runtime {outcome.resolved_runtime}")
    if report is not None:
        written = [
            f"{verb} {', '.join(f'{k[1]}/{k[2]}' for k in sorted(keys))}"
            for verb, keys in (
                ("created", report.created),
                ("applied", report.applied),
                ("pruned", report.pruned),
            )
            if keys
        ]
        parts.append("; ".join(written) if written else "nothing to apply")
    for finding in (outcome.blocked, outcome.autoscaling, outcome.other_problem, outcome.cache_problem):
        if finding is not None:
            parts.append(f"{finding.reason}: {finding.message}")
    if outcome.kept_runtime is not None:
        parts.append(f"{outcome.kept_runtime.reason}: {outcome.kept_runtime.message}")
    return applying.printable("; ".join(parts), limit=2000)


def _sooner(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Pass:
    """What one pass converged to: the outcome, when to run again, and the apply's report."""

    outcome: status.Outcome
    again: float | None = None
    report: applying.Report | None = None


class Reconciler:
    """Runs passes for any LLMService; one instance per operator term, shared by the queue's workers."""

    def __init__(
        self,
        *,
        client: apiclient.Client,
        inventory: inventory_.Inventory,
        applier: applying.Applier,
        renderer: rendering.Renderer,
        recorder: events.EventRecorder,
        discovery: discovery.Discovery,
        metrics: metrics.Metrics,
        config: ReconcileConfig,
        observers: Sequence[Callable[[PassRecord], None]] = (),
        trigger_check: triggers.TriggerCheck | None = None,
    ) -> None:
        self._client = client
        self._inv = inventory
        self._applier = applier
        self._renderer = renderer
        self._events = recorder
        self._discovery = discovery
        self._metrics = metrics
        self._config = config
        self._observers = observers  # read at each pass: observers added later are called too
        self._triggers = trigger_check or triggers.TriggerCheck(client=client)
        # parsed models by resourceVersion (bounded by the objects that exist)
        self._services: dict[inventory_.ServiceKey, tuple[object, llmservice.LLMService]] = {}
        self._runtime_cache: dict[str, tuple[object, inferenceruntime.InferenceRuntime | None]] = {}
        self._said: dict[inventory_.ServiceKey, str] = {}  # the last outcome line logged at INFO
        self._token_read: set[inventory_.ServiceKey] = set()  # scaler token Secret read by name this term

    async def __call__(self, key: inventory_.ServiceKey) -> float | None:
        started = time.monotonic()
        result, summary = "error", ""
        try:
            converged, summary = await self._pass(key)
            report = None if converged is None else converged.report
            if converged is not None and report is not None and report.denied:
                result = "refused"
                raise queueing.Failed(str((converged.outcome.blocked or report.denied[0]).message))
            result = "ok"
            return None if converged is None else converged.again
        finally:
            ended = time.monotonic()
            self._metrics.reconciles.labels(result=result).inc()
            self._metrics.reconcile_seconds.observe(ended - started)
            record = PassRecord(key=key, started=started, ended=ended, result=result, summary=summary)
            for observer in self._observers:
                observer(record)

    async def _pass(self, key: inventory_.ServiceKey) -> tuple[_Pass | None, str]:
        body = self._inv.services.get(key)
        if body is None:
            self._renderer.forget(key)
            self._applier.forget(namespace=key[0], service=key[1])
            self._services.pop(key, None)
            self._said.pop(key, None)
            self._token_read.discard(key)
            self._triggers.forget(key)
            return None, ""  # gone: owner references make the garbage collector clean up
        if (body.get("metadata") or {}).get("deletionTimestamp"):
            return None, ""  # going (another controller's finalizer holds it): nothing to change
        generation = int((body.get("metadata") or {}).get("generation") or 0)
        converged = await self._converge(key, body)
        summary = await self._report(key, body, generation=generation, converged=converged)
        return converged, summary

    def _stopped(
        self, key: inventory_.ServiceKey, outcome: status.Outcome, reason: Reason, message: str
    ) -> _Pass:
        """A pass that stopped before applying anything: what blocks it, and what exists from before."""
        ident = naming.ServiceIdentity(name=key[1], namespace=key[0])
        existing = self._inv.find(key, KEDA_GROUP_VERSION, "ScaledObject", ident.scaled_object)
        placed = status.ScaledObject.ABSENT if existing is None else status.ScaledObject.EARLIER
        return _Pass(outcome=dataclasses.replace(blocked(outcome, reason, message), scaled_object=placed))

    async def _converge(self, key: inventory_.ServiceKey, body: Mapping[str, Any]) -> _Pass:
        """Make the cluster match the spec as far as it can; what was achieved, and when to retry."""
        ident = naming.ServiceIdentity(name=key[1], namespace=key[0])
        outcome = status.Outcome(endpoint_url=endpoint_url(ident))
        try:
            service = self._parse_service(key, body)
        except pydantic.ValidationError as e:
            return self._stopped(key, outcome, Reason.INVALID_SPEC, f"the spec is invalid: {problems_of(e)}")
        if reserved := service.reserved_field_problems():
            message = "; ".join(f"{p.path}: {p.message}" for p in reserved)
            return self._stopped(key, outcome, Reason.NOT_IMPLEMENTED, message)
        try:
            runtime, kept = await self._select(service, body)
        except selection.SelectionError as e:
            return self._stopped(key, outcome, e.reason, str(e))
        outcome = dataclasses.replace(outcome, resolved_runtime=runtime.metadata.name, kept_runtime=kept)

        if not await self._discovery.has_scaled_objects():
            missing = health.Finding(
                reason=Reason.AUTOSCALING_UNAVAILABLE,
                message=f"the KEDA ScaledObject CRD ({KEDA_CRD}) is not installed; no backend is created "
                "until KEDA is installed",
            )
            outcome = dataclasses.replace(
                outcome, autoscaling=missing, scaled_object=status.ScaledObject.ABSENT
            )
            return _Pass(outcome=outcome, again=self._config.keda_recheck)

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
            return self._stopped(key, outcome, Reason.INVALID_SPEC, f"cannot render the service: {e}")

        live = dict(self._inv.owned(key))
        report = await self._applier.sync(
            namespace=key[0],
            service=key[1],
            owner_uid=str((body.get("metadata") or {}).get("uid")),
            desired=desired,
            live=live,
        )
        for obj in report.live.values():
            self._inv.put_owned(obj)
        for gone in report.gone:  # a kind no watch reports the deletion of (Secrets) is not pruned again
            if (pruned := live.get(gone)) is not None:
                self._inv.drop_owned(pruned)
        self._count(report)
        warm, recheck = schedules.next_warm_window(
            service.spec.scaling.schedules, now=datetime.datetime.now(datetime.UTC)
        )
        outcome = dataclasses.replace(outcome, warm_window=warm)
        scaled_object = self._inv.find(key, KEDA_GROUP_VERSION, "ScaledObject", ident.scaled_object)
        so_key = (KEDA_GROUP_VERSION, "ScaledObject", ident.scaled_object)
        outcome = applied_outcome(outcome, report, scaled_object, scaled_object_key=so_key)
        if outcome.scaled_object is status.ScaledObject.APPLIED:
            recheck = _sooner(recheck, await self._trigger_metrics(key, scaled_object))
        # the window opens or closes at ``recheck``: the status moves on time
        return _Pass(outcome=outcome, again=recheck, report=report)

    async def _trigger_metrics(
        self, key: inventory_.ServiceKey, scaled_object: Mapping[str, Any] | None
    ) -> float | None:
        """When to look at the HPA KEDA built again (see :mod:`~noctaya.operator.triggers`)."""
        try:
            return (await self._triggers.check(key, scaled_object)).recheck
        except apiclient.ApiError as e:
            if e.status == 0:
                raise
            logger.warning("LLMService %s/%s: cannot check KEDA's HPA: %s", key[0], key[1], e)
            return None

    async def _select(
        self, service: llmservice.LLMService, body: Mapping[str, Any]
    ) -> tuple[inferenceruntime.InferenceRuntime, health.Finding | None]:
        """The runtime to render with, and why it is not the one that ranks first (when it is not)."""
        runtimes = self._runtimes()
        try:
            best = selection.select_runtime(service=service, runtimes=runtimes)
        except selection.SelectionError as e:
            if e.reason != Reason.RUNTIME_NOT_FOUND:
                raise
            # not found in what the watch has shown: the server may hold it already (a runtime applied
            # with its service), so it is listed once before its absence is reported
            for listed in await self._client.list(apiclient.INFERENCERUNTIME):
                self._inv.put_runtime(listed)
            runtimes = self._runtimes()
            best = selection.select_runtime(service=service, runtimes=runtimes)
        return self._kept(service, body, best, runtimes)

    def _kept(
        self,
        service: llmservice.LLMService,
        body: Mapping[str, Any],
        best: inferenceruntime.InferenceRuntime,
        runtimes: Sequence[inferenceruntime.InferenceRuntime],
    ) -> tuple[inferenceruntime.InferenceRuntime, health.Finding | None]:
        """``best``, unless the service runs another runtime its selector still matches and nothing
        asks it to move: its spec is unchanged since it was reconciled and it does not opt in."""
        previous: Mapping[str, Any] = body.get("status") or {}
        running = previous.get("resolvedRuntime")
        meta = body.get("metadata") or {}
        selector = service.spec.runtime.selector
        if (
            not running
            or running == best.metadata.name
            or selector is None
            or service.spec.runtime.name is not None
            or previous.get("observedGeneration") != meta.get("generation")
            or (meta.get("annotations") or {}).get(RUNTIME_SELECTION_ANNOTATION) == FOLLOW
        ):
            return best, None
        current = next((r for r in runtimes if r.metadata.name == running), None)
        if current is None or current.spec.vendor not in selector.vendor:
            return best, None  # gone, or no longer selected: the service must move
        return current, health.Finding(
            reason=Reason.RUNTIME_KEPT,
            message=f"InferenceRuntime {best.metadata.name} now ranks first for spec.runtime.selector; the "
            f"service stays on {running} until its spec changes or it is annotated "
            f"{RUNTIME_SELECTION_ANNOTATION}={FOLLOW}",
        )

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
        """The token to render, or None with one gateway. Secrets are not watched: the Secret is read by
        name when the inventory does not hold it, and with one gateway once per term all the same, so
        that one an earlier spec rendered is in the inventory and pruned (if it is the service's)."""
        replicas = service.spec.endpoint.replicas or self._config.default_gateway_replicas
        secret = self._inv.find(key, "v1", "Secret", ident.scaler_token)
        if secret is None and (replicas > 1 or key not in self._token_read):
            self._token_read.add(key)
            secret = await self._client.get(apiclient.SECRET, namespace=key[0], name=ident.scaler_token)
            if secret is not None:
                self._inv.put_owned(secret)
        if replicas <= 1:
            return None
        return tokens.token_of(secret) or tokens.new_token()

    def _count(self, report: applying.Report) -> None:
        for action, n in (
            ("created", len(report.created)),
            ("applied", len(report.applied)),
            ("skipped", len(report.skipped)),
            ("pruned", len(report.pruned)),
            ("refused", len(report.refused)),
            ("rejected", len(report.rejected)),
            ("denied", len(report.denied)),
        ):
            if n:
                self._metrics.objects.labels(action=action).inc(n)

    def _health(self, key: inventory_.ServiceKey) -> health.Health:
        ident = naming.ServiceIdentity(name=key[1], namespace=key[0])
        return health.assess(
            deployment=self._inv.find(key, "apps/v1", "Deployment", ident.backend),
            pods=self._inv.of_kind(key, "v1", "Pod"),
            prewarm_job=self._inv.find(key, "batch/v1", "Job", ident.prewarm),
            claims=self._inv.of_kind(key, "v1", "PersistentVolumeClaim"),
        )

    async def _report(
        self, key: inventory_.ServiceKey, body: Mapping[str, Any], *, generation: int, converged: _Pass
    ) -> str:
        outcome = converged.outcome
        observed = self._health(key)
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
        summary = summary_of(outcome, converged.report, new)
        self._say(
            key,
            summary,
            wrote=bool(
                converged.report
                and (converged.report.created or converged.report.applied or converged.report.pruned)
            ),
        )
        if status.same_status(previous, new):
            return summary
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
        return summary

    def _say(self, key: inventory_.ServiceKey, summary: str, *, wrote: bool) -> None:
        """One INFO line when the outcome differs from the last one logged, or objects were written."""
        if wrote or self._said.get(key) != summary:
            logger.info("LLMService %s/%s: %s", key[0], key[1], summary)
            self._said[key] = summary
        else:
            logger.debug("LLMService %s/%s: %s", key[0], key[1], summary)
