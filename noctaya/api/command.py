"""``noctaya validate`` and ``noctaya crds``.

``noctaya validate FILE...`` checks LLMService and InferenceRuntime documents offline with the same
models (and messages) the CRDs are generated from. FILE is a file, a directory (every ``*.yaml`` /
``*.yml`` below it, in sorted order) or ``-`` for stdin. Every problem of every document is printed,
one a line in line order (``file:line: Kind namespace/name: field.path: message``; an unknown field
names the closest known one), and the exit status is 1; when
all documents are valid it prints a one-line summary and exits 0. A document of another API (a
ConfigMap, a Deployment beside the LLMService in one file) is skipped with a one-line note naming it;
``--strict`` makes it a problem instead. A kind Noctaya does not know in its own group
(``serving.noctaya.io/v1alpha1`` ``LLMServce``), or close to one of its kinds, is always a problem.
Input is read with the bounds of ``documents.Limits`` (no more than ``max_stream_bytes + 1`` bytes are
ever read from one input).

``noctaya crds`` prints both CRDs as one multi-document YAML stream; ``-o DIR`` writes
``DIR/<plural>.serving.noctaya.io.yaml`` instead.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import pathlib
import sys
from typing import BinaryIO, TextIO

from noctaya.api import crds, documents


def _read(stream: BinaryIO, limit: int) -> bytes:
    return stream.read(limit + 1)


@dataclasses.dataclass
class _Tally:
    """What ``noctaya validate`` has found so far, over all its inputs."""

    problems: list[documents.Problem] = dataclasses.field(default_factory=list)
    kinds: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    notes: list[str] = dataclasses.field(default_factory=list)
    total: int = 0
    files: int = 0
    skipped: int = 0
    stdin_used: bool = False


def _validate_parser() -> argparse.ArgumentParser:
    """The command line of ``noctaya validate``."""
    parser = argparse.ArgumentParser(
        prog="noctaya validate",
        description="Check LLMService and InferenceRuntime YAML documents offline.",
    )
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help="file, directory (*.yaml, *.yml) or - for stdin"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="print problems only, no notes or summary (default: off)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="refuse documents of other APIs instead of skipping them (default: skip with a note)",
    )
    return parser


def _input_bytes(
    *, name: str, path: pathlib.Path | None, stdin: BinaryIO | None, tally: _Tally, limits: documents.Limits
) -> bytes | None:
    """The bytes of one input (``path`` None: stdin), or None with the reason put in ``tally``."""
    try:
        if path is None:
            if tally.stdin_used:
                tally.problems.append(documents.Problem(source=name, message="stdin given more than once"))
                return None
            tally.stdin_used = True
            return _read(stdin if stdin is not None else sys.stdin.buffer, limits.max_stream_bytes)
        with path.open("rb") as handle:
            return _read(handle, limits.max_stream_bytes)
    except OSError as exc:
        tally.problems.append(documents.Problem(source=name, message=f"cannot read: {exc.strerror or exc}"))
        return None


def _check_input(*, name: str, data: bytes, strict: bool, tally: _Tally, limits: documents.Limits) -> None:
    """Check every document of one input into ``tally``; a foreign one is skipped unless ``strict``."""
    checked, stream_problems = documents.check_stream(data, source=name, limits=limits)
    in_file: list[documents.Problem] = []
    for result in checked:
        if result.foreign and not strict:
            tally.skipped += 1
            version = result.api_version or "no apiVersion"
            tally.notes.append(
                f"{name}:{result.document.line_of(('kind',))}: skipped {result.kind}"
                f"{' ' + result.name if result.name else ''} ({version}): not a Noctaya kind "
                "(--strict refuses it)"
            )
            continue
        tally.total += 1
        in_file.extend(result.problems)
        if result.ok and result.kind:
            tally.kinds[result.kind] += 1
    # one file's problems in line order (a stream problem without a line first)
    tally.problems.extend(sorted([*in_file, *stream_problems], key=lambda p: p.line or 0))


def _verdict(*, tally: _Tally, quiet: bool, out: TextIO) -> int:
    """Print the notes, the problems and a summary; the exit status."""
    if not quiet:
        for note in tally.notes:
            print(note, file=out)
    for problem in tally.problems:
        print(problem, file=out)
    if tally.problems:
        if not quiet:
            print(f"{len(tally.problems)} problem(s) found in {tally.files} file(s)", file=out)
        return 1
    if not quiet:
        counted = ", ".join(f"{n} {k}" for k, n in sorted(tally.kinds.items()))
        extra = f"; {tally.skipped} of other APIs skipped" if tally.skipped else ""
        print(f"{tally.total} document(s) valid ({counted}) in {tally.files} file(s){extra}", file=out)
    return 0


def validate_main(argv: list[str], *, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Validate documents; 0 when all are valid, 1 when any problem was found, 2 on usage errors."""
    options = _validate_parser().parse_args(argv)
    out = stdout if stdout is not None else sys.stdout
    limits = documents.DEFAULT_LIMITS
    tally = _Tally()
    for name, path, error in documents.input_files(options.files, stdin=True):
        if error is not None:
            tally.problems.append(documents.Problem(source=name, message=error))
            continue
        tally.files += 1
        data = _input_bytes(name=name, path=path, stdin=stdin, tally=tally, limits=limits)
        if data is not None:
            _check_input(name=name, data=data, strict=options.strict, tally=tally, limits=limits)
    if not tally.problems and tally.total == 0:
        found = "no LLMService or InferenceRuntime found" if tally.skipped else "no documents found"
        tally.problems.append(documents.Problem(source=", ".join(options.files), message=found))
    return _verdict(tally=tally, quiet=options.quiet, out=out)


def crds_main(argv: list[str], *, stdout: TextIO | None = None) -> int:
    """Print the CRDs, or write them into a directory with ``-o``."""
    parser = argparse.ArgumentParser(prog="noctaya crds", description="Print the CustomResourceDefinitions.")
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        type=pathlib.Path,
        help="write one file per CRD into DIR (default: print them to stdout)",
    )
    options = parser.parse_args(argv)
    out = stdout if stdout is not None else sys.stdout
    if options.output is None:
        out.write(crds.to_yaml(crds.crds()))
        return 0
    try:
        written = crds.write(options.output)
    except OSError as exc:
        print(f"noctaya crds: cannot write to {options.output}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    for path in written:
        print(path, file=out)
    return 0
