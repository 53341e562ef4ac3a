"""Reading config files and reporting what is wrong with them.

Files are YAML or JSON mappings in regular files (``files.read_regular``: a FIFO or a device in its
place is refused, never waited on), at most ``MAX_CONFIG_BYTES`` long and ``MAX_DEPTH`` deep (a deeper
document is refused before it is parsed, so no recursion limit is ever reached). An unusable file
raises :class:`ConfigError`, whose message has one line per problem, each naming the field by its
file key (``maxQueue: Input should be greater than or equal to 1``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, TypeVar

import pydantic
import yaml

from noctaya.contract import files

MAX_CONFIG_BYTES: Final = 1 << 20
MAX_DEPTH: Final = 32

ModelT = TypeVar("ModelT", bound=pydantic.BaseModel)


class ConfigError(Exception):
    """The configuration is unusable; the message is meant for a person and names the field."""


def dotted(location: tuple[int | str, ...]) -> str:
    """A problem's location as its file key path (``scaler.tls.certFile``, ``coldRoutes.0.path``)."""
    return ".".join(str(part) for part in location)


def describe_errors(
    error: pydantic.ValidationError,
    *,
    where: Callable[[tuple[int | str, ...]], str] = dotted,
    separator: str = "\n",
) -> str:
    """One line per problem (joined by ``separator``), each naming the field: by its file key
    (``coldStartMode: ...``) unless ``where`` names a location otherwise (a flag, a spec field);
    pydantic's ``Value error, `` prefix dropped. A problem with no location (a cross-field rule,
    which names its fields itself) is its message alone."""
    lines = []
    for item in error.errors():
        named = where(tuple(item["loc"])) if item["loc"] else ""
        message = item["msg"].removeprefix("Value error, ")
        lines.append(f"{named}: {message}" if named else message)
    return separator.join(lines)


def _json_depth(raw: bytes) -> int:
    """Deepest bracket nesting of a JSON text, outside strings."""
    depth = deepest = 0
    in_string = escaped = False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        elif byte in b"]}":
            depth -= 1
    return deepest


def _yaml_depth(raw: bytes) -> int:
    """Collection nesting of a YAML stream, from parser events (no recursion); stops reading as soon
    as it passes ``MAX_DEPTH``, so a hostile document costs no more than a legal one."""
    depth = 0
    for event in yaml.parse(raw, Loader=_LOADER):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                return depth
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return 0


_LOADER: Final[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_document(path: str | Path) -> dict[str, Any]:
    """Read a YAML or JSON mapping (bounded in size and depth) from ``path``."""
    try:
        raw = files.read_regular(path, limit=MAX_CONFIG_BYTES)
    except files.FileProblem as exc:
        raise ConfigError(f"{path}: {exc}") from None
    return parse_document(raw, name=str(path))


def parse_document(raw: bytes, *, name: str) -> dict[str, Any]:
    """Parse bytes already read (JSON when ``name`` ends in ``.json``, else YAML)."""
    is_json = name.endswith(".json")
    try:
        if (_json_depth(raw) if is_json else _yaml_depth(raw)) > MAX_DEPTH:
            raise ConfigError(f"{name}: nested deeper than {MAX_DEPTH} levels")
        document = json.loads(raw) if is_json else yaml.load(raw, Loader=_LOADER)
    except (ValueError, yaml.YAMLError, RecursionError) as exc:
        raise ConfigError(f"{name}: not valid YAML/JSON: {exc}") from None
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise ConfigError(f"{name}: expected a mapping at the top level, got {type(document).__name__}")
    return document


def build(model: type[ModelT], document: dict[str, Any]) -> ModelT:
    """Validate a mapping (file keys) into ``model``; :class:`ConfigError` names every bad field."""
    try:
        return model.model_validate(document)
    except pydantic.ValidationError as exc:
        raise ConfigError(describe_errors(exc)) from None
