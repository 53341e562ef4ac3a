"""Hostile YAML in, typed objects or a complete list of problems out.

``load_yaml`` reads a stream into plain documents with the bounded reader of ``noctaya.api.loading``
(sizes, document count, depth, aliases and their expansion, tags: all bounded by ``Limits``), turning
anything it refuses into a ``Problem`` with the document's position and line.

``check_document`` / ``check_stream`` then turn each document into an ``LLMService`` or
``InferenceRuntime`` (strict JSON types, as the API server applies them: ``"5"`` is not an integer)
and report every problem with the document's kind, namespace/name, field path, line and message:
model errors, metadata rules (names; InferenceRuntime is cluster-scoped) and reserved fields. Unknown
kinds and apiVersions are problems too, never silently skipped; a document of another API (a kind that
is not ours, or an apiVersion of another group) is also marked ``foreign``, which ``noctaya validate``
reports as skipped unless ``--strict``. A missing apiVersion is named as missing. Cross-field rules
are reported next to field errors (see ``noctaya.api.rules``).

``load_resources`` is the one-call form for tools: the objects, or ``DocumentError`` with all problems;
``input_files`` expands the files and directories a command line names (``noctaya validate`` / ``synth``).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import pathlib
import re
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Final

import pydantic
import yaml

from noctaya.api import inferenceruntime, llmservice, loading, meta

Resource = llmservice.LLMService | inferenceruntime.InferenceRuntime
Path = loading.Path

KINDS: Final[dict[str, type[Resource]]] = {
    llmservice.KIND: llmservice.LLMService,
    inferenceruntime.KIND: inferenceruntime.InferenceRuntime,
}
_DNS_SUBDOMAIN = re.compile(meta.DNS_SUBDOMAIN_PATTERN)
_LLMSERVICE_NAME = re.compile(llmservice.NAME_PATTERN)


Limits = loading.Limits
DEFAULT_LIMITS: Final = loading.DEFAULT_LIMITS


@dataclasses.dataclass(frozen=True, kw_only=True)
class Problem:
    """One thing wrong with one document (or with the stream, when ``document`` is None)."""

    source: str
    message: str
    document: int | None = None  # 1-based position in the stream
    line: int | None = None  # 1-based
    kind: str | None = None
    name: str | None = None  # "namespace/name" or "name"
    path: str = ""

    def __str__(self) -> str:
        where = self.source + (f":{self.line}" if self.line else "")
        if self.kind and self.name:
            subject = f"{self.kind} {self.name}"
        elif self.kind:
            subject = f"{self.kind} (document {self.document})"
        elif self.document is not None:
            subject = f"document {self.document}"
        else:
            subject = ""
        parts = [where, subject, self.path, self.message]
        return ": ".join(p for p in parts if p)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Document:
    """A parsed YAML document: plain data plus the line of every key, for messages."""

    source: str
    index: int
    line: int
    data: Any
    lines: Mapping[Path, int]

    def line_of(self, path: Path) -> int:
        """The line of the deepest key of ``path`` that exists in the document."""
        for end in range(len(path), 0, -1):
            line = self.lines.get(path[:end])
            if line is not None:
                return line
        return self.line


@dataclasses.dataclass(frozen=True, kw_only=True)
class Checked:
    """The outcome for one document: the object when it is valid, and all its problems."""

    document: Document
    kind: str | None
    name: str | None
    obj: Resource | None
    problems: tuple[Problem, ...]
    #: a document of another API (its kind is not ours, or its apiVersion names another group)
    foreign: bool = False
    api_version: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


class DocumentError(ValueError):
    """Raised by ``load_resources`` when any document has problems; carries all of them."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


#: How many files a directory argument may expand to.
MAX_FILES: Final = 10_000


def input_files(args: Sequence[str], *, stdin: bool) -> Iterator[tuple[str, pathlib.Path | None, str | None]]:
    """The files named on a command line: ``(name, path, error)`` per input, a directory expanded to the
    ``*.yaml`` / ``*.yml`` files below it (sorted, at most ``MAX_FILES``); with ``stdin``, ``-`` is
    standard input (path and error ``None``)."""
    for arg in args:
        if stdin and arg == "-":
            yield "<stdin>", None, None
            continue
        path = pathlib.Path(arg)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            if not found:
                yield arg, None, "directory holds no *.yaml or *.yml files"
            if len(found) > MAX_FILES:
                yield arg, None, f"directory holds more than {MAX_FILES} YAML files"
                continue
            for file in found:
                yield str(file), file, None
        elif path.is_file():
            yield arg, path, None
        elif path.exists():
            yield arg, None, "not a regular file"
        else:
            yield arg, None, "no such file or directory"


