"""The ``noctaya`` command: one entry point, one subcommand per role.

Each subcommand lives in the package that owns it (the data plane's processes in
``noctaya.process``) and is imported only when it runs, so that ``noctaya gateway`` never loads cdk8s
or kopf and ``noctaya validate`` starts in a blink.
A subcommand is a function ``main(argv: list[str]) -> int`` that parses its own flags.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple


class Subcommand(NamedTuple):
    module: str
    function: str
    summary: str


SUBCOMMANDS: Final[dict[str, Subcommand]] = {
    "validate": Subcommand(
        "noctaya.api.command", "validate_main", "check LLMService / InferenceRuntime YAML documents"
    ),
    "crds": Subcommand("noctaya.api.command", "crds_main", "print the CustomResourceDefinitions"),
    "docs": Subcommand("noctaya.api.reference", "main", "write the API reference (docs/api-reference.md)"),
    "synth": Subcommand(
        "noctaya.constructs.command", "main", "render LLMServices and their runtimes into manifests"
    ),
    "chart": Subcommand(
        "noctaya.constructs.helmchart", "main", "write the operator's Helm chart (from the install construct)"
    ),
    "operator": Subcommand(
        "noctaya.operator.command", "main", "run the operator (kopf, Lease leader election)"
    ),
    "gateway": Subcommand("noctaya.process.gateway", "main", "run the OpenAI-compatible gateway"),
    "scaler": Subcommand("noctaya.process.scaler", "main", "run the aggregate KEDA ExternalScaler"),
    "dev": Subcommand(
        "noctaya.dev.command", "main", "run gateway, scaler, a local KEDA and local backends on this machine"
    ),
}


#: the extra a command needs beyond the base install (the API and the constructs)
EXTRAS: Final = {"operator": "operator", "gateway": "dataplane", "scaler": "dataplane", "dev": "dataplane"}


def _usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: noctaya <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {sub.summary}" for name, sub in SUBCOMMANDS.items()]
    lines += ["", "Run 'noctaya <command> --help' for the options of one command."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in {"-h", "--help", "help"}:
        print(_usage())
        return 0 if args else 2
    if args[0] == "--version":
        from noctaya import __version__

        print(__version__)
        return 0
    sub = SUBCOMMANDS.get(args[0])
    if sub is None:
        print(f"noctaya: unknown command {args[0]!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    # jsii (cdk8s) prints a banner about the Node.js version on import; it is noise in a CLI
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    try:
        module = importlib.import_module(sub.module)
    except ModuleNotFoundError as exc:
        if exc.name is None or exc.name.split(".")[0] == "noctaya":
            raise
        extra = EXTRAS.get(args[0], "all")
        print(
            f"noctaya {args[0]}: needs the '{extra}' extra (pip install 'noctaya[{extra}]'): "
            f"no module named {exc.name!r}",
            file=sys.stderr,
        )
        return 2
    entry: Callable[[list[str]], int] = getattr(module, sub.function)
    return entry(args[1:])


if __name__ == "__main__":
    sys.exit(main())
