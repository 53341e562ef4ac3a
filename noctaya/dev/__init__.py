"""The local runner (``noctaya dev``) and the fake OpenAI-compatible engine.

Owns: a local KEDA that speaks the ExternalScaler gRPC protocol exactly as KEDA does, gateway and
backend replica processes, local round-robin Services, the live terminal view, and
``noctaya.dev.fake_engine`` for tests and demos.

Must not import: kopf, cdk8s, constructs, jsii, any Kubernetes client, ``noctaya.operator`` or
``noctaya.constructs``.
"""
