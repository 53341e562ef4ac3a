"""Opt-in hardening for the example LLMServices, rendered with Noctaya's own constructs.

- ``qwen-mtls``: KEDA reaches the ExternalScaler over mutual TLS. The gateway mounts the server Secret
  ``qwen-mtls-scaler-tls`` (``tls.crt``/``tls.key`` valid for ``qwen-mtls-scaler.llm.svc``, and
  ``ca.crt`` to verify KEDA); the TriggerAuthentication ``qwen-mtls-keda-client`` hands KEDA the client
  certificate from the Secret ``qwen-mtls-keda-client-tls``. Issue both with cert-manager or your PKI.
- ``qwen-mtls`` and ``qwen-ha``: NetworkPolicies so only KEDA reaches gRPC 9090, only the service's own
  gateways and the monitoring namespace (its ``/metrics``) reach the aggregate scaler's reports port and
  the backend.

Run ``python examples/security/app.py [OUTDIR]`` (default ``dist/examples/security``).
"""

from __future__ import annotations

# isort: off
import noctaya  # noqa: F401  (first: it silences jsii's Node.js banners before cdk8s starts)
# isort: on

import pathlib
import sys

import cdk8s

from noctaya.constructs import naming, output, security


def charts(app: cdk8s.App) -> dict[str, cdk8s.Chart]:
    """One chart per hardened LLMService, keyed by output file name."""
    mtls = cdk8s.Chart(app, "qwen-mtls", disable_resource_name_hashes=True)
    security.ScalerSecurity(
        mtls,
        "Security",
        props=security.ScalerSecurityProps(
            identity=naming.ServiceIdentity(name="qwen-mtls", namespace="llm"),
            authentication_name="qwen-mtls-keda-client",
            client_secret="qwen-mtls-keda-client-tls",
        ),
    )
    ha = cdk8s.Chart(app, "qwen-ha", disable_resource_name_hashes=True)
    security.ScalerSecurity(
        ha,
        "Security",
        props=security.ScalerSecurityProps(
            identity=naming.ServiceIdentity(name="qwen-ha", namespace="llm"),
        ),
    )
    return {"qwen-mtls.yaml": mtls, "qwen-ha.yaml": ha}


def synth(outdir: pathlib.Path) -> list[pathlib.Path]:
    """Write the manifests into ``outdir``; returns the files."""
    app = cdk8s.App()
    written = []
    for name, chart in charts(app).items():
        output.write(outdir / name, output.to_yaml(chart.to_json()))
        written.append(outdir / name)
    return written


if __name__ == "__main__":
    for path in synth(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "dist/examples/security")):
        print(path)
