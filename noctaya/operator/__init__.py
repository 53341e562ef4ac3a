"""The kopf operator: reconciles LLMServices into applied, owned Kubernetes objects and precise status.

Owns: reconciliation (runtime selection, in-process synth on one jsii thread, server-side apply,
pruning, create-once objects), status derivation from watched Deployments/Pods/Jobs/ScaledObjects,
events, Lease-based leader election, operator settings.

Modules, from the outside in:

- ``command`` — ``noctaya operator``: settings, logging, the Kubernetes client, signals;
- ``running`` — one replica: standby for the Lease, lead (kopf + work queue), step down;
- ``leadership`` — the ``coordination.k8s.io`` Lease elector;
- ``handlers`` — kopf watches that feed the inventory and mark LLMServices for a reconcile;
- ``inventory`` — the in-memory view of LLMServices, runtimes and labelled objects;
- ``queueing`` — the deduplicating work queue with bounded workers and backoff;
- ``reconciliation`` — one pass for one LLMService; ``discovery`` — is the KEDA ScaledObject API
  served; ``tokens`` — the aggregate scaler's token, read back or made once;
- ``rendering`` — ``LLMServiceChart`` synthesis on one thread, cached per service;
- ``applying`` — server-side apply, hash-skip, create-once, prune, write fencing;
- ``health`` / ``status`` — pure derivation of health, conditions, phase and transitions;
- ``schedules`` — ``status.nextWarmWindow`` from the schedules, and when to recompute it;
- ``events``, ``metrics``, ``probing`` — Kubernetes Events, Prometheus metrics, ``/healthz``;
- ``apiclient`` — REST paths of the managed kinds over ``kubernetes_asyncio``; ``settings`` — flags/env.

May import: everything below it (``noctaya.api``, ``noctaya.runtime``, ``noctaya.constructs``), kopf,
kubernetes_asyncio. Must not import: ``noctaya.gateway``, ``noctaya.scaler``, ``noctaya.dev``.
"""
