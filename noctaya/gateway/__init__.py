"""The gateway: the stable OpenAI-compatible endpoint in front of one model backend.

Owns: bounded cold admission, activation leases, readiness probing, the streaming proxy, client
authentication, drain, demand accounting and the gateway's metrics.

Must not import: ``noctaya.scaler`` (its sidecars come in as ``noctaya.contract.demand.Sidecar``s, from
``noctaya.process``), grpc or protobuf, kopf, cdk8s, constructs, jsii, any Kubernetes client,
``noctaya.operator`` or ``noctaya.constructs``. The gateway has no Kubernetes credentials and never
needs them.
"""
