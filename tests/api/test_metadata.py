"""Object metadata the API server would refuse is refused offline too (``noctaya validate``).

Aspects: label and annotation keys are qualified names (an optional DNS-subdomain prefix and ``/``,
then 1-63 characters of ``[A-Za-z0-9-_.]`` starting and ending alphanumeric); label values are at
most 63 such characters or empty; all annotations of an object together are at most 256 KiB; the
longest legal forms are accepted; each problem names the metadata field.
"""

from __future__ import annotations

import io
import pathlib
from typing import Any

import pytest
import yaml

from noctaya.api import command

VALID = pathlib.Path(__file__).parent / "data" / "valid" / "llmservice-minimal.yaml"


def validate(tmp_path: pathlib.Path, metadata: dict[str, Any]) -> tuple[int, str]:
    document = yaml.safe_load(VALID.read_text())
    document["metadata"].update(metadata)
    path = tmp_path / "doc.yaml"
    path.write_text(yaml.safe_dump(document))
    out = io.StringIO()
    return command.validate_main([str(path)], stdout=out), out.getvalue()


REFUSED = [
    ("label-key-with-space", {"labels": {"bad key!": "x"}}, "metadata.labels"),
    ("label-key-too-long", {"labels": {"k" * 64: "x"}}, "metadata.labels"),
    ("label-key-bad-prefix", {"labels": {"Bad_Prefix/k": "x"}}, "metadata.labels"),
    ("label-key-empty-name", {"labels": {"example.com/": "x"}}, "metadata.labels"),
    ("label-key-trailing-dash", {"labels": {"k-": "x"}}, "metadata.labels"),
    ("label-value-too-long", {"labels": {"k": "v" * 100}}, "metadata.labels"),
    ("label-value-bad-char", {"labels": {"k": "a b"}}, "metadata.labels"),
    ("label-value-newline", {"labels": {"k": "gw-legit-1\n"}}, "metadata.labels"),
    ("annotation-key-bad", {"annotations": {"bad key!": "x"}}, "metadata.annotations"),
    ("annotations-too-large", {"annotations": {"a": "x" * (1200 * 1024)}}, "metadata.annotations"),
    (
        "annotations-too-large-together",
        {"annotations": {f"k{i}": "x" * (64 * 1024) for i in range(5)}},
        "metadata.annotations",
    ),
]


@pytest.mark.parametrize(("name", "metadata", "field"), REFUSED, ids=[r[0] for r in REFUSED])
def test_metadata_the_api_server_refuses_is_refused(
    tmp_path: pathlib.Path, name: str, metadata: dict[str, Any], field: str
) -> None:
    status, out = validate(tmp_path, metadata)
    assert status == 1, out
    assert field in out, out


def test_the_longest_legal_metadata_is_accepted(tmp_path: pathlib.Path) -> None:
    prefix = ".".join(["a" * 63] * 3) + "." + "b" * 61  # 253 characters
    status, out = validate(
        tmp_path,
        {
            "labels": {f"{prefix}/{'n' * 63}": "v" * 63, "empty": "", "a.b_c-d": "A.b_c-9"},
            "annotations": {"example.com/notes": "x" * (256 * 1024 - 100)},
        },
    )
    assert len(prefix) == 253
    assert status == 0, out
