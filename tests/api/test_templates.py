"""Runtime argument templates.

Aspects:
- the three placeholders are accepted with any inner whitespace (or none) and rendered; text with
  single braces, JSON, and stray ``}}`` is plain text;
- anything else is an error naming the offending action: unknown fields, pipelines, trim markers,
  unclosed or doubled braces; long actions are quoted shortened;
- properties: ``check_template`` accepts exactly ``VALID_PATTERN``'s language, the CRD's CEL rule
  (cel-python, ``matches``) agrees, rendering leaves no ``{{`` of a placeholder behind, and nothing but
  ``TemplateError`` is raised.
"""

from __future__ import annotations

import re

import celpy
import pytest
from celpy import adapter
from hypothesis import given
from hypothesis import strategies as st

from noctaya.api import inferenceruntime, templates

VALUES = {"model_path": "/models/qwen", "service_name": "qwen", "service_namespace": "ai"}


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("--model={{ .Model.Path }}", "--model=/models/qwen"),
        ("{{.Model.Path}}", "/models/qwen"),
        ("{{   .Service.Name\t}}.{{\n.Service.Namespace }}", "qwen.ai"),
        ("{{ .Service.Name }}-{{ .Service.Name }}", "qwen-qwen"),
        ("plain", "plain"),
        ('{"temperature": 0.7}', '{"temperature": 0.7}'),
        ("a{b}c", "a{b}c"),
        ("x{", "x{"),
        ("}}", "}}"),
        ("{{ .Model.Path }}}}", "/models/qwen}}"),
        ("", ""),
    ],
)
def test_allowed_placeholders_render(text: str, rendered: str) -> None:
    templates.check_template(text)
    assert templates.render_template(text, **VALUES) == rendered


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("{{ .Model.Name }}", "unknown placeholder '{{ .Model.Name }}'"),
        ("{{ .Values.x }}", "unknown placeholder '{{ .Values.x }}'"),
        ("{{- .Model.Path }}", "unknown placeholder '{{- .Model.Path }}'"),
        ("{{ .Model.Path -}}", "unknown placeholder '{{ .Model.Path -}}'"),
        ("{{ .Model.Path | quote }}", "unknown placeholder '{{ .Model.Path | quote }}'"),
        ("{{ }}", "unknown placeholder '{{ }}'"),
        ("{{model.path}}", "unknown placeholder '{{model.path}}'"),
        ("{{{ .Model.Path }}", "unknown placeholder '{{{ .Model.Path }}'"),
        ("--model={{ .Model.Path", "unclosed or malformed placeholder '{{ .Model.Path'"),
        ("{{", "unclosed or malformed placeholder '{{'"),
        ("{{ " + "x" * 100 + " }}", "..."),
    ],
)
def test_anything_else_is_an_error_naming_it(text: str, fragment: str) -> None:
    with pytest.raises(templates.TemplateError, match=re.escape(fragment)):
        templates.check_template(text)
    with pytest.raises(templates.TemplateError):
        templates.render_template(text, **VALUES)


def test_error_lists_the_allowed_placeholders() -> None:
    with pytest.raises(templates.TemplateError) as info:
        templates.check_template("{{ .X }}")
    assert str(info.value).endswith(
        "allowed: {{ .Model.Path }}, {{ .Service.Name }}, {{ .Service.Namespace }}"
    )
    assert set(templates.PLACEHOLDERS) == {".Model.Path", ".Service.Name", ".Service.Namespace"}


_ENV = celpy.Environment()
_RULE = _ENV.program(_ENV.compile(inferenceruntime.TEMPLATE_RULE.rule))
_VALID = re.compile(templates.VALID_PATTERN)
_TEXT = st.lists(
    st.sampled_from(
        [
            "{{",
            "}}",
            "{",
            "}",
            " ",
            "\t",
            ".Model.Path",
            ".Service.Name",
            ".Service.Namespace",
            ".Model",
            "-",
            "|",
            "x",
        ]
    ),
    max_size=8,
).map("".join)


@given(_TEXT | st.text(max_size=30))
def test_check_cel_and_pattern_agree(text: str) -> None:
    try:
        templates.check_template(text)
    except templates.TemplateError:
        accepted = False
    else:
        accepted = True
        assert "{{" not in templates.render_template(text, **VALUES)
    assert accepted == bool(_VALID.fullmatch(text))
    assert accepted == bool(_RULE.evaluate({"self": adapter.json_to_cel(text)}))
