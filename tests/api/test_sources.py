"""Model source URIs.

Aspects:
- each accepted form parses into its typed source: hub (``hf://``, ``huggingface://``,
  ``modelscope://``, with or without ``@revision``), OCI (registry with port, nested repository,
  digest), PVC (claim, optional subpath); ``str()`` prints the canonical URI, which parses back equal;
- refusals name the wrong part: unknown or missing scheme, hub ids, revisions with ``..``, OCI tags
  (alone or next to a digest), digests that are not ``sha256:<64 lowercase hex>``, path traversal and
  empty or ``.`` segments in PVC subpaths, claims that are not PVC names;
- in an LLMService the URI is checked on parse and ``source.parsed`` gives the typed value;
- property: ``parse_source`` and the CRD's CEL rules (cel-python) accept exactly the same URIs, for
  URIs built from valid and invalid pieces and for arbitrary text, and never raise anything but
  ``SourceError``.
"""

from __future__ import annotations

import re

import celpy
import pytest
from celpy import adapter
from hypothesis import given
from hypothesis import strategies as st

from noctaya.api import llmservice, sources
from noctaya.api.sources import HubSource, OciSource, PvcSource

DIGEST = "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"


@pytest.mark.parametrize(
    ("uri", "parsed", "canonical"),
    [
        (
            "hf://Qwen/Qwen2.5-7B-Instruct",
            HubSource(hub="huggingface", org="Qwen", name="Qwen2.5-7B-Instruct"),
            None,
        ),
        (
            "huggingface://meta-llama/Llama-3.1-8B@main",
            HubSource(hub="huggingface", org="meta-llama", name="Llama-3.1-8B", revision="main"),
            "hf://meta-llama/Llama-3.1-8B@main",
        ),
        (
            "hf://org/name@refs/pr/1",
            HubSource(hub="huggingface", org="org", name="name", revision="refs/pr/1"),
            None,
        ),
        (
            "modelscope://qwen/Qwen2-7B@v1.0",
            HubSource(hub="modelscope", org="qwen", name="Qwen2-7B", revision="v1.0"),
            None,
        ),
        (
            f"oci://ghcr.io/acme/models/llama@{DIGEST}",
            OciSource(registry="ghcr.io", repository="acme/models/llama", digest=DIGEST),
            None,
        ),
        (
            f"oci://localhost:5000/m@{DIGEST}",
            OciSource(registry="localhost:5000", repository="m", digest=DIGEST),
            None,
        ),
        ("pvc://models", PvcSource(claim="models"), None),
        (
            "pvc://shared.models/qwen/7b-instruct",
            PvcSource(claim="shared.models", subpath="qwen/7b-instruct"),
            None,
        ),
        ("pvc://models/v1..2", PvcSource(claim="models", subpath="v1..2"), None),
    ],
)
def test_accepted_forms(uri: str, parsed: sources.ModelSource, canonical: str | None) -> None:
    assert sources.parse_source(uri) == parsed
    assert str(parsed) == (canonical or uri)
    assert sources.parse_source(str(parsed)) == parsed


def test_views() -> None:
    assert sources.parse_source("hf://a/b").repo_id == "a/b"  # type: ignore[union-attr]
    oci = sources.parse_source(f"oci://ghcr.io/a/b@{DIGEST}")
    assert isinstance(oci, OciSource) and oci.reference == f"ghcr.io/a/b@{DIGEST}"


