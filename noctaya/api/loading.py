"""A bounded YAML reader: plain data from hostile text, every resource it spends bounded by ``Limits``.

It is a composer of its own on top of libyaml's event parser (PyYAML's pure-Python events when
libyaml is missing), so nothing is expanded, nested or read past a bound before it is checked:

- the stream's size (callers read no more than ``max_stream_bytes + 1`` bytes), each document's size
  (checked at every event, so a 10 MB document stops at the bound), the number of documents;
- nesting depth (checked before descending: no recursion error, no deep structure built);
- aliases: at most ``max_aliases`` per document, and the document's *expanded* size (every alias
  counts the full size of what it points to) at most ``max_nodes`` — a "billion laughs" document is
  refused after a few hundred events, never expanded; an alias to an unfinished anchor (a cycle) is
  refused;
- only the YAML core tags (``!!str``, ``!!int``, ``!!float``, ``!!bool``, ``!!null``, ``!!map``,
  ``!!seq``) and merge keys (``<<``); timestamps stay strings (as the API server sees them);
  duplicate keys and non-scalar keys are errors; other scalar keys become strings, as in the
  YAML-to-JSON conversion the API server applies.

``Composer.documents()`` yields each document's data and the line of every mapping key, for messages;
anything refused raises ``Refused`` with a message and a line.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, Final

import yaml
from yaml import constructor, events, nodes, resolver

Path = tuple[str | int, ...]


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


class Refused(Exception):
    """Input refused: a message for the user and the line it concerns, when known."""

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


class Composer:
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
            raise Refused(f"document larger than {self._limits.max_document_chars} characters", None)
        return event

    def documents(self) -> Iterator[tuple[int, Any, dict[Path, int]]]:
        """Yield ``(line, data, lines)`` per document."""
        event = self._next()
        if not isinstance(event, events.StreamStartEvent):
            raise Refused("not a YAML stream", None)
        while True:
            event = self._next()
            if isinstance(event, events.StreamEndEvent):
                return
            if not isinstance(event, events.DocumentStartEvent):
                raise Refused("malformed YAML stream", _line(event))
            self.started += 1
            if self.started > self._limits.max_documents:
                raise Refused(f"more than {self._limits.max_documents} documents", _line(event))
            self._anchors, self._aliases, self._nodes, self.lines = {}, 0, 0, {}
            self._doc_start = event.start_mark.index if event.start_mark is not None else 0
            root = self._next()
            start = _line(root) or 1
            data = self._node(root, (), 1)
            end = self._next()
            if not isinstance(end, events.DocumentEndEvent):
                raise Refused("malformed YAML document", _line(end))
            yield start, data, self.lines

    def _count(self, amount: int, event: events.Event) -> None:
        self._nodes += amount
        if self._nodes > self._limits.max_nodes:
            raise Refused(
                f"document expands to more than {self._limits.max_nodes} values (aliases included)",
                _line(event),
            )

    def _node(self, event: events.Event, path: Path, depth: int) -> Any:
        if depth > self._limits.max_depth:
            raise Refused(f"nesting deeper than {self._limits.max_depth} levels", _line(event))
        if isinstance(event, events.AliasEvent):
            self._aliases += 1
            if self._aliases > self._limits.max_aliases:
                raise Refused(f"more than {self._limits.max_aliases} aliases in one document", _line(event))
            if event.anchor not in self._anchors:
                raise Refused(f"alias *{event.anchor} refers to no (complete) anchor", _line(event))
            value, size = self._anchors[event.anchor]
            self._count(size, event)
            return value
        before = self._nodes
        self._count(1, event)
        if isinstance(event, events.ScalarEvent):
            value = self._scalar(event)
        elif isinstance(event, events.MappingStartEvent):
            if event.tag not in (None, "!", _MAP):
                raise Refused(f"unsupported tag {event.tag} on a mapping", _line(event))
            value = self._mapping(path, depth)
        elif isinstance(event, events.SequenceStartEvent):
            if event.tag not in (None, "!", _SEQ):
                raise Refused(f"unsupported tag {event.tag} on a sequence", _line(event))
            value = [self._node(e, (*path, i), depth + 1) for i, e in enumerate(self._until_end())]
        else:
            raise Refused("malformed YAML node", _line(event))
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
            raise Refused(f"unsupported tag {tag}", _line(event))
        try:
            return build(nodes.ScalarNode(tag, event.value))
        except Exception as exc:  # PyYAML's scalar constructors raise IndexError etc. on odd input
            raise Refused(
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
                        raise Refused(
                            "a merge key (<<) takes a mapping or a list of mappings", _line(key_event)
                        )
                    for k, v in source.items():
                        if k not in explicit:
                            result[k] = v
                continue
            if isinstance(key, dict | list):
                raise Refused("mapping keys must be scalars", _line(key_event))
            name = _key_text(key)
            if name in explicit:
                raise Refused(f"duplicate key {name!r}", _line(key_event))
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


def decode(data: bytes | str) -> str:
    if isinstance(data, str):
        text = data
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise Refused(f"not UTF-16 text (invalid data at offset {exc.start})", None) from None
    else:
        if b"\x00" in data:
            raise Refused("binary data (NUL bytes), not YAML text", None)
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise Refused(f"not UTF-8 text (invalid byte at offset {exc.start})", None) from None
    if "\x00" in text:
        raise Refused("binary data (NUL characters), not YAML text", None)
    return text


def parser() -> type[yaml.SafeLoader]:
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader
