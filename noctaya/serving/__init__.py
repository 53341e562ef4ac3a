"""The HTTP serving layer both data-plane processes run on (the gateway's port, the aggregate
scaler's report port).

Owns: ``connections`` (aiohttp's server with connection bounds overall, per peer and for a probe
reserve, header and keep-alive timeouts, and JSON errors for requests that do not parse, never
echoing their bytes), ``peers`` (what a peer is: the key of every per-peer bound, reusable as a
tenant key), ``fallback`` (the route of last resort, for what no route takes), ``listeners``
(listening sockets opened before a server starts, so a taken port fails before anything else runs),
``redaction`` (the log filter that keeps credentials and control characters out of every log line)
and ``bearer`` (the one parser of ``Authorization: Bearer`` headers).

Must not import: the gateway, the scaler, ``noctaya dev``, the control plane (operator, constructs,
runtime), kopf, cdk8s, jsii or a Kubernetes client. It knows HTTP and logging, nothing of the
product.
"""