@pytest.mark.parametrize(
    ("uri", "fragment"),
    [
        ("Qwen/Qwen2.5-7B", "expected hf://org/name"),
        ("s3://bucket/model", "unsupported model source scheme 's3'"),
        ("hf://Qwen2.5-7B", "a hub source is <scheme>://<org>/<name>[@<revision>]"),
        ("hf://a/b/c", "a hub source is"),
        ("hf:///b", "organization ''"),
        ("hf://a--b/c", "organization 'a--b'"),
        ("hf://a/b..c", "model name 'b..c'"),
        ("hf://a/-b", "model name '-b'"),
        ("hf://a/" + "b" * 97, "model name"),
        ("hf://a/b@", "revision ''"),
        ("hf://a/b@../x", "revision '../x'"),
        ("hf://a/b@x//y", "revision 'x//y'"),
        ("hf://a/b@x y", "revision 'x y'"),
        ("oci://ghcr.io/acme/model:latest", "tags are not accepted (tag 'latest')"),
        (f"oci://ghcr.io/acme/model:v1@{DIGEST}", "tags are not accepted (tag 'v1')"),
        ("oci://ghcr.io/acme/model", "must be pinned by digest"),
        ("oci://ghcr.io/acme/model@sha256:abc", "must be sha256:<64 lowercase hex characters>"),
        ("oci://ghcr.io/acme/model@" + DIGEST.upper(), "must be sha256:<64 lowercase hex characters>"),
        ("oci://ghcr.io/acme/model@md5:" + "a" * 32, "must be sha256"),
        ("oci://ghcr.io", "expected oci://<registry>/<repository>@sha256:<digest>"),
        (f"oci://ghcr.io/Acme/model@{DIGEST}", "repository component 'Acme'"),
        (f"oci://bad_host/a@{DIGEST}", "registry 'bad_host'"),
        ("pvc://models/../secrets", "without empty, '.' or '..' segments"),
        ("pvc://models/..", "without empty, '.' or '..' segments"),
        ("pvc://models/./x", "without empty, '.' or '..' segments"),
        ("pvc://models//x", "without empty, '.' or '..' segments"),
        ("pvc://models/", "without empty, '.' or '..' segments"),
        ("pvc://models/a\\b", "backslash or control character"),
        ("pvc://Models", "claim 'Models'"),
        ("pvc://", "claim ''"),
        ("hf://" + "a" * 3000, "longer than 2048"),
    ],
)
def test_refusals_name_the_wrong_part(uri: str, fragment: str) -> None:
    with pytest.raises(sources.SourceError, match=re.escape(fragment)):
        sources.parse_source(uri)


def test_non_strings_are_refused() -> None:
    with pytest.raises(sources.SourceError, match="must be a string"):
        sources.parse_source(5)  # type: ignore[arg-type]


def test_in_an_llmservice() -> None:
    ref = llmservice.ModelSourceRef.model_validate(
        {"uri": f"oci://ghcr.io/a/b@{DIGEST}", "secretRef": {"name": "r"}}
    )
    assert ref.parsed == OciSource(registry="ghcr.io", repository="a/b", digest=DIGEST)


_ENV = celpy.Environment()
_RULES = [_ENV.program(_ENV.compile(rule.rule)) for rule in sources.URI_RULES]
_SCHEME = re.compile(sources.URI_PATTERN)


def _crd_accepts(uri: str) -> bool:
    if len(uri) > sources.MAX_URI_LENGTH or not _SCHEME.match(uri):
        return False
    value = adapter.json_to_cel(uri)
    return all(bool(program.evaluate({"self": value})) for program in _RULES)


def _python_accepts(uri: str) -> bool:
    try:
        sources.parse_source(uri)
    except sources.SourceError:
        return False
    return True


_PIECES = st.sampled_from(
    ["a", "Qwen", "qwen2.5", "x-y", "x--y", "x_y", "..", ".", "", "A", "acme", "models", "7b", "v1", "-", "~"]
)
_SEP = st.sampled_from(["/", "/", "@", ":", "//", "\\"])


@st.composite
def _uris(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["hf", "huggingface", "modelscope", "oci", "pvc"]))
    parts = draw(st.lists(st.tuples(_PIECES, _SEP), min_size=1, max_size=5))
    body = "".join(p + s for p, s in parts)[:-1]
    if scheme == "oci" and draw(st.booleans()):
        body += "@" + draw(st.sampled_from([DIGEST, "sha256:abc", DIGEST.upper(), "latest"]))
    return f"{scheme}://{body}"


@given(_uris() | st.text(max_size=40).map(lambda t: "pvc://" + t) | st.text(max_size=40))
def test_parser_and_crd_rules_agree(uri: str) -> None:
    assert _python_accepts(uri) == _crd_accepts(uri), uri
