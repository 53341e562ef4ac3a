"""Typed cdk8s constructs, one per owned resource family, composed into ``LLMServiceChart``.

Owns: the L2 constructs (backend, gateway, aggregate scaler, autoscaling, cache, prewarm, operator
install) with frozen ``<Family>Props``, the ``LLMServiceChart`` composition, and offline synth.
These are public API: platform teams add ``LLMServiceChart`` to their own cdk8s apps.

May import: ``noctaya.api``, ``noctaya.runtime``, ``noctaya.imports``, cdk8s, cdk8s_plus_28, constructs.
Must not import: kopf, a Kubernetes client, ``noctaya.operator``, ``noctaya.gateway``,
``noctaya.scaler``, ``noctaya.dev``.
"""
