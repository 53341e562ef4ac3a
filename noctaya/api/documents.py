"""Hostile YAML in, typed objects or a complete list of problems out.

``load_yaml`` turns a byte stream into plain documents with a composer of its own on top of libyaml's
event parser (pure-Python events when libyaml is missing), so every resource it spends is bounded
and visible in ``Limits``:

- the stream's size (read no more than ``max_stream_bytes + 1`` bytes), each document's size, the
  number of documents;
- nesting depth (checked before descending, so no recursion error and no deep structure is built);
- aliases: at most ``max_aliases`` per document, and the document's *expanded* size (every alias
  counts the full size of what it points to) at most ``max_nodes`` — a "billion laughs" document is
  refused after a few hundred events, never expanded;
- only the YAML core tags (``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!map``,
  ``!!seq``) and merge keys; timestamps stay strings (as the API server sees them); duplicate keys
  and non-scalar keys are errors.

``check_documents`` then turns each document into an ``LLMService`` or ``InferenceRuntime`` (strict
JSON types, as the API server applies them: ``"5"`` is not an integer) and reports every problem with
the document's kind, namespace/name, field path, line and message. Unknown kinds and apiVersions are
problems too, never silently skipped.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

import pydantic
import yaml
from yaml import constructor, events, nodes, resolver

from noctaya.api import inferenceruntime, llmservice, meta

Resource = llmservice.LLMService | inferenceruntime.InferenceRuntime
Path = tuple[str | int, ...]

KINDS: Final[dict[str, type[Resource]]] = {
    llmservice.KIND: llmservice.LLMService,
    inferenceruntime.KIND: inferenceruntime.InferenceRuntime,
}
_DNS_SUBDOMAIN = re.compile(meta.DNS_SUBDOMAIN_PATTERN)
_LLMSERVICE_NAME = re.compile(llmservice.NAME_PATTERN)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Limits:
    """Bounds on what one stream may cost. The defaults fit any real manifest many times over."""

    max_stream_bytes: int = 8 * 1024 * 1024
    max_document_chars: int = 1_572_864  # etcd's default request limit (1.5 MiB)
    max_documents: int = 1000
    max_depth: int = 64
    max_aliases: int = 64
    max_nodes: int = 100_000


DEFAULT_LIMITS: Final = Limits()


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

    @property
    def ok(self) -> bool:
        return not self.problems


class DocumentError(ValueError):
    """Raised by ``load_resources`` when any document has problems; carries all of them."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


