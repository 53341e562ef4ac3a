"""The HTTP serving layer both data-plane processes run on (the gateway's port, the aggregate
scaler's report port).

Owns: ``connections`` (aiohttp's server with connection bounds overall and per peer, header and
keep-alive timeouts, and JSON errors for requests that do not parse, never echoing their bytes),
``redaction`` (the log filter that keeps credentials out of every log line) and ``bearer`` (the one
parser of ``Authorization: Bearer`` headers).

Must not import: the gateway, the scaler, ``noctaya dev``, the control plane (operator, constructs,
runtime), kopf, cdk8s, jsii or a Kubernetes client. It knows HTTP and logging, nothing of the
product.
"""
