"""``python -m noctaya.constructs [EXAMPLES]``: this repository's cdk8s app (``cdk8s.yaml``).

Writes everything ``dist/`` holds into ``$CDK8S_OUTDIR`` (``cdk8s synth`` empties it first; default
``dist``): the CRDs (``crds/``, from ``noctaya.api.crds``), the operator installation without the CRDs
(``install.yaml``), every example LLMService rendered with its runtime
(``examples/<namespace>/<name>.yaml``) and the security and observability examples
(``examples/security/``, ``examples/observability/``).
"""

from __future__ import annotations

import os
import pathlib
import runpy
import sys

from noctaya.api import crds
from noctaya.constructs import command, install, output, settings


def main(argv: list[str]) -> int:
    outdir = pathlib.Path(os.environ.get("CDK8S_OUTDIR") or "dist")
    examples = pathlib.Path(argv[0] if argv else "examples")
    crds.write(outdir / "crds")
    # the CRDs are in crds/ already (one file each, as `noctaya crds -o` writes them); install.yaml
    # holds the rest, so a CRD change touches crds/ only
    output.write(
        outdir / "install.yaml",
        command.install_yaml(install.OperatorInstallProps(image=settings.DEFAULT_IMAGE)),
    )
    status = command.main([str(examples), "-o", str(outdir / "examples"), "--force"])
    if status != 0:
        return status
    for extra in ("security", "observability"):
        app = examples / extra / "app.py"
        if app.is_file():
            runpy.run_path(str(app))["synth"](outdir / "examples" / extra)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
