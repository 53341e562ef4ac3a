"""Manifest files: the YAML form of rendered objects, byte-identical for identical input.

Objects keep the key order cdk8s gives them (sorted); multi-line strings (config files, scripts) are
written as literal blocks so they read like the files they become; no anchors or aliases; every file
ends with a newline. Files are written atomically (temporary file, then rename) and only when their
content changed, so a re-render leaves timestamps of unchanged files alone.
"""

from __future__ import annotations

import os
import pathlib
import tempfile
from collections.abc import Iterable, Mapping
from typing import Any

import yaml


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def to_yaml(objects: Iterable[Mapping[str, Any]]) -> str:
    """Multi-document YAML of ``objects`` in their order."""
    return yaml.dump_all(
        [dict(o) for o in objects], Dumper=_Dumper, sort_keys=False, width=1 << 16, allow_unicode=True
    )


def write(path: pathlib.Path, text: str) -> bool:
    """Write ``text`` to ``path`` atomically; ``False`` when the file already held exactly that."""
    try:
        if path.read_text(encoding="utf-8") == text:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    return True
