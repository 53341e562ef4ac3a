"""``noctaya synth FILE... -o DIR``: render LLMServices offline, with the constructs the operator uses.

Inputs are files or directories (``*.yaml``/``*.yml``, recursively, in sorted order) holding
LLMService and InferenceRuntime documents. They are loaded and validated by ``noctaya.api.documents``
(the same checks as ``noctaya validate``); every InferenceRuntime of every input is a candidate for
every LLMService (runtimes are cluster-scoped). Each LLMService selects its runtime exactly as the
operator would and is rendered into ``DIR/<namespace>/<name>.yaml``; with ``--install`` the operator
installation (namespace, RBAC, Deployment, PDB — never the CRDs, which ``noctaya crds -o DIR`` writes, so
they live in one place) goes to ``DIR/install.yaml`` too.

Committed files are never overwritten by accident: a ``DIR`` that already holds files is refused
unless ``--force`` (then only the files rendered are replaced, and only when their content changed).

Output is byte-identical between runs. The aggregate scaler's token Secret is left out unless
``--scaler-token-file`` gives the token (it then appears in every multi-gateway output; keep such
output out of Git) — see ``noctaya.constructs.scaler``.

Every problem names the file, the document (kind and namespace/name) and the field; nothing is
written when any document has a problem. Exit status: 0 rendered, 1 problems, 2 usage.
"""

from __future__ import annotations

import argparse
import dataclasses
import pathlib
import sys
from collections.abc import Mapping, Sequence
from typing import TextIO

from noctaya.api import documents, inferenceruntime, llmservice
from noctaya.constructs import install, output, settings, synthesis
from noctaya.runtime import selection

MAX_TOKEN_BYTES = 4096


@dataclasses.dataclass(frozen=True, kw_only=True)
class Loaded:
    services: list[tuple[str, llmservice.LLMService]]
    runtimes: list[tuple[str, inferenceruntime.InferenceRuntime]]
    problems: list[str]


def load(args: Sequence[str], *, limits: documents.Limits = documents.DEFAULT_LIMITS) -> Loaded:
    """Every valid LLMService and InferenceRuntime of the inputs, with their source file, and every
    problem found (as messages naming file, document and field)."""
    services: list[tuple[str, llmservice.LLMService]] = []
    runtimes: list[tuple[str, inferenceruntime.InferenceRuntime]] = []
    problems: list[str] = []
    for name, path, error in documents.input_files(args, stdin=False):
        if path is None:
            problems.append(f"{name}: {error}")
            continue
        try:
            with path.open("rb") as handle:
                data = handle.read(limits.max_stream_bytes + 1)
        except OSError as exc:
            problems.append(f"{name}: cannot read: {exc.strerror or exc}")
            continue
        checked, stream_problems = documents.check_stream(data, source=name, limits=limits)
        problems += [str(p) for p in stream_problems]
        for result in checked:
            problems += [str(p) for p in result.problems]
            if isinstance(result.obj, llmservice.LLMService):
                services.append((name, result.obj))
                problems += [
                    f"{name}: LLMService {_ref(result.obj)}: {p}"
                    for p in result.obj.reserved_field_problems()
                ]
            elif isinstance(result.obj, inferenceruntime.InferenceRuntime):
                runtimes.append((name, result.obj))
                problems += [
                    f"{name}: InferenceRuntime {result.obj.name}: {p}"
                    for p in result.obj.reserved_field_problems()
                ]
    seen: dict[tuple[str, str], str] = {}
    for name, service in services:
        key = (service.namespace, service.name)
        if key in seen:
            problems.append(f"{name}: LLMService {_ref(service)}: also defined in {seen[key]}")
        seen.setdefault(key, name)
    names: dict[str, str] = {}
    for name, runtime in runtimes:
        if runtime.name in names:
            problems.append(f"{name}: InferenceRuntime {runtime.name}: also defined in {names[runtime.name]}")
        names.setdefault(runtime.name, name)
    return Loaded(services=services, runtimes=runtimes, problems=problems)


def _ref(service: llmservice.LLMService) -> str:
    return f"{service.namespace}/{service.name}"


def render_all(loaded: Loaded, *, render: settings.RenderSettings) -> tuple[dict[str, str], list[str]]:
    """``{relative path: YAML}`` for every LLMService, and the problems of those that cannot render."""
    files: dict[str, str] = {}
    problems: list[str] = []
    candidates = [runtime for _, runtime in loaded.runtimes]
    for name, service in loaded.services:
        subject = f"{name}: LLMService {_ref(service)}"
        try:
            runtime = selection.select_runtime(service=service, runtimes=candidates)
            manifests = synthesis.render_llmservice(service=service, runtime=runtime, settings=render)
        except ValueError as exc:  # SelectionError, RenderError and other field errors
            problems.append(f"{subject}: {exc}")
            continue
        files[f"{service.namespace}/{service.name}.yaml"] = output.to_yaml(manifests)
    return files, problems


INSTALL_HEADER = (
    "# The Noctaya operator: namespace, RBAC, Deployment, PDB. Apply the CRDs first:\n"
    "#   kubectl apply -f dist/crds/ && kubectl apply -f dist/install.yaml\n"
)


def install_yaml(props: install.OperatorInstallProps) -> str:
    """``install.yaml``: the operator's installation without the CRDs (those are ``noctaya crds``)."""
    if props.crds:
        raise ValueError("install.yaml holds no CRDs: they are written by `noctaya crds -o DIR` only")
    return INSTALL_HEADER + output.to_yaml(synthesis.render_install(props=props))


