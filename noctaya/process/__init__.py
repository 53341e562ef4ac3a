"""The data plane's processes: the composition root above the gateway and the scaler.

Owns: the entry points of ``noctaya gateway`` (``gateway``: config file and flags, the scaler's
sidecars when configured, signals and the shutdown order) and ``noctaya scaler`` (``scaler``: the
aggregate scaler process). Here and only here the two packages meet: the gateway takes its sidecars
as ``noctaya.contract.demand.Sidecar``s and never imports the scaler, the scaler never imports the
gateway, and the scaler (so gRPC) is imported only when a gateway's config asks for it.

Must not import: kopf, cdk8s, constructs, jsii, any Kubernetes client, ``noctaya.operator``,
``noctaya.constructs``, ``noctaya.runtime`` or ``noctaya.dev``. Nothing in the data plane imports this
package: ``noctaya.cli`` runs it.
"""
