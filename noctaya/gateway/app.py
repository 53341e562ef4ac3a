"""The gateway application factory: ``make_app(config, *, source=None, sidecars=(), extra_contexts=())``.

The parts and who owns what:

- :class:`~noctaya.gateway.demand.Demand` (``keys.DEMAND``): the number the autoscaler follows;
- :class:`~noctaya.gateway.admission.Admission`: queue slots and in-flight capacity, and the
  per-request wait bound (``activation_timeout`` from arrival);
- :class:`~noctaya.gateway.heartbeat.Heartbeat`: the one ticker that sends held streams their
  ``: keepalive`` comments (a task of the loops context);
- :class:`~noctaya.gateway.activation.Activation`: the activation lease;
- :class:`~noctaya.gateway.readiness.Readiness`: the probe loop (a task of the loops context);
- :class:`~noctaya.gateway.coldanswers.ColdAnswers` (``keys.COLD_ANSWERS``): the cold routes' answers,
  and the backend's model list read each time it turns Ready (a task of the loops context);
- :class:`~noctaya.gateway.express.Lane` (``EXPRESS``): the warm path's common case, answered below
  aiohttp's request handling (``make_runner`` offers it every request first);
- :class:`~noctaya.gateway.proxy.Upstream`: the backend connection pool (``backend``, at most
  ``maxInFlight`` + 8 connections) and the pooled client session for what the pool does not take
  (a cleanup context; on exit the pool takes no connection back);
- :class:`~noctaya.gateway.liveconfig.LiveConfig`: the live fields (``warmUntil``), applied at start
  and, when the config came from a file (``source``), from the file as it changes (a poll, a task of
  the loops context);
- :class:`~noctaya.gateway.draining.Drain`, :class:`~noctaya.gateway.auth.KeyFile`,
  :class:`~noctaya.gateway.metrics.Metrics`.

``sidecars`` (``noctaya.contract.demand.Sidecar``: the co-located ExternalScaler or the aggregate
reporter) are entered after the gateway's own parts have started, with the gateway's demand, its
metrics registry and its engine board (``keys.ENGINE``, shown in ``/noctaya/queue``), and left before
those parts stop; ``extra_contexts`` (plain cleanup contexts) come
after them. Neither is imported here: the gateway knows the contract, not the scaler.

The server must run with ``handler_cancellation=True`` (as ``noctaya.process.gateway`` does) so a
client that disconnects while queued frees its slot at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import aiohttp
from aiohttp import web

from noctaya.contract import demand as demand_mod
from noctaya.contract import engines
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import (
    accesslog,
    activation,
    admission,
    auth,
    backend,
    demand,
    draining,
    endpoints,
    errors,
    express,
    handler,
    heartbeat,
    history,
    keys,
    liveconfig,
    metrics,
    proxy,
    readiness,
    routing,
    websocket,
)
from noctaya.serving import connections, fallback, peers

CleanupContext = Callable[[web.Application], AsyncIterator[None]]
"""What ``app.cleanup_ctx`` takes: an async generator function, code before ``yield`` runs at start."""
UPSTREAM = web.AppKey("noctaya.gateway.upstream", proxy.Upstream)
HEARTBEAT = web.AppKey("noctaya.gateway.heartbeat", heartbeat.Heartbeat)
LIVE = web.AppKey("noctaya.gateway.live", liveconfig.LiveConfig)
EXPRESS = web.AppKey("noctaya.gateway.express", express.Lane)
UPSTREAM_KEEPALIVE = 4.0  # below the usual 5 s server keep-alive, so a pooled connection is not raced
#: backend connections beyond maxInFlight the pool may hold (a request's, closing while the next opens)
BACKEND_SPARE = 8
#: what a connection in the probe reserve may ask for (the kubelet's probe)
PROBE_PATHS = frozenset({"/healthz"})
logger = logging.getLogger("noctaya.gateway")


def connection_limits(
    config: gateway_contract.GatewayConfig, *, descriptors: int | None = None
) -> connections.Limits:
    """The bounds of the gateway's listener: the configured ones, ``maxConnections`` lowered (with a
    warning) to what the process's file descriptors (``descriptors``, RLIMIT_NOFILE by default)
    hold beside the backend sockets."""
    limits = connections.Limits(
        max_connections=config.max_connections,
        max_connections_per_peer=config.max_connections_per_peer,
        header_timeout=config.header_timeout,
        keepalive_timeout=config.keep_alive_timeout,
        write_timeout=config.client_write_timeout,
        peers=peers.Peers(
            ipv6_prefix=config.peer_ipv6_prefix,
            trusted_proxies=peers.parse_networks(config.trusted_proxies),
        ),
        probe_connections=min(config.probe_connections, config.max_connections // 2),
        probe_paths=PROBE_PATHS,
    )
    limit = connections.descriptor_limit() if descriptors is None else descriptors
    room = connections.connection_room(descriptors=limit, backend=config.max_in_flight + BACKEND_SPARE)
    effective = connections.within_descriptors(limits, room=room)
    if effective is not limits:
        logger.warning(
            "maxConnections %d lowered to %d (probe reserve %d): the process may open %d files "
            "(RLIMIT_NOFILE) and keeps room for backend sockets and files",
            limits.max_connections,
            effective.max_connections,
            effective.probe_connections,
            limit,
        )
    return effective


def make_runner(app: web.Application, *, express_lane: bool = True, **kwargs: Any) -> connections.Runner:
    """The runner for a gateway app: its connection bounds, OpenAI-shaped protocol errors, and the
    express lane (``express``) offered every request first unless ``express_lane`` is False (tests
    compare the two paths)."""
    return connections.Runner(
        app,
        table=app[keys.CONNECTIONS],
        error_body=errors.protocol_error_body,
        taker=app[EXPRESS] if express_lane else None,
        **kwargs,
    )


def make_app(
    config: gateway_contract.GatewayConfig,
    *,
    source: liveconfig.ConfigSource | None = None,
    sidecars: Sequence[demand_mod.Sidecar] = (),
    extra_contexts: Sequence[CleanupContext] = (),
) -> web.Application:
    """Build the gateway app for ``config`` (read from ``source``, whose changes of live fields it
    applies, when given); nothing runs until the app is started."""
    app = web.Application(client_max_size=config.max_body_bytes)
    the_connections = connections.ConnectionTable(limits=connection_limits(config))
    the_demand = demand.Demand()
    the_metrics = metrics.Metrics(
        max_queue=config.max_queue, max_in_flight=config.max_in_flight, max_tenants=config.max_tenants
    )
    the_metrics.bounds(
        access_log_max_per_second=config.access_log_max_per_second,
        activation_samples=config.activation_samples,
        retry_after_min=config.retry_after_min,
        retry_after_max=config.retry_after_max,
        max_warm_duration=config.max_warm_duration,
        config_reload_interval=config.config_reload_interval,
        warm_probe_timeouts=config.warm_probe_timeouts,
    )
    the_history = history.ActivationHistory(
        samples=config.activation_samples,
        floor=config.retry_after_min,
        cap=config.retry_after_max,
        fallback=config.retry_after,
    )
    the_admission = admission.Admission(
        max_queue=config.max_queue,
        max_in_flight=config.max_in_flight,
        demand=the_demand,
        # backstop to the lease: a request queued behind a full in-flight bound, or across a
        # backend that went cold again, still ends activation_timeout after its own arrival
        max_wait=config.activation_timeout,
        wait_expired=lambda: errors.activation_timeout(config.activation_timeout),
        max_tenants=config.max_tenants,
        # a newcomer under its share takes the slot of the newest request of the tenant holding most
        displaced=lambda: errors.queue_full(the_history.retry_after(elapsed=the_activation.elapsed())),
    )
    the_activation = activation.Activation(
        timeout=config.activation_timeout,
        grace=config.retry_grace,
        demand=the_demand,
        admission=the_admission,
        metrics=the_metrics,
        history=the_history,
    )

    def on_readiness(ready: bool) -> None:
        the_admission.set_ready(ready)
        if ready:
            the_activation.backend_ready()
            app[keys.COLD_ANSWERS].models.backend_ready()  # what it serves, for the cold answers
        elif the_admission.queued:  # went cold with requests still waiting: they need a lease again
            the_activation.ensure_open()

    the_readiness = readiness.Readiness(
        url=config.backend_url + config.readiness_path,
        cold_interval=config.probe_interval,
        warm_interval=config.warm_probe_interval,
        timeout=config.probe_timeout,
        late_limit=config.warm_probe_timeouts,
        on_late=the_metrics.late_probes.inc,
        on_change=on_readiness,
        idle_interval=config.idle_probe_interval,
        wanted=lambda: the_demand.demand() > 0,
        on_failed=the_activation.fail,
    )

    previous_demand = 0

    def on_demand(value: int) -> None:
        nonlocal previous_demand
        if value > 0 and previous_demand == 0:
            the_readiness.wake()  # first demand after idle: probe now, then at the cold rate
        previous_demand = value

    the_demand.subscribe(on_demand)
    the_drain = draining.Drain(admission=the_admission, timeout=config.drain_timeout)
    the_budget = admission.ByteBudget(
        limit=config.max_queued_body_bytes,
        refusal=lambda: errors.queue_bytes_full(
            config.max_queued_body_bytes, the_history.retry_after(elapsed=the_activation.elapsed())
        ),
    )
    the_metrics.bind(
        queued=lambda: the_admission.queued,
        queued_body_bytes=lambda: the_budget.held,
        max_queued_body_bytes=config.max_queued_body_bytes,
        in_flight=lambda: the_admission.in_flight,
        demand=the_demand.demand,
        ready=lambda: float(the_readiness.ready),
        draining=lambda: float(the_drain.draining),
        lease_open=lambda: float(the_demand.lease_open),
        connections=the_connections,
        tenants=lambda: the_admission.tenants,
        warm_hold=lambda: float(the_activation.warm_until is not None),
        retry_after=lambda: the_history.retry_after(elapsed=the_activation.elapsed()),
    )
    app[keys.CONFIG] = config
    app[keys.DEMAND] = the_demand
    app[keys.ADMISSION] = the_admission
    app[keys.ACTIVATION] = the_activation
    app[keys.READINESS] = the_readiness
    app[keys.AUTH] = auth.KeyFile(
        path=config.api_key_file,
        max_key_bytes=connections.max_header_value(the_connections.limits, "Bearer "),
    )
    app[keys.CONNECTIONS] = the_connections
    app[keys.ENGINE] = engines.Board()  # the co-located scaler posts the engine signal here
    app[keys.DRAIN] = the_drain
    app[keys.METRICS] = the_metrics
    app[keys.HISTORY] = the_history
    app[LIVE] = liveconfig.LiveConfig(
        running=config,
        source=source,
        activation=the_activation,
        readiness=the_readiness,
        metrics=the_metrics,
    )

    upstream = proxy.Upstream(
        base_url=config.backend_url,
        max_body_bytes=config.max_body_bytes,
        body_timeout=config.body_timeout,
        metrics=the_metrics,
        header_timeout=config.backend_header_timeout,
        forward_authorization=config.forward_authorization,
    )
    app[UPSTREAM] = upstream
    sockets = websocket.Sockets(
        max_open=config.websocket_max_open,
        max_open_per_peer=min(config.websocket_max_open_per_peer, config.websocket_max_open),
        peers=the_connections.limits.peers,
        retry_after=lambda: the_history.retry_after(elapsed=the_activation.elapsed()),
        max_message_bytes=config.websocket_max_message_bytes,
        idle_timeout=config.websocket_idle_timeout,
        forward_authorization=config.forward_authorization,
    )
    the_metrics.websockets.set_function(lambda: sockets.open)
    the_metrics.max_websockets.set(config.websocket_max_open)
    the_metrics.max_websockets_per_peer.set(sockets.max_open_per_peer)
    the_drain.on_begin(sockets.close_all)  # open WebSockets would hold a drain up forever
    app[HEARTBEAT] = heartbeat.Heartbeat(interval=config.heartbeat_interval)
    parts = handler.Parts(
        config=config,
        admission=the_admission,
        activation=the_activation,
        readiness=the_readiness,
        auth=app[keys.AUTH],
        drain=the_drain,
        metrics=the_metrics,
        upstream=upstream,
        heartbeat=app[HEARTBEAT],
        sockets=sockets,
        budget=the_budget,
        peers=the_connections.limits.peers,
        history=the_history,
        access=accesslog.AccessLog(
            mode=config.access_log,
            max_per_second=config.access_log_max_per_second,
            on_drop=the_metrics.access_log_dropped.inc,
        ),
    )
    app[EXPRESS] = express.Lane(
        admission=the_admission,
        drain=the_drain,
        auth=parts.auth,
        upstream=upstream,
        metrics=the_metrics,
        access=parts.access,
        max_body_bytes=config.max_body_bytes,
        forward_authorization=config.forward_authorization,
    )
    the_handler = handler.ProxyHandler(parts)
    app[keys.COLD_ANSWERS] = the_handler.cold_answers
    routing.setup_routes(app, handler=the_handler)
    # what no route takes (a path with a line feed, OPTIONS *): the JSON 404
    fallback.install(app, handler=endpoints.not_found_handler)
    app.cleanup_ctx.append(_backend_context)
    app.cleanup_ctx.append(_loops_context)
    app.cleanup_ctx.extend(_sidecar_context(sidecar) for sidecar in sidecars)
    app.cleanup_ctx.extend(extra_contexts)
    return app


def _sidecar_context(sidecar: demand_mod.Sidecar) -> CleanupContext:
    async def context(app: web.Application) -> AsyncIterator[None]:
        async with sidecar(
            demand=app[keys.DEMAND], registry=app[keys.METRICS].registry, engine=app[keys.ENGINE]
        ):
            yield

    return context


async def _backend_context(app: web.Application) -> AsyncIterator[None]:
    config = app[keys.CONFIG]
    connector = aiohttp.TCPConnector(
        limit=config.max_in_flight + BACKEND_SPARE,
        limit_per_host=0,
        keepalive_timeout=UPSTREAM_KEEPALIVE,
        ttl_dns_cache=10,
    )
    session = aiohttp.ClientSession(
        connector=connector,
        auto_decompress=False,
        timeout=aiohttp.ClientTimeout(
            total=None, connect=config.connect_timeout, sock_connect=config.connect_timeout
        ),
        skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
        cookie_jar=aiohttp.DummyCookieJar(),
        response_class=proxy.BackendResponse,  # an event stream's connection is never pooled again
        middlewares=(proxy.sent_once,),  # aiohttp would send a broken idempotent request again
    )
    upstream = app[UPSTREAM]
    upstream.session = session
    address = backend.address_of(config.backend_url)
    if address is not None:
        upstream.pool = backend.Pool(
            address=address,
            limit=config.max_in_flight + BACKEND_SPARE,
            connect_timeout=config.connect_timeout,
            keepalive=UPSTREAM_KEEPALIVE,
        )
        pool = upstream.pool
        app[keys.METRICS].bind_backend_pool(
            limit=pool.limit,
            open_=lambda: pool.open,
            idle=lambda: pool.idle,
            paused=lambda: pool.paused,
        )
    try:
        yield
    finally:
        if upstream.pool is not None:
            upstream.pool.close()
        await session.close()


async def _loops_context(app: web.Application) -> AsyncIterator[None]:
    """The probe loop, the heartbeat ticker, the backend-header watchdog, the config file poll and the
    model list reader; on exit they stop, then the lease and queue timers."""
    # a new connection per probe: a kept-alive one would go on reaching a backend Pod that has left
    # the Service (terminating), while a request's new connection is refused or sent elsewhere
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=2, force_close=True),
        cookie_jar=aiohttp.DummyCookieJar(),
    )
    app[LIVE].start()
    tasks = (
        asyncio.create_task(app[keys.READINESS].run(session), name="noctaya-gateway-readiness"),
        asyncio.create_task(app[HEARTBEAT].run(), name="noctaya-gateway-heartbeat"),
        asyncio.create_task(app[UPSTREAM].watch_headers(), name="noctaya-gateway-header-watchdog"),
        asyncio.create_task(app[LIVE].run(), name="noctaya-gateway-config-poll"),
        asyncio.create_task(app[keys.COLD_ANSWERS].models.run(session), name="noctaya-gateway-models"),
    )
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        app[keys.ACTIVATION].close()
        app[keys.ADMISSION].close()
        await session.close()
