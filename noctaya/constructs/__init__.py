"""Typed cdk8s constructs, one per owned resource family, composed into ``LLMServiceChart``.

Owns: the L2 constructs (backend, gateway, aggregate scaler, autoscaling, cache, prewarm, operator
install) with frozen ``<Family>Props``, the ``LLMServiceChart`` composition, and offline synth.
These are public API: platform teams add ``LLMServiceChart`` to their own cdk8s apps::

    from noctaya.constructs import LLMServiceChart, RenderSettings

May import: ``noctaya.api``, ``noctaya.runtime``, ``noctaya.contract`` (the config files the rendered
gateway and scaler read), ``noctaya.imports``, cdk8s, cdk8s_plus_28, constructs.
Must not import: kopf, a Kubernetes client, ``noctaya.operator``, ``noctaya.gateway``,
``noctaya.scaler``, ``noctaya.serving``, ``noctaya.process``, ``noctaya.dev``.
"""

from noctaya.constructs.autoscaling import Autoscaling, AutoscalingProps
from noctaya.constructs.backend import Backend, BackendProps
from noctaya.constructs.cache import Cache, CacheProps
from noctaya.constructs.chart import LLMServiceChart
from noctaya.constructs.gateway import Gateway, GatewayProps
from noctaya.constructs.install import OperatorInstall, OperatorInstallProps
from noctaya.constructs.observability import Observability, ObservabilityProps
from noctaya.constructs.prewarm import Prewarm, PrewarmProps
from noctaya.constructs.scaler import AggregateScaler, AggregateScalerProps
from noctaya.constructs.security import ScalerSecurity, ScalerSecurityProps
from noctaya.constructs.settings import RenderSettings
from noctaya.constructs.synthesis import render_install, render_llmservice

__all__ = [
    "AggregateScaler",
    "AggregateScalerProps",
    "Autoscaling",
    "AutoscalingProps",
    "Backend",
    "BackendProps",
    "Cache",
    "CacheProps",
    "Gateway",
    "GatewayProps",
    "LLMServiceChart",
    "Observability",
    "ObservabilityProps",
    "OperatorInstall",
    "OperatorInstallProps",
    "Prewarm",
    "PrewarmProps",
    "RenderSettings",
    "ScalerSecurity",
    "ScalerSecurityProps",
    "render_install",
    "render_llmservice",
]
