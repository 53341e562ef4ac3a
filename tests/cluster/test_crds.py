"""Our CRDs in the real API server.

Aspects:
- the generated CRDs (``noctaya crds``, the same as ``dist/crds``) are accepted: the server's CEL cost
  estimate is the verdict. The control: the same InferenceRuntime CRD with the old bound (256 args and
  env entries) is refused for its estimated rule cost, so this test does see that verdict;
- every valid document (``tests/api/data/valid``, every LLMService and InferenceRuntime in
  ``examples/``) is created; read back it carries exactly the defaults of the CRD, as the offline CRD
  check (``tests/api/conftest.CrdCheck``) computes them, and it parses to the same object as offline;
- every invalid document of ``tests/api/data/invalid.yaml`` that the table says the CRD refuses is
  refused by the server, at the field path and with the message ``noctaya validate`` gives (or the
  table's ``crdPath`` / ``crdMessage`` where it declares where a CEL rule sits). CEL cases: the same
  message. Schema cases: the server words these itself ("Unsupported value", "Required value"); the
  field path is the same, and an enum lists the same values. Status cases are written through the
  status subresource (a create drops status). Cases the table leaves to the offline checks
  (``crd: none``) are, when the server refuses them anyway (list-map keys, date-time), refused at that
  field. One test over all cases, listing every disagreement.
"""

from __future__ import annotations

import copy
import functools
import pathlib
import re
from typing import Any

import pytest
import yaml

from noctaya.api import crds, documents, inferenceruntime
from tests.api.conftest import CrdCheck
from tests.api.test_invalid_documents import CASES, build
from tests.cluster.kube import ApiError, Kube, wait

pytestmark = [pytest.mark.timeout(900), pytest.mark.xdist_group("cluster")]

ROOT = pathlib.Path(__file__).resolve().parents[2]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "/apis/serving.noctaya.io/v1alpha1"
PLURALS = {"LLMService": "llmservices", "InferenceRuntime": "inferenceruntimes"}


def _docs(paths: list[pathlib.Path]) -> list[dict[str, Any]]:
    out = []
    for path in paths:
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if isinstance(doc, dict) and doc.get("kind") in PLURALS:
                out.append(doc)
    return out


VALID = _docs(sorted((ROOT / "tests" / "api" / "data" / "valid").glob("*.yaml")))
EXAMPLES = _docs(sorted((ROOT / "examples").rglob("*.yaml")))


def collection(doc: dict[str, Any]) -> str:
    plural = PLURALS[doc["kind"]]
    if doc["kind"] == "InferenceRuntime":  # cluster-scoped: a namespace in metadata names no collection
        return f"{GROUP}/{plural}"
    return f"{GROUP}/namespaces/{doc.get('metadata', {}).get('namespace') or 'default'}/{plural}"


def ensure_namespace(kube: Kube, name: str) -> None:
    if not kube.exists(f"/api/v1/namespaces/{name}"):
        kube.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )


def create(kube: Kube, doc: dict[str, Any], *, dry_run: bool) -> Any:
    params = {"fieldManager": "noctaya-cluster-test", "fieldValidation": "Strict"}
    if dry_run:
        params["dryRun"] = "All"
    return kube.request("POST", collection(doc), body=doc, params=params)


# ------------------------------------------------------------------------------------ the CRDs themselves
def test_the_generated_crds_are_accepted_and_the_old_bound_is_refused_for_its_cel_cost(kube: Kube) -> None:
    for crd in crds.crds():
        assert (ROOT / "dist" / "crds" / crds.filename(crd)).read_text(encoding="utf-8") == crds.to_yaml(
            [crd]
        )
        name = crd["metadata"]["name"]
        live = kube.get(f"{CRDS}/{name}")  # installed by scripts/cluster.sh up from dist/crds
        conditions = {c["type"]: c["status"] for c in live["status"]["conditions"]}
        assert conditions.get("Established") == "True" and conditions.get("NamesAccepted") == "True", (
            conditions
        )
        # and the generator's output is accepted afresh (a dry-run create under another name)
        fresh = copy.deepcopy(crd)
        fresh["metadata"]["name"] = name.replace(".serving.noctaya.io", ".check.noctaya.io")
        fresh["spec"]["group"] = "check.noctaya.io"
        kube.create(CRDS, fresh, dry_run=True)

    old = copy.deepcopy(crds.inferenceruntime_crd())
    old["metadata"]["name"] = "inferenceruntimes.old.noctaya.io"
    old["spec"]["group"] = "old.noctaya.io"
    container = old["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "container"
    ]
    assert container["properties"]["args"]["maxItems"] == inferenceruntime.MAX_TEMPLATED_ITEMS
    container["properties"]["args"]["maxItems"] = 256
    container["properties"]["env"]["maxItems"] = 256
    with pytest.raises(ApiError) as refused:
        kube.create(CRDS, old, dry_run=True)
    assert refused.value.status == 422
    fields = {c.get("field", "") for c in refused.value.causes}
    assert any("properties[container].properties[args]" in f for f in fields), refused.value.causes
    assert any("properties[container].properties[env]" in f for f in fields), refused.value.causes
    assert all("cost" in c["message"] for c in refused.value.causes), refused.value.causes


