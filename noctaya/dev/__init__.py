"""The local runner (``noctaya dev``) and the fake OpenAI-compatible engine.

Owns: a local KEDA that speaks the ExternalScaler gRPC protocol exactly as KEDA does, gateway and
backend replica processes, local round-robin Services, the live terminal view,
``noctaya.dev.fake_engine`` for tests and demos, and ``noctaya.dev.cluster``: real KEDA's processes and
certificates on the local control plane of ``scripts/cluster.sh`` (driven through its ``kubectl``
binary).

Must not import: kopf, cdk8s, constructs, jsii, any Kubernetes client, ``noctaya.operator`` or
``noctaya.constructs``.
"""
