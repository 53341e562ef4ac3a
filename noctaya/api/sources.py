"""Model source URIs (``spec.model.source.uri``) parsed into typed sources.

Accepted forms (anything else is an error that says which part is wrong):

- Hub: ``hf://<org>/<name>`` (alias ``huggingface://``) and ``modelscope://<org>/<name>``, optionally
  pinned to a revision with ``@<revision>`` — a branch, tag or commit: ``hf://Qwen/Qwen2.5-7B@main``,
  ``hf://org/name@refs/pr/1``. Org and name follow the hubs' repository-id rules (letters, digits,
  ``-``, ``_``, ``.``; no ``--`` or ``..``; at most 96 characters each).
- OCI artifact: ``oci://<registry>[:port]/<repository>@sha256:<64 lowercase hex>``. Only a digest pins
  content, so tags (``:latest``, ``:v1``) are refused, also next to a digest.
- PVC: ``pvc://<claim>[/<subpath>]``. The claim is a DNS subdomain; the subpath is relative, its
  segments non-empty and never ``.`` or ``..`` (no escaping the mount).

Each typed source prints back its canonical URI (``str(source)``); ``hf://`` is the canonical spelling
of a Hugging Face source.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Final, Literal

from noctaya.api import rules

#: Longest URI accepted (also the CRD's ``maxLength``).
MAX_URI_LENGTH: Final = 2048
#: The schemes the CRD's pattern lets through; the exact form is checked here.
SCHEMES: Final = ("hf", "huggingface", "modelscope", "oci", "pvc")
#: The CRD pattern: a known scheme followed by something.
URI_PATTERN: Final = r"^(hf|huggingface|modelscope|oci|pvc)://.+$"

# The pieces of every form, shared by the parser below and the CRD's CEL rules (RE2-compatible).
_HUB_SEGMENT_RE: Final = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?"
_REVISION_RE: Final = r"[A-Za-z0-9._-][A-Za-z0-9._/-]{0,254}"
_HOST_LABEL_RE: Final = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_REGISTRY_RE: Final = rf"{_HOST_LABEL_RE}(?:\.{_HOST_LABEL_RE})*(?::[0-9]{{1,5}})?"
_REPO_COMPONENT_RE: Final = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DIGEST_RE: Final = r"sha256:[0-9a-f]{64}"
_CLAIM_RE: Final = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*"
_PATH_SEGMENT_RE: Final = r"[^/\\\x00-\x1f\x7f]+"

#: Whole-URI patterns of each form (the CRD's CEL rules match these).
HUB_URI_PATTERN: Final = (
    rf"^(hf|huggingface|modelscope)://{_HUB_SEGMENT_RE}/{_HUB_SEGMENT_RE}(@{_REVISION_RE})?$"
)
OCI_URI_PATTERN: Final = rf"^oci://{_REGISTRY_RE}/{_REPO_COMPONENT_RE}(/{_REPO_COMPONENT_RE})*@{_DIGEST_RE}$"
PVC_URI_PATTERN: Final = rf"^pvc://{_CLAIM_RE}(/{_PATH_SEGMENT_RE})*$"

_HUB_SEGMENT = re.compile(_HUB_SEGMENT_RE)
_REVISION = re.compile(_REVISION_RE)
_REGISTRY = re.compile(_REGISTRY_RE)
_REPO_COMPONENT = re.compile(_REPO_COMPONENT_RE)
_DIGEST = re.compile(_DIGEST_RE)
_CLAIM = re.compile(_CLAIM_RE)
_PATH_SEGMENT = re.compile(_PATH_SEGMENT_RE)


#: The CEL rules the CRD puts on ``spec.model.source.uri``; ``parse_source`` refuses exactly what they
#: refuse (and says more precisely why).
URI_RULES: Final = (
    rules.Rule(
        rule="!self.matches('^(hf|huggingface|modelscope)://') || ("
        f"self.matches(r'{HUB_URI_PATTERN}') && !self.matches(r'^[^@]*--') && !self.contains('..') "
        "&& !self.matches(r'@.*(//|/$)'))",
        message="hub sources are hf://<org>/<name>[@<revision>] (or huggingface://, modelscope://); org and "
        "name are letters, digits, '-', '_' and '.', without '--' or '..'",
    ),
    rules.Rule(
        rule=f"!self.startsWith('oci://') || self.matches(r'{OCI_URI_PATTERN}')",
        message="oci:// sources are oci://<registry>/<repository>@sha256:<64 lowercase hex>; tags are not "
        "accepted",
    ),
    rules.Rule(
        rule=f"!self.startsWith('pvc://') || (self.matches(r'{PVC_URI_PATTERN}') "
        "&& !self.matches(r'/\\.\\.?(/|$)'))",
        message="pvc:// sources are pvc://<claim>[/<subpath>]; the subpath is relative, without '.', '..' "
        "or empty segments",
    ),
)


class SourceError(ValueError):
    """A model source URI that is not one of the accepted forms."""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class HubSource:
    """A model repository on a hub, optionally pinned to a revision (branch, tag or commit)."""

    hub: Literal["huggingface", "modelscope"]
    org: str
    name: str
    revision: str | None = None

    @property
    def repo_id(self) -> str:
        return f"{self.org}/{self.name}"

    def __str__(self) -> str:
        scheme = "hf" if self.hub == "huggingface" else "modelscope"
        return f"{scheme}://{self.repo_id}" + (f"@{self.revision}" if self.revision else "")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class OciSource:
    """A digest-pinned OCI artifact holding model files."""

    registry: str
    repository: str
    digest: str

    @property
    def reference(self) -> str:
        """``registry/repository@digest``, as ORAS takes it."""
        return f"{self.registry}/{self.repository}@{self.digest}"

    def __str__(self) -> str:
        return f"oci://{self.reference}"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PvcSource:
    """Weights already staged on a PersistentVolumeClaim, optionally in a sub-directory."""

    claim: str
    subpath: str | None = None

    def __str__(self) -> str:
        return f"pvc://{self.claim}" + (f"/{self.subpath}" if self.subpath else "")


ModelSource = HubSource | OciSource | PvcSource


def parse_source(uri: str) -> ModelSource:
    """Parse a model source URI; ``SourceError`` says what is wrong and which form is expected."""
    if not isinstance(uri, str):
        raise SourceError(f"model source must be a string, got {type(uri).__name__}")
    if len(uri) > MAX_URI_LENGTH:
        raise SourceError(f"model source URI longer than {MAX_URI_LENGTH} characters")
    scheme, sep, rest = uri.partition("://")
    if not sep:
        raise SourceError(
            f"invalid model source {uri!r}: expected hf://org/name, modelscope://org/name, "
            "oci://registry/repository@sha256:<digest> or pvc://claim[/subpath]"
        )
    if scheme in ("hf", "huggingface"):
        return _parse_hub("huggingface", uri, rest)
    if scheme == "modelscope":
        return _parse_hub("modelscope", uri, rest)
    if scheme == "oci":
        return _parse_oci(uri, rest)
    if scheme == "pvc":
        return _parse_pvc(uri, rest)
    raise SourceError(
        f"unsupported model source scheme {scheme!r} in {uri!r}: use hf://, huggingface://, modelscope://, "
        "oci:// or pvc://"
    )


def _parse_hub(hub: Literal["huggingface", "modelscope"], uri: str, rest: str) -> HubSource:
    repo, at, revision = rest.partition("@")
    parts = repo.split("/")
    if len(parts) != 2:
        raise SourceError(
            f"invalid model source {uri!r}: a hub source is <scheme>://<org>/<name>[@<revision>]"
        )
    org, name = parts
    for label, value in (("organization", org), ("model name", name)):
        if not _HUB_SEGMENT.fullmatch(value) or "--" in value or ".." in value:
            raise SourceError(
                f"invalid model source {uri!r}: {label} {value!r} must be 1-96 letters, digits, "
                "'-', '_' or '.', start and end with a letter or digit, and contain no '--' or '..'"
            )
    if at and (
        not _REVISION.fullmatch(revision) or ".." in revision or "//" in revision or revision.endswith("/")
    ):
        raise SourceError(
            f"invalid model source {uri!r}: revision {revision!r} must be a branch, tag or commit "
            "(letters, digits, '-', '_', '.', '/'; no '..')"
        )
    return HubSource(hub=hub, org=org, name=name, revision=revision if at else None)


def _parse_oci(uri: str, rest: str) -> OciSource:
    name, at, digest = rest.partition("@")
    registry, slash, repository = name.partition("/")
    if not slash or not registry or not repository:
        raise SourceError(
            f"invalid model source {uri!r}: expected oci://<registry>/<repository>@sha256:<digest>"
        )
    if not _REGISTRY.fullmatch(registry):
        raise SourceError(f"invalid model source {uri!r}: registry {registry!r} is not a host[:port]")
    last = repository.rsplit("/", 1)[-1]
    if ":" in last:
        raise SourceError(
            f"invalid model source {uri!r}: tags are not accepted (tag {last.split(':', 1)[1]!r}); "
            "pin the artifact by digest: oci://<registry>/<repository>@sha256:<64 hex>"
        )
    for component in repository.split("/"):
        if not _REPO_COMPONENT.fullmatch(component):
            raise SourceError(
                f"invalid model source {uri!r}: repository component {component!r} must be lowercase letters "
                "and digits separated by '.', '_', '__' or '-'"
            )
    if not at:
        raise SourceError(
            f"invalid model source {uri!r}: an OCI source must be pinned by digest: "
            "oci://<registry>/<repository>@sha256:<64 hex>"
        )
    if not _DIGEST.fullmatch(digest):
        raise SourceError(
            f"invalid model source {uri!r}: digest {digest!r} must be sha256:<64 lowercase hex characters>"
        )
    return OciSource(registry=registry, repository=repository, digest=digest)


def _parse_pvc(uri: str, rest: str) -> PvcSource:
    claim, slash, subpath = rest.partition("/")
    if len(claim) > 253 or not _CLAIM.fullmatch(claim):
        raise SourceError(
            f"invalid model source {uri!r}: claim {claim!r} must be a PersistentVolumeClaim name "
            "(lowercase letters, digits, '-' and '.')"
        )
    if not slash:
        return PvcSource(claim=claim)
    segments = subpath.split("/")
    for segment in segments:
        if segment in ("", ".", ".."):
            raise SourceError(
                f"invalid model source {uri!r}: subpath {subpath!r} must be a relative path without empty, "
                "'.' or '..' segments"
            )
        if not _PATH_SEGMENT.fullmatch(segment):
            raise SourceError(
                f"invalid model source {uri!r}: subpath {subpath!r} contains a backslash or control character"
            )
    return PvcSource(claim=claim, subpath=subpath)
