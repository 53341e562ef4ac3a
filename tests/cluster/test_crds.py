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
  table's ``crdPath`` / ``crdMessage`` where it declares the server's wording); the cases the table
  marks as checked offline only (``crd: none``) are accepted. One test over all cases, listing every
  disagreement.
"""

from __future__ import annotations

import copy
import functools
import pathlib
from typing import Any

import pytest
import yaml

from noctaya.api import crds, documents, inferenceruntime
from tests.api.conftest import CrdCheck
from tests.api.test_invalid_documents import CASES, build
from tests.cluster.kube import ApiError, Kube, wait

pytestmark = pytest.mark.timeout(900)

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
    namespace = doc.get("metadata", {}).get("namespace")
    return f"{GROUP}/namespaces/{namespace}/{plural}" if namespace else f"{GROUP}/{plural}"


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
    assert any("spec.container.args" in f for f in fields), refused.value.causes
    assert any("spec.container.env" in f for f in fields), refused.value.causes
    assert all("cost" in c["message"] for c in refused.value.causes), refused.value.causes


# ------------------------------------------------------------------------------------ valid documents
@pytest.mark.parametrize("source", ["valid", "examples"])
def test_valid_documents_are_created_and_carry_the_crd_defaults(kube: Kube, source: str) -> None:
    docs = VALID if source == "valid" else EXAMPLES
    assert len(docs) >= 5
    checks = {crd["spec"]["names"]["kind"]: CrdCheck(crd) for crd in crds.crds()}
    for doc in docs:
        namespace = doc["metadata"].get("namespace")
        if namespace:
            ensure_namespace(kube, namespace)
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
            assert model.model_validate({**live, "status": None} if "status" in live else live) == (
                model.model_validate(obj)
            ), path
    finally:
        for path in created:
            kube.delete(path)


# ------------------------------------------------------------------------------------ invalid documents
def _expected(case: dict[str, Any]) -> tuple[str, str]:
    return case.get("crdPath", case["expect"]["path"]), case.get("crdMessage", case["expect"]["message"])


def test_invalid_documents_are_refused_at_the_same_field_with_the_same_message(kube: Kube) -> None:
    ensure_namespace(kube, "ai")
    disagreements: list[str] = []
    checked = 0
    for case in CASES:
        doc = build(case)
        if doc.get("metadata", {}).get("namespace"):
            ensure_namespace(kube, doc["metadata"]["namespace"])
        try:
            create(kube, doc, dry_run=True)
        except ApiError as exc:
            if case["crd"] == "none":
                disagreements.append(f"{case['name']}: offline-only case refused by the server: {exc}")
                continue
            path, message = _expected(case)
            causes = exc.causes
            if exc.status != 422 or not any(
                c.get("field", "") == path and message in c.get("message", "") for c in causes
            ):
                seen = [f"{c.get('field', '')}: {c.get('message', '')}" for c in causes] or [str(exc)]
                disagreements.append(f"{case['name']}: expected {path!r}: {message!r}; server: {seen}")
            checked += 1
        else:
            if case["crd"] != "none":
                disagreements.append(f"{case['name']}: accepted by the server")
    assert not disagreements, f"{len(disagreements)} disagreement(s):\n" + "\n".join(disagreements)
    assert checked == len([c for c in CASES if c["crd"] != "none"])
