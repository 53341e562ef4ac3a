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
import pathlib
import sys
from typing import BinaryIO, TextIO

from noctaya.api import crds, documents


def _read(stream: BinaryIO, limit: int) -> bytes:
    return stream.read(limit + 1)


def validate_main(argv: list[str], *, stdin: BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Validate documents; 0 when all are valid, 1 when any problem was found, 2 on usage errors."""
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
    options = parser.parse_args(argv)
    out = stdout if stdout is not None else sys.stdout
    limits = documents.DEFAULT_LIMITS
    problems: list[documents.Problem] = []
    kinds: collections.Counter[str] = collections.Counter()
    total = files = skipped = 0
    notes: list[str] = []
    stdin_used = False
    for name, path, error in documents.input_files(options.files, stdin=True):
        if error is not None:
            problems.append(documents.Problem(source=name, message=error))
            continue
        files += 1
        try:
            if path is None:
                if stdin_used:
                    problems.append(documents.Problem(source=name, message="stdin given more than once"))
                    continue
                stdin_used = True
                data = _read(stdin if stdin is not None else sys.stdin.buffer, limits.max_stream_bytes)
            else:
                with path.open("rb") as handle:
                    data = _read(handle, limits.max_stream_bytes)
        except OSError as exc:
            problems.append(documents.Problem(source=name, message=f"cannot read: {exc.strerror or exc}"))
            continue
        checked, stream_problems = documents.check_stream(data, source=name, limits=limits)
        in_file: list[documents.Problem] = []
        for result in checked:
            if result.foreign and not options.strict:
                skipped += 1
                version = result.api_version or "no apiVersion"
                notes.append(
                    f"{name}:{result.document.line_of(('kind',))}: skipped {result.kind}"
                    f"{' ' + result.name if result.name else ''} ({version}): not a Noctaya kind "
                    "(--strict refuses it)"
                )
                continue
            total += 1
            in_file.extend(result.problems)
            if result.ok and result.kind:
                kinds[result.kind] += 1
        # one file's problems in line order (a stream problem without a line first)
        problems.extend(sorted([*in_file, *stream_problems], key=lambda p: p.line or 0))
    if not problems and total == 0:
        found = "no LLMService or InferenceRuntime found" if skipped else "no documents found"
        problems.append(documents.Problem(source=", ".join(options.files), message=found))
    if not options.quiet:
        for note in notes:
            print(note, file=out)
    for problem in problems:
        print(problem, file=out)
    if problems:
        if not options.quiet:
            print(f"{len(problems)} problem(s) found in {files} file(s)", file=out)
        return 1
    if not options.quiet:
        counted = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        extra = f"; {skipped} of other APIs skipped" if skipped else ""
        print(f"{total} document(s) valid ({counted}) in {files} file(s){extra}", file=out)
    return 0


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