# ------------------------------------------------------------------------------------------- the reader
class _Refused(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message, self.line = message, line


_RESOLVER = resolver.Resolver()
_CONSTRUCTOR = constructor.SafeConstructor()
_SCALARS: Final = {
    "tag:yaml.org,2002:null": _CONSTRUCTOR.construct_yaml_null,
    "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
    "tag:yaml.org,2002:int": _CONSTRUCTOR.construct_yaml_int,
    "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float,
    "tag:yaml.org,2002:str": _CONSTRUCTOR.construct_yaml_str,
    "tag:yaml.org,2002:timestamp": _CONSTRUCTOR.construct_yaml_str,  # stays a string, as in the cluster
}
_MERGE = "tag:yaml.org,2002:merge"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_CLOSERS = (events.MappingEndEvent, events.SequenceEndEvent)


class _Composer:
    """Builds plain Python data from YAML events within ``Limits``; see the module docstring."""

    def __init__(self, stream: Iterator[events.Event], limits: Limits) -> None:
        self._events = stream
        self._limits = limits
        self._anchors: dict[str, tuple[Any, int]] = {}
        self._aliases = 0
        self._nodes = 0
        self._doc_start = 0
        self.lines: dict[Path, int] = {}
        #: Documents started so far (the position of the one being read, 1-based).
        self.started = 0

    def _next(self) -> events.Event:
        event = next(self._events)
        mark = event.start_mark
        if mark is not None and mark.index - self._doc_start > self._limits.max_document_chars:
            raise _Refused(f"document larger than {self._limits.max_document_chars} characters", None)
        return event

    def documents(self) -> Iterator[tuple[int, Any, dict[Path, int]]]:
        """Yield ``(line, data, lines)`` per document."""
        event = self._next()
        if not isinstance(event, events.StreamStartEvent):
            raise _Refused("not a YAML stream", None)
        while True:
            event = self._next()
            if isinstance(event, events.StreamEndEvent):
                return
            if not isinstance(event, events.DocumentStartEvent):
                raise _Refused("malformed YAML stream", _line(event))
            self.started += 1
            if self.started > self._limits.max_documents:
                raise _Refused(f"more than {self._limits.max_documents} documents", _line(event))
            self._anchors, self._aliases, self._nodes, self.lines = {}, 0, 0, {}
            self._doc_start = event.start_mark.index if event.start_mark is not None else 0
            root = self._next()
            start = _line(root) or 1
            data = self._node(root, (), 1)
            end = self._next()
            if not isinstance(end, events.DocumentEndEvent):
                raise _Refused("malformed YAML document", _line(end))
            yield start, data, self.lines

    def _count(self, amount: int, event: events.Event) -> None:
        self._nodes += amount
        if self._nodes > self._limits.max_nodes:
            raise _Refused(
                f"document expands to more than {self._limits.max_nodes} values (aliases included)",
                _line(event),
            )

    def _node(self, event: events.Event, path: Path, depth: int) -> Any:
        if depth > self._limits.max_depth:
            raise _Refused(f"nesting deeper than {self._limits.max_depth} levels", _line(event))
        if isinstance(event, events.AliasEvent):
            self._aliases += 1
            if self._aliases > self._limits.max_aliases:
                raise _Refused(f"more than {self._limits.max_aliases} aliases in one document", _line(event))
            if event.anchor not in self._anchors:
                raise _Refused(f"alias *{event.anchor} refers to no (complete) anchor", _line(event))
            value, size = self._anchors[event.anchor]
            self._count(size, event)
            return value
        before = self._nodes
        self._count(1, event)
        if isinstance(event, events.ScalarEvent):
            value = self._scalar(event)
        elif isinstance(event, events.MappingStartEvent):
            if event.tag not in (None, "!", _MAP):
                raise _Refused(f"unsupported tag {event.tag} on a mapping", _line(event))
            value = self._mapping(path, depth)
        elif isinstance(event, events.SequenceStartEvent):
            if event.tag not in (None, "!", _SEQ):
                raise _Refused(f"unsupported tag {event.tag} on a sequence", _line(event))
            value = [self._node(e, (*path, i), depth + 1) for i, e in enumerate(self._until_end())]
        else:
            raise _Refused("malformed YAML node", _line(event))
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._anchors[anchor] = (value, self._nodes - before)
        return value

    def _until_end(self) -> Iterator[events.Event]:
        while not isinstance(event := self._next(), _CLOSERS):
            yield event

    def _scalar(self, event: events.ScalarEvent) -> Any:
        tag = event.tag
        if tag is None:
            tag = _RESOLVER.resolve(nodes.ScalarNode, event.value, event.implicit)  # type: ignore[no-untyped-call]
        elif tag == "!":
            tag = "tag:yaml.org,2002:str"
        if tag == _MERGE:
            return _MergeKey()
        build = _SCALARS.get(tag)
        if build is None:
            raise _Refused(f"unsupported tag {tag}", _line(event))
        try:
            return build(nodes.ScalarNode(tag, event.value))
        except Exception as exc:  # PyYAML's scalar constructors raise IndexError etc. on odd input
            raise _Refused(
                f"invalid {tag.rsplit(':', 1)[-1]} {event.value[:40]!r}: {exc}", _line(event)
            ) from None

    def _mapping(self, path: Path, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        explicit: set[str] = set()
        for key_event in self._until_end():
            key = self._node(key_event, path, depth + 1)
            value_event = self._next()
            if isinstance(key, _MergeKey):
                merged = self._node(value_event, path, depth + 1)
                for source in merged if isinstance(merged, list) else [merged]:
                    if not isinstance(source, dict):
                        raise _Refused(
                            "a merge key (<<) takes a mapping or a list of mappings", _line(key_event)
                        )
                    for k, v in source.items():
                        if k not in explicit:
                            result[k] = v
                continue
            if isinstance(key, dict | list):
                raise _Refused("mapping keys must be scalars", _line(key_event))
            name = _key_text(key)
            if name in explicit:
                raise _Refused(f"duplicate key {name!r}", _line(key_event))
            explicit.add(name)
            self.lines[(*path, name)] = _line(key_event) or 0
            result[name] = self._node(value_event, (*path, name), depth + 1)
        return result


class _MergeKey:
    """The YAML merge key ``<<``."""


def _key_text(key: Any) -> str:
    """A mapping key as the API server sees it after YAML-to-JSON conversion."""
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _line(event: events.Event) -> int | None:
    return event.start_mark.line + 1 if event.start_mark is not None else None


def _decode(data: bytes | str) -> str:
    if isinstance(data, str):
        text = data
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16")
    else:
        if b"\x00" in data:
            raise _Refused("binary data (NUL bytes), not YAML text", None)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _Refused(f"not UTF-8 text (invalid byte at offset {exc.start})", None) from None
    if "\x00" in text:
        raise _Refused("binary data (NUL characters), not YAML text", None)
    return text


def _parser() -> type[yaml.SafeLoader]:
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


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
    composer: _Composer | None = None

    def position() -> int | None:
        return composer.started or None if composer is not None else None

    try:
        text = _decode(data)
        composer = _Composer(yaml.parse(text, Loader=_parser()), limits)
        for line, value, lines in composer.documents():
            if value is not None:
                documents.append(
                    Document(source=source, index=composer.started, line=line, data=value, lines=lines)
                )
    except _Refused as exc:
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


def _message(error: Any) -> str:
    kind = error["type"]
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

    def done(kind: str | None, name: str | None, obj: Resource | None) -> Checked:
        return Checked(document=document, kind=kind, name=name, obj=obj, problems=tuple(problems))

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
    if model is None:
        report(
            f"unknown kind {shown_kind!r} (apiVersion {api_version!r}): expected LLMService or "
            f"InferenceRuntime in {meta.API_VERSION}",
            ("kind",),
            kind=shown_kind,
            name=shown_name,
        )
        return done(shown_kind, shown_name, None)
    if api_version != meta.API_VERSION:
        report(
            f"unsupported apiVersion {api_version!r} for {shown_kind}: expected {meta.API_VERSION!r}",
            ("apiVersion",),
            kind=shown_kind,
            name=shown_name,
        )
        return done(shown_kind, shown_name, None)
    obj: Resource | None = None
    try:
        obj = model.model_validate_json(json.dumps(data, allow_nan=False), strict=True)
    except ValueError as exc:  # json: NaN/Infinity; pydantic.ValidationError is a ValueError too
        if isinstance(exc, pydantic.ValidationError):
            for error in exc.errors(include_url=False):
                report(_message(error), tuple(error["loc"]), kind=shown_kind, name=shown_name)
        else:
            report(f"not representable as JSON: {exc}", kind=shown_kind, name=shown_name)
    for message, loc in _metadata_problems(shown_kind, data):
        report(message, loc, kind=shown_kind, name=shown_name)
    if obj is not None:
        for reserved in obj.reserved_field_problems():
            loc = tuple(reserved.path.split("."))
            report(reserved.message, loc, kind=shown_kind, name=shown_name)
    return done(shown_kind, shown_name, obj if not problems else None)


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
