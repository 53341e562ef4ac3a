"""The kopf operator: reconciles LLMServices into applied, owned Kubernetes objects and precise status.

Owns: reconciliation (runtime selection, in-process synth on one jsii thread, server-side apply,
pruning, create-once objects), status derivation from watched Deployments/Pods/Jobs/ScaledObjects,
events, Lease-based leader election, operator settings.

May import: everything below it (``noctaya.api``, ``noctaya.runtime``, ``noctaya.constructs``), kopf,
kubernetes_asyncio. Must not import: ``noctaya.gateway``, ``noctaya.scaler``, ``noctaya.dev``.
"""
