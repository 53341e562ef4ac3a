"""One operator replica: stand by for the Lease, lead (kopf watches + reconcile workers), step down.

A term of leadership is::

    acquire the Lease ──▶ fresh inventory + work queue ──▶ kopf.spawn_tasks(registry, memo)
        ▲                                                        │
        └── standby again ◀── stop everything at once ◀── Lease lost | kopf failed | stop requested

Every term starts from an empty inventory (kopf lists everything again), so nothing a previous term
believed survives into the next. When the term ends, the work queue is cancelled first — no reconcile
continues — and every write is fenced anyway by :meth:`Operator.may_write` (the elector's own view of
its Lease), so a leader that cannot renew stops writing before the Lease can expire for a standby.
kopf is started with :func:`kopf.spawn_tasks` rather than :func:`kopf.operator` so that stopping it
cancels only kopf's own tasks, never other tasks of the process. A term that ends by itself (Lease
lost, kopf failing during an API outage) is followed by a new one after ``retry_period``; with leader
election off, terms simply run back to back until stopped. Repeated terms that reconcile nothing turn
``/healthz`` red (:data:`MAX_FAILED_TERMS`).

kopf's resource scan sends two discovery requests side by side and stops at the first that fails;
during an API outage the other one fails too and nobody reads its error, so asyncio would log
"Task exception was never retrieved" with a traceback whenever the garbage collector meets it. The
replica puts :class:`UnreadKopfErrors` in front of the loop's exception handler: such a leftover API
error of a kopf task becomes one debug line (the term that failed has already said why); anything
else reaches the handler that was there before.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Callable
from typing import Any, Final

import aiohttp
import kopf
from aiohttp import web
from kopf._cogs.clients import errors as kopf_errors  # APIError: kopf exports no name for it
from kubernetes_asyncio import client as k8s_client

from noctaya.contract import fields
from noctaya.operator import (
    apiclient,
    applying,
    discovery,
    events,
    handlers,
    inventory,
    leadership,
    metrics,
    probing,
    queueing,
    reconciliation,
    rendering,
    settings,
)

logger = logging.getLogger(__name__)

#: consecutive leadership terms in which kopf failed before reconciling anything, after which the
#: replica reports itself unhealthy (e.g. its credentials stopped working)
MAX_FAILED_TERMS: Final = 5


class Operator:
    """Everything one replica runs: the elector, the renderer, the applier, and per term the inventory,
    the work queue, the reconciler and kopf. ``run(stop=...)`` returns after a graceful stop."""

    def __init__(
        self,
        *,
        config: settings.OperatorSettings,
        api: k8s_client.ApiClient,
        render: rendering.RenderFn,
        login: kopf.ConnectionInfo | None = None,
        fast: bool = False,
        install_signals: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.client = apiclient.Client(
            api=api, request_timeout=config.request_timeout, field_manager=config.field_manager
        )
        self.metrics = metrics.Metrics()
        self.metrics.workers.set(config.workers)
        self.elector: leadership.LeaseElector | None = None
        if config.leader_election:
            self.elector = leadership.LeaseElector(
                client=self.client,
                config=leadership.LeaseConfig(
                    name=config.lease_name,
                    namespace=config.lease_namespace,
                    identity=config.identity,
                    lease_duration=config.lease_duration,
                    renew_deadline=config.renew_deadline,
                    retry_period=config.retry_period,
                ),
            )
        self.renderer = rendering.Renderer(render=render, timeout=config.render_timeout)
        self.discovery = discovery.Discovery(client=self.client, ttl_absent=min(5.0, config.keda_recheck))
        self.recorder = events.EventRecorder(
            client=self.client, instance=config.identity, metrics=self.metrics
        )
        self.applier = applying.Applier(
            client=self.client, field_manager=config.field_manager, may_write=self.may_write
        )
        self._login = login
        self._fast = fast
        self._install_signals = install_signals  # kopf installs its own handlers; ours must win
        self.leading = False
        self.failed = False  # /healthz turns 503: the kubelet restarts the replica
        self.failed_terms = 0
        self.inventory: inventory.Inventory | None = None
        self.queue: queueing.WorkQueue[inventory.ServiceKey] | None = None
        self.reconciler: reconciliation.Reconciler | None = None
        self.terms = 0
        self._observers: list[Callable[[reconciliation.PassRecord], None]] = []

    def on_pass(self, observer: Callable[[reconciliation.PassRecord], None]) -> None:
        """Call ``observer`` with every finished reconcile pass, from this term on."""
        self._observers.append(observer)

    def may_write(self) -> bool:
        return self.leading and (self.elector is None or self.elector.is_leader)

    def state(self) -> dict[str, Any]:
        return {
            "healthy": not self.failed or bool(self.leading and self.queue and self.queue.processed),
            "leader": self.leading,
            "identity": self.config.identity,
            "queueDepth": self.queue.depth if self.queue else 0,
        }

    async def run(self, *, stop: asyncio.Event) -> None:
        """Serve health, then alternate standby and leadership terms until ``stop`` is set."""
        UnreadKopfErrors.install(asyncio.get_running_loop())
        gc.collect()
        gc.freeze()  # the large, long-lived import graph (cdk8s bindings) leaves the collector's scans
        runner = await self._serve_health()
        try:
            while not stop.is_set():
                if (
                    self.elector is not None
                    and not self.elector.is_leader
                    and not await self._wait_for_lease(stop)
                ):
                    break
                await self._term(stop)
                if not stop.is_set():  # the term ended by itself (Lease lost, API outage): pause, retry
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), self.config.retry_period)
        finally:
            if self.elector is not None:
                await self.elector.release()
            self.renderer.close()
            if runner is not None:
                await runner.cleanup()

    async def _wait_for_lease(self, stop: asyncio.Event) -> bool:
        assert self.elector is not None
        acquire = asyncio.create_task(self.elector.acquire(), name="lease acquisition")
        stopped = asyncio.create_task(stop.wait(), name="stop waiter")
        try:
            await asyncio.wait({acquire, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (acquire, stopped):
                task.cancel()
            await asyncio.gather(acquire, stopped, return_exceptions=True)
        if stop.is_set() or acquire.cancelled():
            return False
        acquire.result()  # the elector retries every API failure itself: anything else is a crash, not a stop
        return True

    async def _term(self, stop: asyncio.Event) -> None:
        self.terms += 1
        if self.elector is not None:
            self.metrics.leader_transitions.inc()
        inv = inventory.Inventory()
        reconciler = reconciliation.Reconciler(
            client=self.client,
            inventory=inv,
            applier=self.applier,
            renderer=self.renderer,
            recorder=self.recorder,
            discovery=self.discovery,
            metrics=self.metrics,
            config=reconciliation.ReconcileConfig(
                gateway_image=self.config.gateway_image,
                default_gateway_replicas=self.config.default_gateway_replicas,
                keda_recheck=self.config.keda_recheck,
                gateway_bounds=settings.gateway_bounds(self.config),
            ),
            observers=self._observers,
        )
        queue: queueing.WorkQueue[inventory.ServiceKey] = queueing.WorkQueue(
            process=reconciler,
            workers=self.config.workers,
            base_backoff=self.config.requeue_base_backoff,
            max_backoff=self.config.requeue_max_backoff,
            expected=(apiclient.ApiError, applying.NotLeaderError),
        )
        self.inventory, self.reconciler, self.queue = inv, reconciler, queue
        self.metrics.queue_depth.set_function(lambda: queue.depth)
        self.metrics.backing_off.set_function(lambda: queue.backing_off)
        ctx = handlers.Context(inventory=inv, queue=queue, discovery=self.discovery, login=self._login)
        self.leading = True
        self.metrics.leader.set(1)
        kopf_stop = asyncio.Event()
        watchers = [
            asyncio.create_task(queue.run(), name="reconcile queue"),
            asyncio.create_task(stop.wait(), name="stop waiter"),
            asyncio.create_task(self._resync(inv, queue), name="periodic resync"),
        ]
        if self.elector is not None:
            watchers.append(asyncio.create_task(self.elector.hold(), name="lease renewal"))
        kopf_tasks: list[asyncio.Task[Any]] = []
        before = asyncio.all_tasks()
        try:
            kopf_tasks = list(
                await kopf.spawn_tasks(
                    registry=handlers.make_registry(),
                    settings=handlers.kopf_settings(fast=self._fast),
                    memo=kopf.Memo(ctx=ctx),
                    stop_flag=kopf_stop,
                    standalone=True,
                    clusterwide=not self.config.namespaces,
                    namespaces=list(self.config.namespaces),
                )
            )
            if self._install_signals is not None:
                self._install_signals()
            done, _ = await asyncio.wait([*watchers, *kopf_tasks], return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                error = None if task.cancelled() else task.exception()
                if isinstance(error, leadership.LeadershipLostError):
                    logger.warning("leadership lost: reconciliation stopped")
                elif task in kopf_tasks and not stop.is_set():
                    logger.error("kopf stopped unexpectedly: %r", error)
                    if queue.processed == 0:
                        self.failed_terms += 1  # nothing reconciled in this term
                        self.failed = self.failed_terms >= MAX_FAILED_TERMS
                elif error is not None:  # one of our own tasks failed: the term ends, say why
                    logger.error("%s failed; the term ends", task.get_name(), exc_info=error)
            if queue.processed:
                self.failed_terms, self.failed = 0, False
        finally:
            self.leading = False
            self.metrics.leader.set(0)
            watchers[0].cancel()  # the reconcile queue first: nothing reconciles from here on
            kopf_stop.set()
            for task in [*watchers, *kopf_tasks]:
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.gather(*watchers, *kopf_tasks, return_exceptions=True), 10)
            await _sweep(before)

    async def _resync(
        self, inv: inventory.Inventory, queue: queueing.WorkQueue[inventory.ServiceKey]
    ) -> None:
        """Mark every service now and then: a level-based pass repairs drift no watch reported."""
        while True:
            await asyncio.sleep(self.config.resync_period)
            for key in list(inv.services):
                queue.add(key)

    async def _serve_health(self) -> web.AppRunner | None:
        if not self.config.health_listen:
            return None
        listen = fields.ListenAddress.parse(self.config.health_listen)
        runner = web.AppRunner(
            probing.make_app(state=self.state, registry=self.metrics), handle_signals=False, access_log=None
        )
        await runner.setup()
        await web.TCPSite(runner, listen.bind_host, listen.port).start()
        return runner


class UnreadKopfErrors:
    """The loop's exception handler while a replica runs: a kopf task's API error that kopf never read
    is logged as one line at debug, without its traceback; every other report goes on unchanged.

    It stays on the loop after the run, because a task can be collected after the loop stopped.
    """

    #: the errors a discovery request ends with when the API server is away or answers an error
    EXPECTED: Final = (kopf_errors.APIError, aiohttp.ClientError, OSError, TimeoutError)

    def __init__(
        self, *, previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None
    ) -> None:
        self.previous = previous

    @classmethod
    def install(cls, loop: asyncio.AbstractEventLoop) -> None:
        """Put the filter in front of the loop's handler, once per loop."""
        if not isinstance(loop.get_exception_handler(), cls):
            loop.set_exception_handler(cls(previous=loop.get_exception_handler()))

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        task, error = context.get("future"), context.get("exception")
        if isinstance(task, asyncio.Task) and isinstance(error, self.EXPECTED) and "/kopf/" in _origin(task):
            name = getattr(task.get_coro(), "__qualname__", task.get_name())
            logger.debug("kopf left an error unread in %s: %r", name, error)
        elif self.previous is not None:
            self.previous(loop, context)
        else:
            loop.default_exception_handler(context)


async def _sweep(before: set[asyncio.Task[Any]]) -> None:
    """Cancel what kopf spawned during the term and left behind (e.g. discovery requests in flight).

    kopf's own runner sweeps every task created after it started; we sweep only kopf's, so that other
    tasks of the process are never touched.
    """
    current = asyncio.current_task()
    stragglers = [
        t
        for t in asyncio.all_tasks() - before
        if t is not current and not t.done() and "/kopf/" in _origin(t)
    ]
    for task in stragglers:
        task.cancel()
    if stragglers:
        await asyncio.wait(stragglers, timeout=5)


def _origin(task: asyncio.Task[Any]) -> str:
    code = getattr(task.get_coro(), "cr_code", None)
    return "" if code is None else str(code.co_filename)
