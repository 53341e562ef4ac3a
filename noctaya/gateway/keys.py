"""Typed keys for everything the gateway keeps on its ``web.Application``.

``DEMAND`` is what the sidecars passed to ``make_app(config, sidecars=...)`` are fed (a
``noctaya.contract.demand.DemandSource``).
The other keys are the gateway's own parts, exposed for tests and diagnostics.
"""

from __future__ import annotations

from aiohttp import web

from noctaya.contract import engines
from noctaya.contract import gateway as gateway_contract
from noctaya.gateway import (
    activation,
    admission,
    auth,
    coldanswers,
    demand,
    draining,
    history,
    metrics,
    readiness,
)
from noctaya.serving import connections

CONFIG = web.AppKey("noctaya.gateway.config", gateway_contract.GatewayConfig)
DEMAND = web.AppKey("noctaya.gateway.demand", demand.Demand)
ADMISSION = web.AppKey("noctaya.gateway.admission", admission.Admission)
ACTIVATION = web.AppKey("noctaya.gateway.activation", activation.Activation)
READINESS = web.AppKey("noctaya.gateway.readiness", readiness.Readiness)
AUTH = web.AppKey("noctaya.gateway.auth", auth.KeyFile)
DRAIN = web.AppKey("noctaya.gateway.drain", draining.Drain)
METRICS = web.AppKey("noctaya.gateway.metrics", metrics.Metrics)
HISTORY = web.AppKey("noctaya.gateway.history", history.ActivationHistory)
CONNECTIONS = web.AppKey("noctaya.gateway.connections", connections.ConnectionTable)
ENGINE = web.AppKey("noctaya.gateway.engine", engines.Board)
COLD_ANSWERS = web.AppKey("noctaya.gateway.cold_answers", coldanswers.ColdAnswers)
