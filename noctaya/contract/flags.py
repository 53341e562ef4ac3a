"""Every setting is a flag: one naming rule and one help text for the command lines that take the
contract's settings (``noctaya gateway`` for every field of its file, ``noctaya dev`` for the
gateway's tunables).

A field's flag is its attribute path, each snake_case name with dashes for underscores, joined by
``-``: ``max_queue`` → ``--max-queue``, ``service.name`` → ``--service-name``, ``scaler.tls.cert_file``
→ ``--scaler-tls-cert-file``. Its help is the field's description and its default: ``required``,
``unset``, a duration in Go form, a structured value as the JSON the flag takes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pydantic
import pydantic.fields

from noctaya.contract import fields

_FIELD_DEFAULT: Any = object()


def flag(path: Sequence[str]) -> str:
    """The flag of the field at attribute ``path`` (``("scaler", "tls", "cert_file")``)."""
    return "--" + "-".join(name.replace("_", "-") for name in path)


def describe(field: pydantic.fields.FieldInfo, *, default: Any = _FIELD_DEFAULT) -> str:
    """The field's help: its description (or its file key) and ``default`` (the field's unless
    told), ready for argparse (``%`` escaped)."""
    text = field.description or f"config field {field.alias}"
    if default is _FIELD_DEFAULT:
        if field.is_required():
            return _escaped(f"{text} (no default: required)")
        default = field.default
    if default is None:
        return _escaped(f"{text} (default: unset)")
    return _escaped(f"{text} (default {_shown(default)})")


def _shown(default: Any) -> str:
    if isinstance(default, float):
        return fields.format_seconds(default)
    if isinstance(default, tuple | list):  # structured: shown as the JSON the flag takes
        return json.dumps(
            [
                item.model_dump(mode="json") if isinstance(item, pydantic.BaseModel) else item
                for item in default
            ]
        )
    return str(default)


def _escaped(text: str) -> str:
    return text.replace("%", "%%")
