"""The KEDA ExternalScaler: co-located in a gateway, or aggregating the demand of several gateways.

Owns: the ``externalscaler.ExternalScaler`` gRPC service (IsActive, StreamIsActive, GetMetricSpec,
GetMetrics), TLS / mutual TLS from mounted files, demand-report intake and membership for the
aggregate scaler, and the gateway-side reporter.

Must not import: ``noctaya.gateway`` (it serves a gateway's demand through
``noctaya.contract.demand``; ``noctaya.process`` wires the two), kopf, cdk8s, constructs, jsii, any
Kubernetes client, ``noctaya.operator`` or ``noctaya.constructs``.
"""