def load_yaml(
    data: bytes | str, *, source: str, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[Document], list[Problem]]:
    """Parse a YAML stream within ``limits``: the documents read, and the problem that stopped it, if any.

    Empty documents (a lone ``---``, comments only) are skipped but keep their position number.
    """
    documents: list[Document] = []
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > limits.max_stream_bytes:
        return [], [Problem(source=source, message=f"input larger than {limits.max_stream_bytes} bytes")]
    composer: loading.Composer | None = None

    def position() -> int | None:
        return composer.started or None if composer is not None else None

    try:
        text = loading.decode(data)
        composer = loading.Composer(yaml.parse(text, Loader=loading.parser()), limits)
        for line, value, lines in composer.documents():
            if value is not None:
                documents.append(
                    Document(source=source, index=composer.started, line=line, data=value, lines=lines)
                )
    except loading.Refused as exc:
        return documents, [Problem(source=source, message=exc.message, document=position(), line=exc.line)]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at: int | None = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        message = f"invalid YAML: {problem}" + (f" ({context})" if context else "")
        return documents, [Problem(source=source, message=message, document=position(), line=at)]
    except RecursionError:  # pragma: no cover - the depth bound comes first
        return documents, [Problem(source=source, message="nesting too deep", document=position())]
    return documents, []


# ------------------------------------------------------------------------------------------ the checker
def _render_path(loc: Path) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


_MESSAGES: Final = {
    "extra_forbidden": "unknown field",
    "missing": "required field is missing",
}


def _model_at(model: type[pydantic.BaseModel], loc: Path) -> type[pydantic.BaseModel] | None:
    """The model class a document holds at ``loc`` (field aliases and list indices), if it is one."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            args = [a for a in typing.get_args(current) if a is not type(None)]
            current = args[0] if typing.get_origin(current) in (list, tuple) and args else None
            continue
        if not (isinstance(current, type) and issubclass(current, pydantic.BaseModel)):
            return None
        field = next((f for n, f in current.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return None
        current = field.annotation
        while typing.get_origin(current) in (typing.Union, types.UnionType):
            models = [a for a in typing.get_args(current) if a is not type(None)]
            current = models[0] if len(models) == 1 else None
    return current if isinstance(current, type) and issubclass(current, pydantic.BaseModel) else None


def _suggestion(word: str, candidates: Sequence[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or nothing."""
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _message(error: Any, model: type[pydantic.BaseModel] | None = None) -> str:
    kind = error["type"]
    loc = tuple(error["loc"])
    if kind == "extra_forbidden" and model is not None and loc and isinstance(loc[-1], str):
        parent = _model_at(model, loc[:-1])
        known = [f.alias or n for n, f in parent.model_fields.items()] if parent else []
        return _MESSAGES[kind] + _suggestion(loc[-1], known)
    if kind in _MESSAGES:
        return _MESSAGES[kind]
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            return message[len(prefix) :]
    return message


