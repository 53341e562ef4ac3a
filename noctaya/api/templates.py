"""Placeholders in runtime arguments and environment values.

An InferenceRuntime's ``container.args`` and literal ``env[].value`` may contain Go-template actions,
and exactly three: ``{{ .Model.Path }}``, ``{{ .Service.Name }}``, ``{{ .Service.Namespace }}`` (space
inside the braces optional, ``{{.Model.Path}}`` is the same). Any other action — an unknown field, a
pipeline, a trim marker ``{{-``, an unclosed ``{{`` — is an error naming it, so a runtime never
renders half-substituted arguments.

``VALID_PATTERN`` is one regular expression that matches exactly the strings this module accepts; the
CRD uses it in a CEL ``matches()`` rule, so the API server refuses what ``check_template`` refuses.
"""

from __future__ import annotations

import re
from typing import Final

#: Placeholder (the dotted field inside the braces) -> what it is replaced with.
PLACEHOLDERS: Final[dict[str, str]] = {
    ".Model.Path": "the directory the model weights are served from",
    ".Service.Name": "the LLMService name",
    ".Service.Namespace": "the LLMService namespace",
}
#: The Go-template whitespace allowed around a placeholder inside the braces.
_WS = r"[ \t\r\n]*"
_ALLOWED = "|".join(re.escape(p) for p in PLACEHOLDERS)
#: Strings made of plain text and allowed placeholders only (used verbatim by the CRD's CEL rule).
VALID_PATTERN: Final = r"^([^{]|\{[^{]|\{$|\{\{" + _WS + r"(" + _ALLOWED + r")" + _WS + r"\}\})*$"
_VALID = re.compile(VALID_PATTERN)
_ACTION = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_PLACEHOLDER = re.compile(r"\{\{" + _WS + r"(" + _ALLOWED + r")" + _WS + r"\}\}")
#: The longest action text quoted back in an error message.
_QUOTE_LIMIT: Final = 60


class TemplateError(ValueError):
    """A template uses something other than the allowed placeholders."""


def allowed() -> str:
    """The allowed placeholders, for messages."""
    return ", ".join(f"{{{{ {p} }}}}" for p in PLACEHOLDERS)


def check_template(text: str) -> None:
    """Raise ``TemplateError`` naming the first action that is not an allowed placeholder."""
    if _VALID.fullmatch(text):
        return
    for match in _ACTION.finditer(text):
        inner = match.group(1)
        if inner.strip(" \t\r\n") not in PLACEHOLDERS:
            raise TemplateError(f"unknown placeholder {_quote(match.group(0))}; allowed: {allowed()}")
    opening = text.find("{{")
    unclosed = text[opening:] if opening >= 0 else text
    for match in _ACTION.finditer(text):  # an action containing '{{' was opened twice
        if "{{" in match.group(1):
            unclosed = match.group(0)
            break
    raise TemplateError(f"unclosed or malformed placeholder {_quote(unclosed)}; allowed: {allowed()}")


def render_template(text: str, *, model_path: str, service_name: str, service_namespace: str) -> str:
    """Substitute the placeholders; ``TemplateError`` when ``text`` uses anything else."""
    check_template(text)
    values = {
        ".Model.Path": model_path,
        ".Service.Name": service_name,
        ".Service.Namespace": service_namespace,
    }
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def _quote(action: str) -> str:
    if len(action) > _QUOTE_LIMIT:
        action = action[: _QUOTE_LIMIT - 3] + "..."
    return repr(action)