def _token(path: pathlib.Path) -> str:
    data = path.read_bytes()[: MAX_TOKEN_BYTES + 1]
    if len(data) > MAX_TOKEN_BYTES:
        raise ValueError(f"longer than {MAX_TOKEN_BYTES} bytes")
    token = data.decode("ascii").strip()
    if not token or any(not c.isprintable() or c.isspace() for c in token):
        raise ValueError("must be one line of printable ASCII without spaces")
    return token


def _parser() -> argparse.ArgumentParser:
    """The command line of ``noctaya synth``."""
    parser = argparse.ArgumentParser(
        prog="noctaya synth",
        description="Render LLMServices and their InferenceRuntimes into Kubernetes manifests, offline.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="file or directory (*.yaml, *.yml)")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        type=pathlib.Path,
        metavar="DIR",
        help="directory for <namespace>/<name>.yaml (and install.yaml with --install); must be empty or "
        "missing unless --force",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="write into a DIR that already holds files, replacing the files rendered (default: refuse)",
    )
    defaults = settings.RenderSettings()
    parser.add_argument(
        "--gateway-image",
        default=defaults.gateway_image,
        help="image of gateways and aggregate scalers (default: %(default)s)",
    )
    parser.add_argument(
        "--gateway-replicas",
        type=int,
        default=defaults.default_gateway_replicas,
        help="gateways per LLMService when spec.endpoint.replicas is unset (default: %(default)s)",
    )
    parser.add_argument(
        "--scaler-token-file",
        type=pathlib.Path,
        metavar="FILE",
        help="render the aggregate scaler token Secret with this token (default: leave it out)",
    )
    install_defaults = install.OperatorInstallProps(image=defaults.gateway_image)
    parser.add_argument(
        "--install",
        action="store_true",
        help="also write install.yaml: the operator's namespace, RBAC, Deployment and PDB (default: off)",
    )
    parser.add_argument(
        "--operator-image",
        default=install_defaults.image,
        help="with --install: operator image (default: %(default)s)",
    )
    parser.add_argument(
        "--operator-namespace",
        default=install_defaults.namespace,
        help="with --install: namespace of the operator and its Lease (default: %(default)s)",
    )
    parser.add_argument(
        "--operator-replicas",
        type=int,
        default=install_defaults.replicas,
        help="with --install: operator replicas, one leader and standbys (default: %(default)s)",
    )
    parser.add_argument(
        "--operator-watch-namespace",
        action="append",
        default=[],
        metavar="NAMESPACE",
        help="with --install: a namespace the operator watches, repeatable; its grants on namespaced "
        "objects become a Role there (default: every namespace, through a ClusterRole)",
    )
    parser.add_argument(
        "--operator-no-leader-election",
        action="store_true",
        help="with --install: one replica without a Lease (default: leader election on)",
    )
    parser.add_argument(
        "--operator-log-level",
        choices=install.LOG_LEVELS,
        default=install_defaults.log_level,
        help="with --install: operator log level (default: %(default)s)",
    )
    return parser


def _render_settings(*, options: argparse.Namespace, err: TextIO) -> settings.RenderSettings | None:
    """The render settings the options ask for, or None with the reason printed to ``err``."""
    token = None
    if options.scaler_token_file is not None:
        try:
            token = _token(options.scaler_token_file)
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            print(f"noctaya synth: --scaler-token-file {options.scaler_token_file}: {exc}", file=err)
            return None
    try:
        return settings.RenderSettings(
            gateway_image=options.gateway_image,
            default_gateway_replicas=options.gateway_replicas,
            scaler_token=token,
        )
    except ValueError as exc:
        print(f"noctaya synth: {exc}", file=err)
        return None


def _write_all(*, options: argparse.Namespace, files: Mapping[str, str], err: TextIO) -> int | None:
    """Write the rendered files into ``--output``: how many changed, or None with the reason printed."""
    if not options.force and options.output.is_dir() and any(options.output.iterdir()):
        print(
            f"noctaya synth: {options.output} already holds files; nothing written "
            "(--force replaces the files rendered)",
            file=err,
        )
        return None
    try:
        return sum(output.write(options.output / relative, text) for relative, text in sorted(files.items()))
    except OSError as exc:
        print(f"noctaya synth: cannot write to {options.output}: {exc.strerror or exc}", file=err)
        return None


def main(argv: list[str], *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out = stdout if stdout is not None else sys.stdout
    err = stderr if stderr is not None else sys.stderr
    options = _parser().parse_args(argv)
    render = _render_settings(options=options, err=err)
    if render is None:
        return 2
    loaded = load(options.files)
    problems = list(loaded.problems)
    files: dict[str, str] = {}
    if not problems:
        files, problems = render_all(loaded, render=render)
    if not problems and not loaded.services and not options.install:
        problems.append(f"{', '.join(options.files)}: no LLMService found")
    if not problems and options.install:
        try:
            files["install.yaml"] = install_yaml(
                install.OperatorInstallProps(
                    image=options.operator_image,
                    namespace=options.operator_namespace,
                    replicas=options.operator_replicas,
                    gateway_image=options.gateway_image,
                    default_gateway_replicas=options.gateway_replicas,
                    watch_namespaces=tuple(dict.fromkeys(options.operator_watch_namespace)),
                    leader_election=not options.operator_no_leader_election,
                    log_level=options.operator_log_level,
                )
            )
        except ValueError as exc:
            print(f"noctaya synth: {exc}", file=err)
            return 2
    if problems:
        for problem in problems:
            print(problem, file=err)
        print(f"noctaya synth: {len(problems)} problem(s); nothing written", file=err)
        return 1
    changed = _write_all(options=options, files=files, err=err)
    if changed is None:
        return 1
    print(
        f"rendered {len(loaded.services)} LLMService(s) into {options.output} "
        f"({len(files)} file(s), {changed} changed)",
        file=out,
    )
    return 0