def _identity(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return None, None
    name, namespace = metadata.get("name"), metadata.get("namespace")
    name = name if isinstance(name, str) and name else None
    namespace = namespace if isinstance(namespace, str) and namespace else None
    return name, namespace


def check_document(document: Document) -> Checked:
    """Validate one document as an LLMService or InferenceRuntime; every problem is reported."""
    data = document.data
    problems: list[Problem] = []

    def report(message: str, loc: Path = (), *, kind: str | None = None, name: str | None = None) -> None:
        problems.append(
            Problem(
                source=document.source,
                document=document.index,
                line=document.line_of(loc),
                kind=kind,
                name=name,
                path=_render_path(loc),
                message=message,
            )
        )

    def done(kind: str | None, name: str | None, obj: Resource | None, *, foreign: bool = False) -> Checked:
        shown = api_version if isinstance(api_version, str) else None
        return Checked(
            document=document,
            kind=kind,
            name=name,
            obj=obj,
            problems=tuple(sorted(problems, key=lambda p: p.line or 0)),
            foreign=foreign,
            api_version=shown,
        )

    api_version: Any = None

    if not isinstance(data, dict):
        report(f"a document must be a mapping with apiVersion and kind, got {_type_name(data)}")
        return done(None, None, None)
    api_version, kind = data.get("apiVersion"), data.get("kind")
    name, namespace = _identity(data)
    shown_kind = kind if isinstance(kind, str) and kind else None
    shown_name = f"{namespace}/{name}" if name and namespace and kind != inferenceruntime.KIND else name
    if shown_kind is None:
        report("kind is required (LLMService or InferenceRuntime)", ("kind",), name=shown_name)
        return done(None, shown_name, None)
    model = KINDS.get(shown_kind)
    group = api_version.split("/")[0] if isinstance(api_version, str) and "/" in api_version else None
    other_group = group is not None and group != meta.GROUP
    if model is None or other_group:
        where = f"apiVersion {api_version!r}" if api_version is not None else "no apiVersion"
        hint = _suggestion(shown_kind, list(KINDS)) if not other_group else ""
        report(
            f"unknown kind {shown_kind!r} ({where}): expected LLMService or InferenceRuntime in "
            f"{meta.API_VERSION}{hint}",
            ("kind",),
            kind=shown_kind,
            name=shown_name,
        )
        # a kind of our group (or a near miss of one of ours) is a mistake, never another API's document
        ours = group == meta.GROUP or bool(hint)
        return done(shown_kind, shown_name, None, foreign=not ours)
    version_problem = _version_problem(api_version=api_version, kind=shown_kind)
    if version_problem is not None:
        report(version_problem, ("apiVersion",), kind=shown_kind, name=shown_name)
        return done(shown_kind, shown_name, None)
    obj, found = _validated(model=model, data=data)
    for message, loc in [*found, *_metadata_problems(shown_kind, data), *_object_problems(obj=obj)]:
        report(message, loc, kind=shown_kind, name=shown_name)
    return done(shown_kind, shown_name, obj if not problems else None)


def _version_problem(*, api_version: Any, kind: str) -> str | None:
    """What is wrong with a document's apiVersion for one of our kinds, or ``None`` when it is ours."""
    if api_version is None:
        return f"apiVersion is missing: expected {meta.API_VERSION!r}"
    if api_version != meta.API_VERSION:
        return f"unsupported apiVersion {api_version!r} for {kind}: expected {meta.API_VERSION!r}"
    return None


def _validated(
    *, model: type[Resource], data: Mapping[str, Any]
) -> tuple[Resource | None, list[tuple[str, Path]]]:
    """The object the model makes of a document's data (``None`` when invalid), and the problems found."""
    try:
        return model.model_validate_json(json.dumps(data, allow_nan=False), strict=True), []
    except ValueError as exc:  # json: NaN/Infinity; pydantic.ValidationError is a ValueError too
        if isinstance(exc, pydantic.ValidationError):
            return None, [
                (_message(error, model), tuple(error["loc"])) for error in exc.errors(include_url=False)
            ]
        return None, [(f"not representable as JSON: {exc}", ())]


def _object_problems(*, obj: Resource | None) -> Iterator[tuple[str, Path]]:
    """The problems a valid object finds in itself: reserved fields, and an LLMService's gateway memory."""
    if obj is None:
        return
    found = obj.reserved_field_problems()
    if isinstance(obj, llmservice.LLMService):
        found += obj.gateway_memory_problems()
    for reserved in found:
        yield reserved.message, _parse_path(reserved.path)


def _parse_path(path: str) -> Path:
    """``spec.container.args[3]`` -> ``("spec", "container", "args", 3)``."""
    loc: list[str | int] = []
    for part in path.split("."):
        name, *indices = part.replace("]", "").split("[")
        loc.append(name)
        loc += [int(i) for i in indices if i.isdecimal()]
    return tuple(loc)


def _metadata_problems(kind: str, data: Mapping[str, Any]) -> Iterator[tuple[str, Path]]:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return  # reported by the model (required mapping)
    name = metadata.get("name")
    if not isinstance(name, str) or not name:
        if not metadata.get("generateName"):
            yield "metadata.name is required", ("metadata", "name")
        return
    if kind == llmservice.KIND:
        if len(name) > llmservice.MAX_NAME_LENGTH or not _LLMSERVICE_NAME.fullmatch(name):
            yield llmservice.NAME_RULE.message, ("metadata", "name")
    elif len(name) > 253 or not _DNS_SUBDOMAIN.fullmatch(name):
        yield (
            "metadata.name must be a DNS subdomain (lowercase letters, digits, '-' and '.')",
            ("metadata", "name"),
        )
    if kind == inferenceruntime.KIND and metadata.get("namespace"):
        yield (
            "InferenceRuntime is cluster-scoped: metadata.namespace must not be set",
            ("metadata", "namespace"),
        )


def _type_name(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return type(value).__name__


def check_stream(
    data: bytes | str, *, source: str, limits: Limits = DEFAULT_LIMITS
) -> tuple[list[Checked], list[Problem]]:
    """Load and check every document of a stream: per-document outcomes, and stream-level problems."""
    documents, stream_problems = load_yaml(data, source=source, limits=limits)
    return [check_document(d) for d in documents], stream_problems


def load_resources(data: bytes | str, *, source: str, limits: Limits = DEFAULT_LIMITS) -> list[Resource]:
    """All objects of a stream, or ``DocumentError`` with every problem of every document."""
    checked, problems = check_stream(data, source=source, limits=limits)
    problems = [p for c in checked for p in c.problems] + problems
    if problems:
        raise DocumentError(problems)
    return [c.obj for c in checked if c.obj is not None]
