"""Build hook: generate the ExternalScaler gRPC stubs from proto/ into the wheel.

Everything else about the build lives in pyproject.toml. The stubs (``noctaya/scaler/_pb``) are not
kept in git; ``scripts/protos.sh`` makes them for a checkout, and this hook makes them for every
wheel, so an installed ``noctaya`` always carries stubs that match ``proto/``.
"""

from __future__ import annotations

import pathlib

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = pathlib.Path(__file__).resolve().parent
PB_DIR = "noctaya/scaler/_pb"


def generate_stubs() -> None:
    from grpc_tools import protoc  # build-time requirement (pyproject build-system.requires)

    protos = sorted((ROOT / "proto").glob("*.proto"))
    if not protos:
        if (ROOT / PB_DIR / "externalscaler_pb2.py").exists():
            return  # building from an sdist that already carries the stubs
        raise SystemExit("build: proto/*.proto not found; cannot generate the gRPC stubs")
    (ROOT / PB_DIR).mkdir(parents=True, exist_ok=True)
    include = f"-I{PB_DIR}={ROOT / 'proto'}"
    import grpc_tools

    well_known = pathlib.Path(grpc_tools.__file__).parent / "_proto"
    for proto in protos:
        args = [
            "grpc_tools.protoc",
            include,
            f"-I{well_known}",
            f"--python_out={ROOT}",
            f"--grpc_python_out={ROOT}",
            f"--pyi_out={ROOT}",
            f"{PB_DIR}/{proto.name}",
        ]
        if protoc.main(args) != 0:
            raise SystemExit(f"build: protoc failed for {proto}")
    (ROOT / PB_DIR / "__init__.py").write_text(
        '"""Generated from proto/ by the build; never edited by hand."""\n'
    )


class BuildWithStubs(build_py):
    def run(self) -> None:
        generate_stubs()
        # package discovery ran before the stubs existed on a clean tree: add their package now
        package = PB_DIR.replace("/", ".")
        if self.packages is not None and package not in self.packages:
            self.packages.append(package)
        super().run()


setup(cmdclass={"build_py": BuildWithStubs})
