"""Every ``<Family>Props`` field is documented as cdk8s-plus documents its props.

Aspects: every field of every Props class the package exports has a ``#:`` comment right above it
that says what it is and ends with its default (``Default: …``) or ``Required.``; a field said to be
required has no default, and a number or flag default is documented as that literal or as the
module constant that holds it.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap

import pytest

import noctaya.constructs

PROPS = [getattr(noctaya.constructs, name) for name in noctaya.constructs.__all__ if name.endswith("Props")]


def documented(props: type) -> dict[str, str]:
    """Each field's ``#:`` comment, joined into one line."""
    source = textwrap.dedent(inspect.getsource(props)).splitlines()
    (node,) = ast.parse("\n".join(source)).body
    assert isinstance(node, ast.ClassDef)
    docs = {}
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            line = item.lineno - 1
            comment: list[str] = []
            while line > 0 and source[line - 1].strip().startswith("#:"):
                line -= 1
                comment.insert(0, source[line].strip().removeprefix("#:").strip())
            docs[item.target.id] = " ".join(comment)
    return docs


@pytest.mark.parametrize("props", PROPS, ids=lambda props: props.__name__)
def test_every_field_says_what_it_is_and_its_default(props: type) -> None:
    docs = documented(props)
    for field in dataclasses.fields(props):
        doc = docs[field.name]
        required = field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
        assert doc.endswith("Required." if required else "."), (props.__name__, field.name, doc)
        if required:
            continue
        assert "Default: " in doc, (props.__name__, field.name, doc)
        said = doc.rpartition("Default: ")[2].removesuffix(".").strip("`")
        if isinstance(field.default, bool | int | float):
            # the literal, or a module constant of that value
            value = getattr(inspect.getmodule(props), said, None) if said.isupper() else said
            shown = value if said.isupper() else said
            assert shown in (field.default, repr(field.default)), (props.__name__, field.name, doc)