# ------------------------------------------------------------------------------------ valid documents
@pytest.mark.parametrize("source", ["valid", "examples"])
def test_valid_documents_are_created_and_carry_the_crd_defaults(kube: Kube, source: str) -> None:
    docs = VALID if source == "valid" else EXAMPLES
    assert len(docs) >= 5
    checks = {crd["spec"]["names"]["kind"]: CrdCheck(crd) for crd in crds.crds()}
    for doc in docs:
        ensure_namespace(kube, doc["metadata"].get("namespace") or "default")
    created: list[str] = []
    try:
        for doc in docs:
            obj = copy.deepcopy(doc)
            obj.pop("status", None)  # the status subresource: a create ignores it
            path = f"{collection(obj)}/{obj['metadata']['name']}"
            if kube.exists(path):  # the same runtime in two sources
                kube.delete(path)
                wait(f"{path} gone", functools.partial(kube.exists, path), lambda e: not e, timeout=30)
            create(kube, obj, dry_run=False)
            created.append(path)
            live = kube.get(path)
            check = checks[obj["kind"]]
            expected = check.defaulted(obj)
            assert live["spec"] == expected["spec"], f"{path}: server defaults differ from the CRD check's"
            model = documents.KINDS[obj["kind"]]
            assert model.model_validate(live).spec == model.model_validate(obj).spec, path
    finally:
        for path in created:
            kube.delete(path)


# ------------------------------------------------------------------------------------ invalid documents
_ALTERNATIVES = re.compile(r"'([^']+)'")
#: Cases the offline CEL evaluator (cel-python) cannot decide; the API server's verdict is checked here.
EXTRA_CASES: list[dict[str, Any]] = [
    {
        "name": "stabilization-sub-millisecond",
        "base": "llmservice",
        "set": {"spec.scaling.scaleDownStabilization": "1s1ns"},
        "expect": {
            "path": "spec.scaling.scaleDownStabilization",
            "message": "whole number of seconds between 0s and 1h",
        },
        "crd": "cel",
    },
]


def _server_path(field: str) -> str:
    return "" if field in ("", "<nil>") else field


def _refusal(kube: Kube, doc: dict[str, Any]) -> ApiError | None:
    """The server's answer to creating ``doc`` (dry run); a status is written through /status."""
    status = doc.pop("status", None)
    try:
        if status is None:
            create(kube, doc, dry_run=True)
            return None
        # the status subresource: a create drops status; the object is created, then its status written
        created = create(kube, doc, dry_run=False)
        path = f"{collection(doc)}/{doc['metadata']['name']}"
        try:
            kube.request(
                "PUT",
                f"{path}/status",
                body={**created, "status": status},
                params={"fieldValidation": "Strict", "dryRun": "All"},
            )
        finally:
            kube.delete(path)
        return None
    except ApiError as exc:
        return exc


def _disagreement(case: dict[str, Any], exc: ApiError) -> str | None:
    """Why the server's refusal disagrees with ``noctaya validate``'s, or None when it agrees."""
    expect = case["expect"]
    # CEL rules are reported at the node that carries them (the table's crdPath: the root for the
    # metadata.name rules); a schema error at the field itself, where noctaya validate reports it
    path = case.get("crdPath", expect["path"]) if case["crd"] == "cel" else expect["path"]
    if exc.status == 400 and expect["message"] == "unknown field":
        wanted = f'unknown field "{path}"'
        return None if wanted in str(exc.body.get("message")) else f"expected {wanted}; server: {exc}"
    at_path = [c.get("message", "") for c in exc.causes if _server_path(c.get("field", "")) == path]
    if exc.status != 422 or not at_path:
        seen = [f"{c.get('field', '')}: {c.get('message', '')}" for c in exc.causes] or [str(exc)]
        return f"expected a refusal at {path!r}; server: {seen}"
    if case["crd"] == "cel":
        message = case.get("crdMessage", expect["message"])
        return (
            None
            if any(message in m for m in at_path)
            else f"expected {message!r} at {path!r}; server: {at_path}"
        )
    # schema: the server words these itself; an enum lists the same values as noctaya validate
    alternatives = _ALTERNATIVES.findall(expect["message"]) if " or " in expect["message"] else []
    if alternatives:
        wanted = "supported values: " + ", ".join(f'"{a}"' for a in alternatives)
        return (
            None if any(wanted in m for m in at_path) else f"expected {wanted} at {path!r}; server: {at_path}"
        )
    return None


def test_invalid_documents_are_refused_at_the_same_field_with_the_same_message(kube: Kube) -> None:
    ensure_namespace(kube, "ai")
    disagreements: list[str] = []
    refused = 0
    offline_only_refused: list[str] = []
    cases = [*CASES, *EXTRA_CASES]
    for case in cases:
        doc = build(case)
        if doc["kind"] == "LLMService":
            ensure_namespace(kube, doc.get("metadata", {}).get("namespace") or "default")
        exc = _refusal(kube, doc)
        if case["crd"] == "none":
            # not decided by the offline CRD check; when the server refuses it, it is at that field
            if exc is not None:
                offline_only_refused.append(case["name"])
                path = case["expect"]["path"]
                fields = [_server_path(c.get("field", "")) for c in exc.causes]
                if not any(f == path or f.startswith((f"{path}[", f"{path}.")) for f in fields):
                    disagreements.append(f"{case['name']}: expected a refusal at {path!r}; server: {exc}")
            continue
        if exc is None:
            disagreements.append(f"{case['name']}: accepted by the server")
            continue
        refused += 1
        why = _disagreement(case, exc)
        if why:
            disagreements.append(f"{case['name']}: {why}")
    assert not disagreements, f"{len(disagreements)} disagreement(s):\n" + "\n".join(disagreements)
    assert refused == len([c for c in cases if c["crd"] != "none"])
    # the server also checks what the offline CRD check leaves out (list-map keys, date-time formats)
    assert {"status-duplicate-condition-type", "status-timestamp-without-zone"} <= set(offline_only_refused)
